package dev.claimq.longpoll;

import dev.claimq.telemetry.QueueMetrics;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Long-polling claims parked per queue. A parked claim holds no thread and no database connection:
 * only a callback here. A signal wakes one waiter of the queue (first come, first served); a waiter
 * that then wins an item wakes the next, so a burst of items drains through the waiters without
 * waking all of them for every item.
 */
@ApplicationScoped
public class ParkedClaims {
  private final Map<String, Queue<UniEmitter<? super Boolean>>> waiting = new ConcurrentHashMap<>();

  ParkedClaims(QueueMetrics metrics) {
    metrics.parked(this, ParkedClaims::parked);
  }

  /** Completes with true when woken, false when the timeout passes first. */
  public Uni<Boolean> await(String queue, Duration timeout) {
    return Uni.createFrom()
        .<Boolean>emitter(
            emitter -> {
              // compute and computeIfPresent are atomic per key, so a waiter is never added to a
              // queue that is being dropped from the map.
              waiting.compute(
                  queue,
                  (q, waiters) -> {
                    Queue<UniEmitter<? super Boolean>> parked =
                        waiters != null ? waiters : new ConcurrentLinkedQueue<>();
                    parked.add(emitter);
                    return parked;
                  });
              emitter.onTermination(() -> leave(queue, emitter));
            })
        .ifNoItem()
        .after(timeout)
        .recoverWithItem(false);
  }

  /** Wakes the longest-waiting claim of the queue, if any. */
  public void wakeOne(String queue) {
    Queue<UniEmitter<? super Boolean>> waiters = waiting.get(queue);
    if (waiters == null) {
      return;
    }
    UniEmitter<? super Boolean> next = waiters.poll();
    if (next != null) {
      next.complete(true);
    }
  }

  /** Wakes one waiter of every queue that has any: the fallback for lost or missing signals. */
  public void wakeOneOfEach() {
    waiting.keySet().forEach(this::wakeOne);
  }

  private void leave(String queue, UniEmitter<? super Boolean> emitter) {
    waiting.computeIfPresent(
        queue,
        (q, waiters) -> {
          waiters.remove(emitter);
          return waiters.isEmpty() ? null : waiters;
        });
  }

  /** How many claims are parked, over all queues. */
  public int parked() {
    return waiting.values().stream().mapToInt(Queue::size).sum();
  }
}
