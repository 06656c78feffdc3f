package dev.claimq.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class BackoffTest {
  private final Backoff backoff = new Backoff(Duration.ofSeconds(10), Duration.ofHours(1));

  @Test
  void the_ceiling_doubles_with_each_attempt_up_to_the_cap() {
    assertThat(backoff.ceilingSeconds(1)).isEqualTo(10);
    assertThat(backoff.ceilingSeconds(2)).isEqualTo(20);
    assertThat(backoff.ceilingSeconds(3)).isEqualTo(40);
    assertThat(backoff.ceilingSeconds(9)).isEqualTo(2560);
    assertThat(backoff.ceilingSeconds(10)).isEqualTo(3600);
    assertThat(backoff.ceilingSeconds(100)).isEqualTo(3600);
  }

  @Test
  void each_delay_lies_between_half_and_all_of_its_ceiling() {
    SplittableRandom random = new SplittableRandom(42);
    for (int attempt = 1; attempt <= 100; attempt++) {
      long ceiling = backoff.ceilingSeconds(attempt);
      for (int i = 0; i < 200; i++) {
        assertThat(backoff.delaySeconds(attempt, random)).isBetween(ceiling / 2, ceiling);
      }
    }
  }

  @Test
  void delays_are_spread_not_identical() {
    SplittableRandom random = new SplittableRandom(7);
    long distinct =
        java.util.stream.IntStream.range(0, 100)
            .mapToLong(i -> backoff.delaySeconds(5, random))
            .distinct()
            .count();
    assertThat(distinct).isGreaterThan(10);
  }

  @Test
  void a_base_under_a_second_or_above_the_cap_is_refused() {
    assertThatThrownBy(() -> new Backoff(Duration.ofMillis(500), Duration.ofHours(1)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new Backoff(Duration.ofMinutes(2), Duration.ofMinutes(1)))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
