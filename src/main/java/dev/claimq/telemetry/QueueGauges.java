package dev.claimq.telemetry;

import dev.claimq.store.QueueStats;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import jakarta.inject.Singleton;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The queues' state as last sampled: a scrape reads these from memory, so it costs the same however
 * large the table. Queues past the label bound are folded into {@code _other}: their counts summed,
 * their oldest wait the longest, their paused gauge the number paused.
 */
@Singleton
public class QueueGauges {
  private static final List<String> STATES = List.of("held", "pending", "sending", "failed");

  private final QueueMetrics metrics;
  private final MultiGauge items;
  private final MultiGauge paused;
  private final MultiGauge oldest;
  private final MultiGauge dueSoon;
  private final MultiGauge oldestHeld;

  QueueGauges(MeterRegistry registry, QueueMetrics metrics) {
    this.metrics = metrics;
    this.items =
        MultiGauge.builder("claimq.items")
            .description("Live items per queue and state, as last sampled")
            .register(registry);
    this.paused =
        MultiGauge.builder("claimq.queue.paused")
            .description("1 while the queue's claims are paused")
            .register(registry);
    this.oldest =
        MultiGauge.builder("claimq.oldest.due.pending.age.seconds")
            .description("How long the oldest due pending item has waited; 0 if none")
            .register(registry);
    this.dueSoon =
        MultiGauge.builder("claimq.items.due.next.minute")
            .description("Pending items that come due within the next minute")
            .register(registry);
    this.oldestHeld =
        MultiGauge.builder("claimq.oldest.held.age.seconds")
            .description("How long the oldest held item has waited for approval; 0 if none")
            .register(registry);
  }

  /** Replaces every queue gauge with this sample; queues no longer listed disappear. */
  public void show(List<QueueStats> sample) {
    // held, pending, sending, failed (as STATES), due soon, paused
    Map<String, long[]> counts = new TreeMap<>();
    Map<String, Double> ages = new TreeMap<>();
    Map<String, Double> heldAges = new TreeMap<>();
    for (QueueStats queue : sample) {
      String label = metrics.label(queue.queue());
      long[] sum = counts.computeIfAbsent(label, l -> new long[6]);
      sum[0] += queue.held();
      sum[1] += queue.pending();
      sum[2] += queue.sending();
      sum[3] += queue.failed();
      sum[4] += queue.dueNextMinute();
      sum[5] += queue.paused() ? 1 : 0;
      // A paused queue's work is expected to wait: its own series says so beside its pause, but
      // among the folded ones it would hide which queue waits, so _other's age leaves it out.
      boolean hidden = queue.paused() && label.equals(QueueMetrics.OTHER);
      ages.merge(label, hidden ? 0 : orZero(queue.oldestDuePendingAgeSeconds()), Math::max);
      heldAges.merge(label, orZero(queue.oldestHeldAgeSeconds()), Math::max);
    }
    List<MultiGauge.Row<?>> itemRows = new ArrayList<>();
    List<MultiGauge.Row<?>> pausedRows = new ArrayList<>();
    List<MultiGauge.Row<?>> oldestRows = new ArrayList<>();
    List<MultiGauge.Row<?>> dueRows = new ArrayList<>();
    List<MultiGauge.Row<?>> heldRows = new ArrayList<>();
    counts.forEach(
        (queue, sum) -> {
          for (int state = 0; state < STATES.size(); state++) {
            itemRows.add(
                MultiGauge.Row.of(Tags.of("queue", queue, "state", STATES.get(state)), sum[state]));
          }
          dueRows.add(MultiGauge.Row.of(Tags.of("queue", queue), sum[4]));
          pausedRows.add(MultiGauge.Row.of(Tags.of("queue", queue), sum[5]));
          oldestRows.add(MultiGauge.Row.of(Tags.of("queue", queue), ages.get(queue)));
          heldRows.add(MultiGauge.Row.of(Tags.of("queue", queue), heldAges.get(queue)));
        });
    items.register(itemRows, true);
    paused.register(pausedRows, true);
    oldest.register(oldestRows, true);
    dueSoon.register(dueRows, true);
    oldestHeld.register(heldRows, true);
  }

  private static double orZero(Double seconds) {
    return seconds == null ? 0 : seconds;
  }
}
