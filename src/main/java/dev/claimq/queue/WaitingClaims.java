package dev.claimq.queue;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.Optional;

/**
 * Claim-next with a wait: tries at once, and while there is nothing to claim parks the request in
 * {@link ClaimWaiters} (no thread, no connection) until an item may be claimable or time is up.
 */
@ApplicationScoped
public class WaitingClaims {
  private final WorkService work;
  private final ClaimWaiters waiters;

  WaitingClaims(WorkService work, ClaimWaiters waiters) {
    this.work = work;
    this.waiters = waiters;
  }

  public Uni<Optional<WorkService.Claim>> claimNext(
      String queue, String worker, Integer leaseSeconds, Duration wait) {
    long deadline = System.nanoTime() + wait.toNanos();
    return attempt(queue, worker, leaseSeconds, deadline);
  }

  private Uni<Optional<WorkService.Claim>> attempt(
      String queue, String worker, Integer leaseSeconds, long deadline) {
    return Uni.createFrom()
        .item(() -> work.claimNext(queue, worker, leaseSeconds))
        .runSubscriptionOn(Infrastructure.getDefaultWorkerPool())
        .onItem()
        .transformToUni(
            claim -> {
              if (claim.isPresent()) {
                waiters.wakeOne(queue); // there may be more: let the next waiter look
                return Uni.createFrom().item(claim);
              }
              long remaining = deadline - System.nanoTime();
              if (remaining <= 0) {
                return Uni.createFrom().item(claim);
              }
              return waiters
                  .await(queue, Duration.ofNanos(remaining))
                  .onItem()
                  .transformToUni(
                      woken ->
                          woken
                              ? attempt(queue, worker, leaseSeconds, deadline)
                              : Uni.createFrom().item(Optional.<WorkService.Claim>empty()));
            });
  }
}
