package dev.claimq.longpoll;

import dev.claimq.config.ClaimqConfig;
import dev.claimq.queue.BatchService;
import dev.claimq.queue.WorkService;
import dev.claimq.store.Item;
import dev.claimq.store.SchemaWatch;
import dev.claimq.telemetry.QueueMetrics;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
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
  private final int maxWaitingPerKey;
  private final SchemaWatch schema;

  /** Claims with a wait in progress on this instance, by the name of the key that sent them. */
  private final Map<String, AtomicInteger> waitingByKey = new ConcurrentHashMap<>();

  ClaimOrWait(
      WorkService work,
      BatchService batches,
      ParkedClaims waiters,
      QueueMetrics metrics,
      ClaimqConfig config,
      SchemaWatch schema) {
    this.work = work;
    this.batches = batches;
    this.waiters = waiters;
    this.metrics = metrics;
    this.maxWaitingPerKey = config.longPoll().maxWaitingPerKey();
    this.schema = schema;
  }

  /**
   * A claim with a wait that its key may not start: the key has maxWaitingPerKey of them in
   * progress on this instance already, and nothing was due when it looked once without waiting.
   */
  public static final class TooManyWaiting extends RuntimeException {
    TooManyWaiting(String key, int bound) {
      super(
          "The key '"
              + key
              + "' already has "
              + bound
              + " claims waiting on this instance (claimq.long-poll.max-waiting-per-key), and"
              + " nothing was due: claim again after a backoff. Nothing was claimed.",
          null,
          false,
          false); // an answer, not a failure: no trace
    }
  }

  /**
   * Up to {@code max} items (one when max is null), waiting up to {@code wait} for the first. A key
   * may have maxWaitingPerKey claims waiting on this instance: past that, a claim looks once
   * without waiting and, when nothing is due, fails with {@link TooManyWaiting}. A client that
   * opens long polls without end (a loop that never waits for its last one) so costs a bounded
   * number of connections, and other keys' workers are not held back.
   */
  public Uni<List<Item>> claimNext(
      String key, String queue, String worker, Integer leaseSeconds, Integer max, Duration wait) {
    if (wait.isZero()) {
      return claimNext(queue, worker, leaseSeconds, max, wait);
    }
    AtomicInteger waiting = waitingByKey.computeIfAbsent(key, name -> new AtomicInteger());
    if (waiting.incrementAndGet() > maxWaitingPerKey) {
      waiting.decrementAndGet();
      return claimNext(queue, worker, leaseSeconds, max, Duration.ZERO)
          .invoke(
              claims -> {
                if (claims.isEmpty()) {
                  throw new TooManyWaiting(key, maxWaitingPerKey);
                }
              });
    }
    // Counted down however it ends: an item, time up, a failure, or the client gone.
    return claimNext(queue, worker, leaseSeconds, max, wait)
        .onTermination()
        .invoke(waiting::decrementAndGet);
  }

  private Uni<List<Item>> claimNext(
      String queue, String worker, Integer leaseSeconds, Integer max, Duration wait) {
    Supplier<List<Item>> attempt =
        max == null
            ? () -> work.claimNext(queue, worker, leaseSeconds).stream().toList()
            : () -> batches.claimNext(queue, worker, leaseSeconds, max);
    long start = System.nanoTime();
    Claim claim = new Claim(queue, attempt, start + wait.toNanos());
    Uni<List<Item>> answer =
        wait.isZero()
            ? attempt(claim)
            : lookWhen(waiters.awaitUnlessWoken(queue, wait, claim.ticket()), claim);
    return answer
        .invoke(
            claims -> {
              if (claims.isEmpty()) {
                metrics.claimEmpty(queue);
              }
              if (!wait.isZero()) {
                metrics.longPollWaited(Duration.ofNanos(System.nanoTime() - start));
              }
            })
        // Closed before the cancellation travels up the chain (this operator runs its callback
        // first), so a look or a park that the cancellation misses still sees it.
        .onCancellation()
        .invoke(() -> waiters.close(queue, claim.ticket()));
  }

  /** One claim-next: what it looks for, until when, and its standing with the waiters. */
  private record Claim(
      String queue, Supplier<List<Item>> attempt, long deadline, ParkedClaims.Ticket ticket) {
    Claim(String queue, Supplier<List<Item>> attempt, long deadline) {
      this(queue, attempt, deadline, new ParkedClaims.Ticket());
    }
  }

  /** Whether the service has begun to stop, which ends every wait at once (ParkedClaims). */
  public boolean stopping() {
    return waiters.stopping();
  }

  /**
   * Says that a claim made elsewhere (in a finish's transaction) took an item of the queue: as
   * after a claim of its own, the next parked waiter looks, since there may be more.
   */
  public void claimedElsewhere(String queue) {
    waiters.wakeOne(queue);
  }

  private Uni<List<Item>> attempt(Claim claim) {
    String queue = claim.queue();
    long lookBegan = waiters.wakes(queue);
    Supplier<List<Item>> look =
        () -> {
          if (schema.newerMigration().isPresent()) {
            // A newer release migrated the schema while this claim waited: it claims nothing
            // with this release's statements (the caller answers 503 schema-newer).
            return List.of();
          }
          if (!waiters.beforeLook(queue, claim.ticket())) {
            // Its client went away while this look waited for a worker thread. An item claimed
            // now would sit leased to nobody until its lease ran out; whatever woke this claim
            // has gone to the next one instead.
            return List.of();
          }
          return claim.attempt().get();
        };
    return Uni.createFrom()
        .item(look)
        .runSubscriptionOn(Infrastructure.getDefaultWorkerPool())
        .onItem()
        .transformToUni(
            claims -> {
              if (!claims.isEmpty()) {
                waiters.wakeOne(queue); // there may be more: let the next waiter look
                return Uni.createFrom().item(claims);
              }
              long remaining = claim.deadline() - System.nanoTime();
              // Timers take whole milliseconds (and refuse less than one): under one is time up.
              // Nor does a claim park again once the schema is newer: it would wait for nothing.
              if (remaining < 1_000_000 || schema.newerMigration().isPresent()) {
                return Uni.createFrom().item(claims);
              }
              return lookWhen(
                  waiters.await(queue, Duration.ofNanos(remaining), lookBegan, claim.ticket()),
                  claim);
            });
  }

  /**
   * Attempts when the wait answers true; false is time up (or the client gone), nothing claimed,
   * and a wake-up that reached the claim as its time ran out goes to the next parked claim.
   */
  private Uni<List<Item>> lookWhen(Uni<Boolean> wait, Claim claim) {
    return wait.onItem()
        .transformToUni(
            look -> {
              if (look) {
                return attempt(claim);
              }
              waiters.close(claim.queue(), claim.ticket());
              return Uni.createFrom().item(List.of());
            });
  }
}
