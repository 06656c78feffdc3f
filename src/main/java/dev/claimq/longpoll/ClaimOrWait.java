package dev.claimq.longpoll;

import dev.claimq.queue.BatchService;
import dev.claimq.queue.WorkService;
import dev.claimq.store.Item;
import dev.claimq.telemetry.QueueMetrics;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;

/**
 * Claim-next with a wait: tries at once, and while there is nothing to claim parks the request in
 * {@link ParkedClaims} (no thread, no connection) until an item may be claimable or time is up. A
 * claim with a wait that arrives while others are parked on a queue found empty, with nothing new
 * signalled since, parks without trying: it would find nothing either.
 */
@ApplicationScoped
public class ClaimOrWait {
  private final WorkService work;
  private final BatchService batches;
  private final ParkedClaims waiters;
  private final QueueMetrics metrics;

  ClaimOrWait(WorkService work, BatchService batches, ParkedClaims waiters, QueueMetrics metrics) {
    this.work = work;
    this.batches = batches;
    this.waiters = waiters;
    this.metrics = metrics;
  }

  /** Up to {@code max} items (one when max is null), waiting up to {@code wait} for the first. */
  public Uni<List<Item>> claimNext(
      String queue, String worker, Integer leaseSeconds, Integer max, Duration wait) {
    Supplier<List<Item>> attempt =
        max == null
            ? () -> work.claimNext(queue, worker, leaseSeconds).stream().toList()
            : () -> batches.claimNext(queue, worker, leaseSeconds, max);
    long start = System.nanoTime();
    long deadline = start + wait.toNanos();
    Uni<List<Item>> answer =
        wait.isZero()
            ? attempt(queue, attempt, deadline)
            : lookWhen(waiters.awaitUnlessWoken(queue, wait), queue, attempt, deadline);
    return answer.invoke(
        claims -> {
          if (claims.isEmpty()) {
            metrics.claimEmpty(queue);
          }
          if (!wait.isZero()) {
            metrics.longPollWaited(Duration.ofNanos(System.nanoTime() - start));
          }
        });
  }

  /**
   * Says that a claim made elsewhere (in a finish's transaction) took an item of the queue: as
   * after a claim of its own, the next parked waiter looks, since there may be more.
   */
  public void claimedElsewhere(String queue) {
    waiters.wakeOne(queue);
  }

  private Uni<List<Item>> attempt(String queue, Supplier<List<Item>> attempt, long deadline) {
    long lookBegan = waiters.wakes(queue);
    return Uni.createFrom()
        .item(attempt)
        .runSubscriptionOn(Infrastructure.getDefaultWorkerPool())
        .onItem()
        .transformToUni(
            claims -> {
              if (!claims.isEmpty()) {
                waiters.wakeOne(queue); // there may be more: let the next waiter look
                return Uni.createFrom().item(claims);
              }
              long remaining = deadline - System.nanoTime();
              // Timers take whole milliseconds (and refuse less than one): under one is time up.
              if (remaining < 1_000_000) {
                return Uni.createFrom().item(claims);
              }
              return lookWhen(
                  waiters.await(queue, Duration.ofNanos(remaining), lookBegan),
                  queue,
                  attempt,
                  deadline);
            });
  }

  /** Attempts when the wait answers true; false is time up, with nothing claimed. */
  private Uni<List<Item>> lookWhen(
      Uni<Boolean> wait, String queue, Supplier<List<Item>> attempt, long deadline) {
    return wait.onItem()
        .transformToUni(
            look -> look ? attempt(queue, attempt, deadline) : Uni.createFrom().item(List.of()));
  }
}
