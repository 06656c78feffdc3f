package dev.claimq;

import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.quarkus.test.junit.QuarkusTestProfile;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * The spans the service exports, kept in memory for the tests to read, the way the Quarkus
 * OpenTelemetry guide wires a test exporter: a SpanExporter bean, which also takes the place of the
 * OTLP exporter. Spans reach it only under the profile {@link On}, which turns the SDK on.
 */
@ApplicationScoped
public class InMemorySpans {
  @Produces
  @Singleton
  InMemorySpanExporter exporter() {
    return InMemorySpanExporter.create();
  }

  /**
   * The exported spans once {@code ready} holds of them: spans end as their responses go out, and
   * are exported a few milliseconds later.
   */
  public static List<SpanData> until(
      InMemorySpanExporter exported, Predicate<List<SpanData>> ready, String what) {
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (true) {
      List<SpanData> spans = List.copyOf(exported.getFinishedSpanItems());
      if (ready.test(spans)) {
        return spans;
      }
      if (System.nanoTime() > deadline) {
        List<String> names =
            spans.stream()
                .map(s -> s.getName() + " " + s.getTraceId() + "/" + s.getSpanId())
                .toList();
        throw new AssertionError("no " + what + " within 10 s; exported: " + names);
      }
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
  }

  /** Traces on, as a deployment with a collector has them. */
  public static class On implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      // Exported within milliseconds of ending, so a test need not wait for the batch.
      return Map.of(
          "quarkus.otel.sdk.disabled", "false", "quarkus.otel.bsp.schedule.delay", "10ms");
    }
  }
}
