package dev.claimq.longpoll;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Who else listens, on a clock of the test's own. */
class OtherInstancesTest {
  private final OtherInstances others = new OtherInstances();

  @Test
  void an_instance_is_new_when_first_heard_and_present_until_it_says_goodbye() {
    assertThat(others.present(0)).isZero();
    assertThat(others.heard("a", 0)).as("new").isTrue();
    assertThat(others.heard("a", 10)).as("known already").isFalse();
    assertThat(others.heard("b", 20)).isTrue();
    assertThat(others.present(30)).isEqualTo(2);

    others.gone("a");
    assertThat(others.present(40)).isEqualTo(1);
    assertThat(others.heard("a", 50)).as("back: new again, so it is answered").isTrue();
  }

  @Test
  void an_instance_not_heard_for_three_heartbeats_and_a_second_is_gone() {
    long heardAt = 1_000;
    others.heard("killed", heardAt);
    others.heard("alive", heardAt);
    for (long now = heardAt; now <= heardAt + OtherInstances.PRESENT_NANOS; now += 1_000_000) {
      if (now - heardAt >= OtherInstances.HEARTBEAT_NANOS * 3) {
        others.heard("alive", now); // still saying it is here
      }
      assertThat(others.present(now)).isEqualTo(2);
    }
    assertThat(others.present(heardAt + OtherInstances.PRESENT_NANOS + 1)).isEqualTo(1);
    assertThat(others.heard("killed", heardAt + OtherInstances.PRESENT_NANOS + 2)).isTrue();
  }
}
