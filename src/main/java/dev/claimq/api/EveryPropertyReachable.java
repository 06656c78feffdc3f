package dev.claimq.api;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.validation.Path;
import jakarta.validation.TraversableResolver;
import java.lang.annotation.ElementType;

/**
 * Bean Validation's traversable resolver for the service (Quarkus hands a bean of this type to the
 * validator factory). With Hibernate ORM present, the default asks JPA, for every constrained
 * property of every request body, whether it is loaded, so that validation never loads a lazy
 * association. Nothing validated here has one: request bodies are records, and no entity carries a
 * constraint. That question was 0.7% of the drain's CPU samples (docs/profile.md).
 */
@ApplicationScoped
public class EveryPropertyReachable implements TraversableResolver {
  @Override
  public boolean isReachable(
      Object bean,
      Path.Node property,
      Class<?> rootBeanType,
      Path pathToProperty,
      ElementType elementType) {
    return true;
  }

  @Override
  public boolean isCascadable(
      Object bean,
      Path.Node property,
      Class<?> rootBeanType,
      Path pathToProperty,
      ElementType elementType) {
    return true;
  }
}
