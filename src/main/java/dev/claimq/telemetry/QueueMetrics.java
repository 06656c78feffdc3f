package dev.claimq.telemetry;

import dev.claimq.config.ClaimqConfig;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import jakarta.inject.Singleton;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * claimq's flow meters: what happened to work, per queue. The queue is the one free label, and a
 * bounded one: the first {@code claimq.metrics.max-queues} queues seen get their own, the rest
 * share {@code _other}, so a service with thousands of queues cannot swamp the metrics store.
 */
@Singleton
public class QueueMetrics {
  /** The label every queue past the bound shares. */
  public static final String OTHER = "_other";

  private static final Duration[] WAIT_BUCKETS =
      millis(10, 50, 100, 500, 1_000, 5_000, 10_000, 30_000, 60_000, 300_000, 900_000, 3_600_000);
  private static final Duration[] PROCESSING_BUCKETS =
      millis(10, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000, 300_000);
  private static final Duration[] LONG_POLL_BUCKETS = millis(10, 100, 1_000, 5_000, 10_000, 20_000);

  private final MeterRegistry registry;
  private final int maxQueues;
  private final Set<String> named = ConcurrentHashMap.newKeySet();
  private final Set<String> folded = ConcurrentHashMap.newKeySet(); // queues labelled _other

  // The meters of the request path, kept once registered: building a meter's id and looking it up
  // in the registry on every claim and complete was 1.6% of the drain's CPU (docs/profile.md).
  // Bounded as the labels are: a queue label, and a tag of a few fixed values.
  private record CounterKey(String name, String label, String tag, String value) {}

  private final Map<CounterKey, Counter> counters = new ConcurrentHashMap<>();

  // Each counter's HELP text, as the README's table of metrics says it.
  private static final Map<String, String> COUNTED =
      Map.of(
          "claimq.claims",
              "Claims: won an item, 204 on an empty queue, or 204 on a lost claim by id",
          "claimq.completes", "Completes that finished an item",
          "claimq.fails", "Fails: back to pending (retried) or failed for an operator (final)",
          "claimq.lease.expiries", "Claims the lease reaper ended",
          "claimq.stale.reports", "Heartbeats, intents and reports answered 409",
          "claimq.releases", "Claims handed back unused",
          "claimq.late.successes", "Completes with an ended claim's token, recorded",
          "claimq.duplicate.sends", "Sends that went out twice, with different references",
          "claimq.operator.actions", "Operators' actions that took effect",
          "claimq.maintenance.rows", "Rows each background run changed");

  private Counter.Builder counter(String name) {
    // A counter missing from COUNTED fails at its first count, in tests, not without HELP.
    return Counter.builder(name).description(Objects.requireNonNull(COUNTED.get(name), name));
  }

  private final Map<String, Timer> waits = new ConcurrentHashMap<>();
  private final Map<String, Timer> processings = new ConcurrentHashMap<>();

  @jakarta.inject.Inject
  QueueMetrics(MeterRegistry registry, ClaimqConfig config) {
    this(registry, config.metrics().maxQueues());
  }

  QueueMetrics(MeterRegistry registry, int maxQueues) {
    this.registry = registry;
    this.maxQueues = maxQueues;
  }

  /** The queue's label: its name while the bound allows, else {@link #OTHER}. */
  public String label(String queue) {
    if (named.contains(queue)) {
      return queue;
    }
    if (folded.contains(queue)) {
      return OTHER;
    }
    synchronized (named) {
      if (named.contains(queue)) {
        return queue;
      }
      if (named.size() < maxQueues) {
        named.add(queue);
        startAtZero(queue);
        return queue;
      }
      if (folded.isEmpty()) {
        startAtZero(OTHER);
      }
      folded.add(queue);
      return OTHER;
    }
  }

  /**
   * The counters alerts watch exist at 0 from a queue's first event, so that the first duplicate
   * send or expiry is an increase Prometheus can see, not a series appearing.
   */
  private void startAtZero(String label) {
    for (String name :
        List.of("claimq.duplicate.sends", "claimq.lease.expiries", "claimq.late.successes")) {
      counter(name).tag("queue", label).register(registry);
    }
    counter("claimq.fails").tag("queue", label).tag("outcome", "final").register(registry);
  }

  /** Items claimed, each with how long it had been due. */
  public void claimed(String queue, Duration dueFor) {
    count("claimq.claims", queue, "result", "won", 1);
    waits
        .computeIfAbsent(
            label(queue),
            label ->
                Timer.builder("claimq.queue.wait")
                    .description("From due to claimed")
                    .tags("queue", label)
                    .serviceLevelObjectives(WAIT_BUCKETS)
                    .register(registry))
        .record(dueFor.isNegative() ? Duration.ZERO : dueFor);
  }

  /**
   * A claim-next that found nothing to claim (204). It takes no label of its own: any name can be
   * asked for, and a worker polling a misspelt queue would use the named labels up. A queue not yet
   * labelled by anything else counts under {@link #OTHER}.
   */
  public void claimEmpty(String queue) {
    countAs("claimq.claims", named.contains(queue) ? queue : OTHER, "result", "empty", 1);
  }

  /** A claim by id that another worker won, or of an item not claimable (204). */
  public void claimLost(String queue) {
    count("claimq.claims", queue, "result", "lost", 1);
  }

  /** An item completed, held for {@code held} since its claim. */
  public void completed(String queue, Duration held) {
    count("claimq.completes", queue, null, null, 1);
    processing(queue, held);
  }

  /** An item failed: back to pending for a retry, or failed for good. */
  public void failed(String queue, boolean retried, Duration held) {
    count("claimq.fails", queue, "outcome", retried ? "retried" : "final", 1);
    processing(queue, held);
  }

  /** Claims the reaper ended because their lease ran out. */
  public void leasesExpired(String queue, int count) {
    count("claimq.lease.expiries", queue, null, null, count);
  }

  /** A heartbeat, intent or report answered 409: the claim was no longer current. */
  public void staleReport(String queue) {
    count("claimq.stale.reports", queue, null, null, 1);
  }

  public void released(String queue) {
    count("claimq.releases", queue, null, null, 1);
  }

  /** An ended claim's complete recorded; {@code duplicate} when the item was done already. */
  public void lateSuccess(String queue, boolean duplicate) {
    count("claimq.late.successes", queue, null, null, 1);
    if (duplicate) {
      duplicateSend(queue);
    }
  }

  /**
   * A send that went out twice: a late success on an item done with another reference, or a claim
   * told that an earlier one's send went through that finished with a send of its own.
   */
  public void duplicateSend(String queue) {
    count("claimq.duplicate.sends", queue, null, null, 1);
  }

  /** An operator's retry, cancel, resolve, pause, resume or policy change. */
  public void operatorAction(String queue, String action) {
    count("claimq.operator.actions", queue, "action", action, 1);
  }

  /** Long-poll claims parked now, read at each scrape. */
  public <T> void parked(T parked, java.util.function.ToDoubleFunction<T> count) {
    io.micrometer.core.instrument.Gauge.builder("claimq.longpolls.parked", parked, count)
        .description("Long-poll claims parked now")
        .register(registry);
  }

  /** How long a long-poll claim waited before it was answered. */
  public void longPollWaited(Duration waited) {
    Timer.builder("claimq.longpoll.wait")
        .description("How long a long-poll claim waited")
        .serviceLevelObjectives(LONG_POLL_BUCKETS)
        .register(registry)
        .record(waited);
  }

  /**
   * A background task's age: seconds since it last ran to the end on this instance (since the
   * instance started, before its first run), read from the JVM's monotonic clock as it is scraped.
   * Not a timestamp: compared with Prometheus's clock, a timestamp from a clock set wrong would
   * raise an alert for ever, or hide a stalled task.
   */
  public void maintenanceScheduled(String task, java.util.function.DoubleSupplier secondsSinceRun) {
    io.micrometer.core.instrument.Gauge.builder(
            "claimq.maintenance.since.last.run",
            secondsSinceRun,
            java.util.function.DoubleSupplier::getAsDouble)
        .strongReference(true) // the supplier is held by nothing else
        .description(
            "Seconds since the background task last ran to the end (since the start, before its"
                + " first run)")
        .baseUnit("seconds")
        .tag("task", task)
        .register(registry);
  }

  /**
   * One run of a background task: how long it took, and the rows it changed. The label is "task",
   * not "job": Prometheus keeps "job" for its own scrape jobs.
   */
  public void maintenanceRan(String task, Duration took, long rows) {
    Timer.builder("claimq.maintenance.run")
        .description("One run of a background job")
        .tag("task", task)
        .register(registry)
        .record(took);
    counter("claimq.maintenance.rows").tag("task", task).register(registry).increment(rows);
  }

  private void processing(String queue, Duration held) {
    if (held == null) {
      return; // a repeat or a batch entry without its claim's time: nothing new to measure
    }
    processings
        .computeIfAbsent(
            label(queue),
            label ->
                Timer.builder("claimq.processing")
                    .description("From claimed to finished")
                    .tags("queue", label)
                    .serviceLevelObjectives(PROCESSING_BUCKETS)
                    .register(registry))
        .record(held.isNegative() ? Duration.ZERO : held);
  }

  private void count(String name, String queue, String tag, String value, int amount) {
    if (amount == 0) {
      return;
    }
    countAs(name, label(queue), tag, value, amount);
  }

  private void countAs(String name, String label, String tag, String value, int amount) {
    counters
        .computeIfAbsent(
            new CounterKey(name, label, tag, value),
            key -> {
              Counter.Builder counter = counter(key.name()).tag("queue", key.label());
              if (key.tag() != null) {
                counter.tag(key.tag(), key.value());
              }
              return counter.register(registry);
            })
        .increment(amount);
  }

  private static Duration[] millis(long... millis) {
    return java.util.Arrays.stream(millis).mapToObj(Duration::ofMillis).toArray(Duration[]::new);
  }
}
