package dev.claimq.longpoll;

import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.smallrye.mutiny.subscription.Cancellable;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A wake-up and a hang-up that reach the same parked claim at once, on two real threads, many times
 * over. Whichever comes first, the wake-up must end in exactly one look: the woken claim's, or,
 * when it has closed, the next parked claim's. A wake-up lost there leaves an item waiting for the
 * fallback poll while claims are parked on its queue.
 */
@QuarkusTest
@TestProfile(LostWakeUpsTest.NoFallbackPoll.class)
class LostWakeUpsTest {
  private static final int ROUNDS = 20_000;

  public static class NoFallbackPoll implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      // Only this test's own wake-ups: a fallback poll would wake claims on its own schedule.
      return Map.of("claimq.long-poll.fallback-interval", "off");
    }
  }

  @Inject ParkedClaims waiters;

  /** One round: claim A parked first, B behind it; A is woken and closed at the same moment. */
  private final class Round {
    final String queue = uniqueQueue("wake-race");
    final ParkedClaims.Ticket first = new ParkedClaims.Ticket();
    final ParkedClaims.Ticket second = new ParkedClaims.Ticket();
    final AtomicInteger looks = new AtomicInteger();
    final Cancellable firstClaim = park(first);
    final Cancellable secondClaim = park(second);

    /** Parks a claim that, when woken, looks as ClaimOrWait's claims do: only if still open. */
    private Cancellable park(ParkedClaims.Ticket ticket) {
      return waiters
          .await(queue, Duration.ofSeconds(60), waiters.wakes(queue), ticket)
          .subscribe()
          .with(
              woken -> {
                if (woken && waiters.beforeLook(queue, ticket)) {
                  looks.incrementAndGet();
                }
              });
    }

    /** What a client's hang-up does to a claim: close its ticket, then cancel inward. */
    void hangUpFirst() {
      waiters.close(queue, first);
      firstClaim.cancel();
    }

    void end() {
      waiters.close(queue, second);
      secondClaim.cancel();
    }
  }

  @Test
  void a_wake_up_that_meets_a_hang_up_ends_in_exactly_one_look() throws Exception {
    int parkedBefore = waiters.parked();
    // Two threads that spin rather than block between rounds, so that they start each round
    // within a fraction of a microsecond of each other; each then waits a random few spins more,
    // which sweeps the hang-up across the steps of the wake-up, from before it to after it.
    AtomicInteger go = new AtomicInteger(-1);
    AtomicInteger done = new AtomicInteger(-1);
    Round[] round = new Round[ROUNDS];
    Thread hangUp =
        new Thread(
            () -> {
              for (int i = 0; i < ROUNDS; i++) {
                long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (go.get() < i) {
                  if (System.nanoTime() > giveUp) {
                    return; // the test failed and stopped: do not spin on for the next tests
                  }
                  Thread.onSpinWait();
                }
                spin();
                round[i].hangUpFirst();
                done.set(i);
              }
            },
            "hang-up");
    hangUp.setDaemon(true);
    hangUp.start();

    int lost = 0;
    int doubled = 0;
    for (int i = 0; i < ROUNDS; i++) {
      round[i] = new Round();
      go.set(i);
      spin();
      waiters.wakeOne(round[i].queue);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (done.get() < i) {
        assertThat(System.nanoTime()).as("round %d's hang-up done", i).isLessThan(deadline);
        Thread.onSpinWait();
      }
      int looks = round[i].looks.get();
      lost += looks == 0 ? 1 : 0;
      doubled += looks > 1 ? 1 : 0;
      round[i].end();
      round[i] = null;
    }

    assertThat(lost).as("rounds whose wake-up reached no look, of %d", ROUNDS).isZero();
    assertThat(doubled).as("rounds whose wake-up made two looks, of %d", ROUNDS).isZero();
    assertThat(waiters.parked()).as("parked after every round ended").isEqualTo(parkedBefore);
  }

  private static void spin() {
    for (int spins = ThreadLocalRandom.current().nextInt(32); spins > 0; spins--) {
      Thread.onSpinWait();
    }
  }
}
