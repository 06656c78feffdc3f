package dev.claimq.longpoll;

import dev.claimq.store.SchemaWatch;
import dev.claimq.telemetry.QueueMetrics;
import io.quarkus.runtime.ShutdownDelayInitiatedEvent;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;

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
 *
 * <p>A wake-up is not lost to a claim that ends as it is woken (its client hangs up, its wait runs
 * out): each claim has a {@link Ticket}, the wake-up is handed to the ticket before the claim hears
 * of it, and a claim that ends without looking hands a wake-up it holds to the next parked claim.
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

  /** Set once the service begins to stop: nothing parks from then on. */
  private volatile boolean stopping;

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
    final Ticket ticket;

    Parked(UniEmitter<? super Boolean> emitter, Ticket ticket) {
      this.emitter = emitter;
      this.ticket = ticket;
    }
  }

  /**
   * One long-polling claim's standing, over all its parks and looks: whether it has closed (its
   * client went away or its time is up: it will not look again), and whether it holds a wake-up
   * that no look of its has used. Closing and waking each set their own flag before they read the
   * other's, so at least one of them sees both, and the one that takes the wake-up hands it on.
   */
  public static final class Ticket {
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicBoolean holdsWake = new AtomicBoolean();

    /** Whether the claim has closed: it will not look again. */
    public boolean closed() {
      return closed.get();
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
   * Completes with true when woken, false when the timeout passes first or the ticket has closed. A
   * claim that gets false, or none, must {@link #close} its ticket.
   */
  public Uni<Boolean> await(String queue, Duration timeout, long lookBegan, Ticket ticket) {
    return park(queue, timeout, lookBegan, false, ticket);
  }

  /**
   * Parks a claim that has not looked yet, if nothing has woken the queue since a look that found
   * nothing began while claims were parked on it; otherwise completes with true at once: look now.
   * Completes with false when the timeout passes first or the ticket has closed.
   */
  public Uni<Boolean> awaitUnlessWoken(String queue, Duration timeout, Ticket ticket) {
    return park(queue, timeout, -1, true, ticket);
  }

  /**
   * Called before each look of a claim: takes the wake-up its ticket holds, if any, and says
   * whether to look. False when the ticket has closed; a wake-up it held has gone to the next
   * parked claim of the queue.
   */
  public boolean beforeLook(String queue, Ticket ticket) {
    boolean woken = ticket.holdsWake.getAndSet(false);
    if (ticket.closed()) {
      if (woken) {
        wakeOne(queue);
      }
      return false;
    }
    return true;
  }

  /**
   * Closes a claim's ticket (its client went away, or its time is up): it will not look again, and
   * a wake-up it holds, or is handed from now on, goes to the next parked claim of the queue.
   */
  public void close(String queue, Ticket ticket) {
    ticket.closed.set(true);
    if (ticket.holdsWake.getAndSet(false)) {
      wakeOne(queue);
    }
  }

  private Uni<Boolean> park(
      String queue, Duration timeout, long lookBegan, boolean unlessWoken, Ticket ticket) {
    return Uni.createFrom()
        .<Boolean>emitter(
            emitter -> {
              boolean[] lookNow = {false};
              Parked claim = new Parked(emitter, ticket);
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
              // parking, so that a cancellation either finds this waiter or is seen here; and so
              // is a stop that began as it parked.
              if (ticket.closed() || stopping) {
                emitter.complete(false);
              }
            })
        .ifNoItem()
        .after(timeout)
        .recoverWithItem(false);
  }

  /** Wakes the longest-waiting claim of the queue that has not closed, if any. */
  public void wakeOne(String queue) {
    wakes.incrementAndGet(stripe(queue));
    for (Parked next = takeOldest(queue); next != null; next = takeOldest(queue)) {
      Ticket ticket = next.ticket;
      ticket.holdsWake.set(true);
      if (!ticket.closed()) {
        // Outside the map's lock: completing runs the claim's callbacks, which may park it again.
        // If the claim closes before this reaches it, its close hands the wake-up on.
        next.emitter.complete(true);
        return;
      }
      if (!ticket.holdsWake.getAndSet(false)) {
        return; // its close took the wake-up, and handed it on
      }
    }
  }

  private Parked takeOldest(String queue) {
    Parked[] oldest = new Parked[1];
    waiting.computeIfPresent(
        queue,
        (q, waiters) -> {
          Iterator<Parked> parked = waiters.parked.iterator();
          if (parked.hasNext()) {
            oldest[0] = parked.next();
            parked.remove();
            parkedCount.decrementAndGet();
          }
          return waiters;
        });
    return oldest[0];
  }

  /**
   * As the service begins to stop, before it waits for the requests in flight: every parked claim
   * ends at once, told that its time is up, and none parks from now on. Else the last requests
   * would be long polls, each holding the stop up for the rest of its wait (up to 20 s), past the
   * grace a container platform gives.
   */
  void stop(@Observes ShutdownDelayInitiatedEvent stop) {
    stopping = true;
    waiting.keySet().forEach(this::releaseAll);
  }

  /**
   * Once a newer release has migrated the schema, every parked claim ends at once, as if its time
   * were up (the API then answers a claim 503 schema-newer): a claim parked before would otherwise
   * claim an item afterwards. A look under way claims nothing either (ClaimOrWait).
   */
  void newerSchema(@Observes SchemaWatch.NewerSchema newer) {
    waiting.keySet().forEach(this::releaseAll);
  }

  /** Whether the service has begun to stop (see {@link #stop}). */
  public boolean stopping() {
    return stopping;
  }

  private void releaseAll(String queue) {
    for (Parked next = takeOldest(queue); next != null; next = takeOldest(queue)) {
      next.emitter.complete(false);
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
