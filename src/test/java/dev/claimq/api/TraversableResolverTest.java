package dev.claimq.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import jakarta.validation.ValidatorFactory;
import org.junit.jupiter.api.Test;

/**
 * The validator asks no one whether a property is loaded: the factory's resolver is ours, not the
 * JPA one that Hibernate ORM's presence selects by default (0.7% of the drain's CPU).
 */
@QuarkusTest
class TraversableResolverTest {
  @Inject ValidatorFactory validators;

  @Test
  void the_validator_factory_uses_the_resolver_that_reaches_every_property() {
    assertThat(validators.getTraversableResolver()).isInstanceOf(EveryPropertyReachable.class);
  }
}
