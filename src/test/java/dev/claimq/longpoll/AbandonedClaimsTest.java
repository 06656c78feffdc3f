package dev.claimq.longpoll;

import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.item;
import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import dev.claimq.AsAdmin;
import dev.claimq.Unannounced;
import dev.claimq.store.Item;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import io.smallrye.mutiny.subscription.Cancellable;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * A claim-next whose client goes away while its look waits for a worker thread. The cancellation
 * then passes the chain before the look has subscribed, and does not reach it; the claim must still
 * neither stay parked nor claim an item for nobody. With one worker thread, held by the test, that
 * moment lasts as long as the test likes, and a task queued behind the look runs only once the look
 * and whatever it did next are over.
 */
@QuarkusTest
@TestProfile(AbandonedClaimsTest.OneWorkerThread.class)
class AbandonedClaimsTest extends AsAdmin {

  public static class OneWorkerThread implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      return Map.of(
          "quarkus.thread-pool.core-threads", "1",
          "quarkus.thread-pool.max-threads", "1",
          // Only this test's own wake-ups: no fallback poll looking on its own schedule.
          "claimq.long-poll.fallback-interval", "off");
    }
  }

  @Inject ClaimOrWait claims;
  @Inject ParkedClaims waiters;
  @Inject DataSource dataSource;

  @Test
  void a_long_poll_abandoned_before_its_look_does_not_park_after_it() throws Exception {
    String queue = uniqueQueue("abandoned");
    int before = waiters.parked();

    CountDownLatch release = holdTheWorkerThread();
    AtomicReference<List<Item>> answered = new AtomicReference<>();
    Cancellable call =
        claims
            .claimNext("test", queue, "gone", null, null, Duration.ofSeconds(30))
            .subscribe()
            .with(answered::set);
    call.cancel(); // the client hangs up; its look is queued behind the held thread
    release.countDown();
    afterQueuedWork();

    // Without its client, the look found nothing and must not wait 30 s for nobody.
    assertThat(waiters.parked()).as("parked claims").isEqualTo(before);
    assertThat(answered.get()).as("a cancelled call is not answered").isNull();
  }

  @Test
  void a_claim_abandoned_before_its_look_leaves_the_item_to_the_next_worker() throws Exception {
    String queue = uniqueQueue("abandoned-item");
    String id = enqueued(queue, "k", 1);

    CountDownLatch release = holdTheWorkerThread();
    claims
        .claimNext("test", queue, "gone", null, null, Duration.ZERO)
        .subscribe()
        .with(x -> {})
        .cancel();
    release.countDown();
    afterQueuedWork();

    // Claimed for a client that is not there, it would sit leased until its lease ran out.
    item(id).then().statusCode(200).body("state", equalTo("pending"));
  }

  @Test
  void a_wake_up_taken_by_an_abandoned_claim_passes_to_the_next_one() throws Exception {
    String queue = uniqueQueue("abandoned-wake");
    int before = waiters.parked();
    Cancellable first =
        claims
            .claimNext("test", queue, "gone", null, null, Duration.ofSeconds(30))
            .subscribe()
            .with(x -> {});
    awaitParked(before + 1);
    CompletableFuture<List<Item>> second =
        claims
            .claimNext("test", queue, "alive", null, null, Duration.ofSeconds(30))
            .subscribeAsCompletionStage();
    awaitParked(before + 2);
    String id = Unannounced.item(dataSource, queue, "k");

    // A signal for the item wakes the claim parked first, whose client then hangs up.
    CountDownLatch release = holdTheWorkerThread();
    waiters.wakeOne(queue);
    first.cancel();
    release.countDown();

    // The wake-up is not lost with it: the next claim looks and finds the item.
    List<Item> claimed = second.get(10, TimeUnit.SECONDS);
    assertThat(claimed).extracting(item -> item.id.toString()).containsExactly(id);
    assertThat(waiters.parked()).isEqualTo(before);
  }

  private void awaitParked(int count) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (waiters.parked() < count && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertThat(waiters.parked()).as("parked claims").isEqualTo(count);
  }

  /** Occupies the only worker thread until the latch is released. */
  private static CountDownLatch holdTheWorkerThread() throws InterruptedException {
    CountDownLatch holding = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Infrastructure.getDefaultWorkerPool()
        .execute(
            () -> {
              holding.countDown();
              try {
                release.await(30, TimeUnit.SECONDS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
    assertThat(holding.await(10, TimeUnit.SECONDS)).as("holding the worker thread").isTrue();
    // The only one: a task behind it waits (else the look would run at once, on another thread,
    // and the moment this test is about would not arise).
    CountDownLatch behind = new CountDownLatch(1);
    Infrastructure.getDefaultWorkerPool().execute(behind::countDown);
    assertThat(behind.await(300, TimeUnit.MILLISECONDS)).as("ran beside the held thread").isFalse();
    return release;
  }

  /** Returns once the one worker thread has run everything queued before this call. */
  private static void afterQueuedWork() throws InterruptedException {
    CountDownLatch reached = new CountDownLatch(1);
    Infrastructure.getDefaultWorkerPool().execute(reached::countDown);
    assertThat(reached.await(30, TimeUnit.SECONDS)).as("the queued work ran").isTrue();
  }
}
