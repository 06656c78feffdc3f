package dev.claimq.telemetry;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The queue label is bounded: a service with many queues cannot swamp the metrics store. */
class QueueLabelTest {

  @Test
  void queues_past_the_bound_share_the_other_label_and_the_first_ones_keep_theirs() {
    QueueMetrics metrics = new QueueMetrics(new SimpleMeterRegistry(), 3);

    List<String> labels = IntStream.range(0, 5).mapToObj(n -> metrics.label("q" + n)).toList();

    assertThat(labels).containsExactly("q0", "q1", "q2", "_other", "_other");
    assertThat(metrics.label("q1")).as("a named queue stays named").isEqualTo("q1");
    assertThat(metrics.label("q4")).isEqualTo("_other");
  }

  @Test
  void an_empty_claim_of_a_queue_with_no_label_takes_none() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    QueueMetrics metrics = new QueueMetrics(registry, 2);
    metrics.label("known");

    for (int n = 0; n < 5; n++) {
      metrics.claimEmpty("misspelt-" + n);
    }
    metrics.claimEmpty("known");

    assertThat(metrics.label("real"))
        .as("a label was left for a queue with work")
        .isEqualTo("real");
    assertThat(registry.get("claimq.claims").tag("queue", "_other").counter().count()).isEqualTo(5);
    assertThat(registry.get("claimq.claims").tag("queue", "known").counter().count()).isEqualTo(1);
  }

  @Test
  void the_gauges_fold_queues_past_the_bound_into_one_series() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    QueueMetrics metrics = new QueueMetrics(registry, 1);
    QueueGauges gauges = new QueueGauges(registry, metrics);

    gauges.show(
        List.of(
            new dev.claimq.store.QueueStats("a", 0, 1, 0, 0, 0, 5.0, null, false),
            new dev.claimq.store.QueueStats("b", 0, 2, 1, 0, 0, 9.0, null, true),
            new dev.claimq.store.QueueStats("c", 0, 3, 0, 4, 1, 2.0, null, true),
            new dev.claimq.store.QueueStats("d", 0, 1, 0, 0, 0, 4.0, null, false)));

    assertThat(gauge(registry, "claimq.items", "a", "pending")).isEqualTo(1);
    assertThat(gauge(registry, "claimq.items", "_other", "pending")).isEqualTo(6);
    assertThat(gauge(registry, "claimq.items", "_other", "failed")).isEqualTo(4);
    assertThat(registry.get("claimq.queue.paused").tag("queue", "_other").gauge().value())
        .as("the number of paused queues among them")
        .isEqualTo(2);
    assertThat(
            registry
                .get("claimq.oldest.due.pending.age.seconds")
                .tag("queue", "_other")
                .gauge()
                .value())
        .as("the longest wait among those not paused")
        .isEqualTo(4);
    assertThat(registry.find("claimq.items").tag("queue", "b").gauges()).isEmpty();
  }

  private static double gauge(
      SimpleMeterRegistry registry, String name, String queue, String state) {
    return registry.get(name).tag("queue", queue).tag("state", state).gauge().value();
  }
}
