package dev.claimq.longpoll;

import dev.claimq.telemetry.QueueMetrics;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.BooleanSupplier;

/**
 * Long-polling claims parked per queue. A parked claim holds no thread and no database connection:
 * only a callback here. A signal wakes one waiter of the queue (first come, first served); a waiter
 * that then wins an item wakes the next, so a burst of items drains through the waiters without
 * waking all of them for every item.
 *
 * <p>It also remembers, for a queue with parked claims, whether anything has woken that queue since
 * a look at the database last began and found nothing. While nothing has, another look would find
 * nothing the signals have not announced, so a long poll that arrives then parks without one: a
 * crowd of long polls coming back together (their waits ran out together, or their workers
 * restarted together) costs one look, not one each. What no signal announces, items that come due
 * later or signals that were lost, every parked claim finds through the fallback poll.
 */
@ApplicationScoped
public class ParkedClaims {
  // Wake-ups are counted per stripe of queue names, so that memory stays bounded whatever queues
  // clients name. Two queues sharing a stripe only see each other's wake-ups as their own, which
  // sends a long poll to the database when it did not need to: never the other way round.
  private static final int STRIPES = 1024;

  private final Map<String, Waiters> waiting = new ConcurrentHashMap<>();
  private final AtomicLongArray wakes = new AtomicLongArray(STRIPES);
  private final AtomicInteger parkedCount = new AtomicInteger();

  /**
   * The claims parked on one queue, oldest first, and the stripe's wake count when its last empty
   * look began. Read and written only inside the map's compute for this queue, which is atomic per
   * key; a linked set, so that a claim that leaves (its wait ran out, its client went away) is
   * found in constant time, however many wait beside it.
   */
  private static final class Waiters {
    final LinkedHashSet<Parked> parked = new LinkedHashSet<>();
    long emptySince = -1;
  }

  /** One parked claim: equal only to itself, whatever its emitter's equals says. */
  private static final class Parked {
    final UniEmitter<? super Boolean> emitter;

    Parked(UniEmitter<? super Boolean> emitter) {
      this.emitter = emitter;
    }
  }

  ParkedClaims(QueueMetrics metrics) {
    metrics.parked(this, ParkedClaims::parked);
  }

  /**
   * Where a look at the queue stands among its wake-ups: take it before the look, and hand it to
   * {@link #await} when the look found nothing.
   */
  public long wakes(String queue) {
    return wakes.get(stripe(queue));
  }

  /**
   * Parks a claim whose look, begun at {@code lookBegan} (from {@link #wakes}), found nothing.
   * Completes with true when woken, false when the timeout passes first or the claim is {@code
   * abandoned} (its client went away).
   */
  public Uni<Boolean> await(
      String queue, Duration timeout, long lookBegan, BooleanSupplier abandoned) {
    return park(queue, timeout, lookBegan, false, abandoned);
  }

  /**
   * Parks a claim that has not looked yet, if nothing has woken the queue since a look that found
   * nothing began while claims were parked on it; otherwise completes with true at once: look now.
   * Completes with false when the timeout passes first or the claim is {@code abandoned}.
   */
  public Uni<Boolean> awaitUnlessWoken(String queue, Duration timeout, BooleanSupplier abandoned) {
    return park(queue, timeout, -1, true, abandoned);
  }

  private Uni<Boolean> park(
      String queue,
      Duration timeout,
      long lookBegan,
      boolean unlessWoken,
      BooleanSupplier abandoned) {
    return Uni.createFrom()
        .<Boolean>emitter(
            emitter -> {
              boolean[] lookNow = {false};
              Parked claim = new Parked(emitter);
              // compute and computeIfPresent are atomic per key, so a waiter is never added to a
              // queue that is being dropped from the map, and a wake-up (which takes its waiter
              // inside computeIfPresent, after counting itself) either counts before this reads
              // the count, or finds this waiter parked.
              waiting.compute(
                  queue,
                  (q, waiters) -> {
                    if (unlessWoken
                        && (waiters == null || waiters.emptySince != wakes.get(stripe(q)))) {
                      lookNow[0] = true;
                      return waiters;
                    }
                    Waiters parked = waiters != null ? waiters : new Waiters();
                    parked.emptySince = Math.max(parked.emptySince, lookBegan);
                    parked.parked.add(claim);
                    parkedCount.incrementAndGet();
                    return parked;
                  });
              if (lookNow[0]) {
                emitter.complete(true);
                return;
              }
              emitter.onTermination(() -> leave(queue, claim));
              // A cancellation does not always reach a claim that parks again after a look: it
              // can pass the chain while that look waits for a worker thread. Checked after
              // parking, so that a cancellation either finds this waiter or is seen here.
              if (abandoned.getAsBoolean()) {
                emitter.complete(false);
              }
            })
        .ifNoItem()
        .after(timeout)
        .recoverWithItem(false);
  }

  /** Wakes the longest-waiting claim of the queue, if any. */
  public void wakeOne(String queue) {
    wakes.incrementAndGet(stripe(queue));
    Parked[] next = new Parked[1];
    waiting.computeIfPresent(
        queue,
        (q, waiters) -> {
          Iterator<Parked> oldest = waiters.parked.iterator();
          if (oldest.hasNext()) {
            next[0] = oldest.next();
            oldest.remove();
            parkedCount.decrementAndGet();
          }
          return waiters;
        });
    // Outside the map's lock: completing runs the claim's callbacks, which may park it again.
    if (next[0] != null) {
      next[0].emitter.complete(true);
    }
  }

  /** Wakes one waiter of every queue that has any: the fallback for lost or missing signals. */
  public void wakeOneOfEach() {
    waiting.keySet().forEach(this::wakeOne);
  }

  private void leave(String queue, Parked claim) {
    waiting.computeIfPresent(
        queue,
        (q, waiters) -> {
          if (waiters.parked.remove(claim)) { // false when a wake-up took it already
            parkedCount.decrementAndGet();
          }
          return waiters.parked.isEmpty() ? null : waiters;
        });
  }

  /** How many claims are parked, over all queues. */
  public int parked() {
    return parkedCount.get();
  }

  private static int stripe(String queue) {
    return Math.floorMod(queue.hashCode(), STRIPES);
  }
}
