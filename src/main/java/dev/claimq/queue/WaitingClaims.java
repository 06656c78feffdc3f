package dev.claimq.queue;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;

/**
 * Claim-next with a wait: tries at once, and while there is nothing to claim parks the request in
 * {@link ClaimWaiters} (no thread, no connection) until an item may be claimable or time is up.
 */
@ApplicationScoped
public class WaitingClaims {
  private final WorkService work;
  private final BatchService batches;
  private final ClaimWaiters waiters;

  WaitingClaims(WorkService work, BatchService batches, ClaimWaiters waiters) {
    this.work = work;
    this.batches = batches;
    this.waiters = waiters;
  }

  /** Up to {@code max} items (one when max is null), waiting up to {@code wait} for the first. */
  public Uni<List<WorkService.Claim>> claimNext(
      String queue, String worker, Integer leaseSeconds, Integer max, Duration wait) {
    Supplier<List<WorkService.Claim>> attempt =
        max == null
            ? () -> work.claimNext(queue, worker, leaseSeconds).stream().toList()
            : () -> batches.claimNext(queue, worker, leaseSeconds, max);
    return attempt(queue, attempt, System.nanoTime() + wait.toNanos());
  }

  private Uni<List<WorkService.Claim>> attempt(
      String queue, Supplier<List<WorkService.Claim>> attempt, long deadline) {
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
              return waiters
                  .await(queue, Duration.ofNanos(remaining))
                  .onItem()
                  .transformToUni(
                      woken ->
                          woken
                              ? attempt(queue, attempt, deadline)
                              : Uni.createFrom().item(List.<WorkService.Claim>of()));
            });
  }
}
