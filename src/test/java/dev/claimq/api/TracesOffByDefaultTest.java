package dev.claimq.api;

import static dev.claimq.Api.claim;
import static dev.claimq.Api.complete;
import static dev.claimq.Api.json;
import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import dev.claimq.AsAdmin;
import dev.claimq.InMemorySpans;
import dev.claimq.LogCapture;
import io.prometheus.client.exemplars.ExemplarSampler;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The shipped configuration exports nothing and logs nothing about a collector: here the OTLP
 * endpoint points at a listener of the test's own, which counts the connections it gets, and only
 * the test's in-memory exporter (which would take the OTLP exporter's place) is left out.
 */
@QuarkusTest
@TestProfile(TracesOffByDefaultTest.Shipped.class)
class TracesOffByDefaultTest extends AsAdmin {
  private static final String PORT = "traces-test.collector-port";

  public static class Shipped implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      return Map.of(
          "quarkus.otel.exporter.otlp.endpoint",
          "http://127.0.0.1:" + collectorPort(),
          // Were export on, it would be tried within milliseconds of a span's end.
          "quarkus.otel.bsp.schedule.delay",
          "10ms",
          "quarkus.arc.exclude-types",
          InMemorySpans.class.getName());
    }
  }

  private static ServerSocket collector;
  private static final AtomicInteger connections = new AtomicInteger();

  /** A free port, the same one for the profile and the test (they may not share a class). */
  static synchronized int collectorPort() {
    if (System.getProperty(PORT) == null) {
      try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
        System.setProperty(PORT, Integer.toString(probe.getLocalPort()));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return Integer.getInteger(PORT);
  }

  @BeforeAll
  static void listen() throws IOException {
    collector = new ServerSocket(collectorPort(), 50, InetAddress.getLoopbackAddress());
    Thread accept =
        new Thread(
            () -> {
              while (!collector.isClosed()) {
                try {
                  collector.accept().close(); // an exporter would log each hang-up
                  connections.incrementAndGet();
                } catch (IOException closed) {
                  return;
                }
              }
            },
            "not-a-collector");
    accept.setDaemon(true);
    accept.start();
  }

  @AfterAll
  static void close() throws IOException {
    collector.close();
  }

  @Inject Optional<ExemplarSampler> exemplars;

  @Test
  void with_traces_off_the_metrics_look_for_no_trace_to_point_at() {
    // What the Prometheus registry is given: with no sampler, no timer or counter looks for the
    // current span on each observation (there is none to find). TracesTest shows exemplars with
    // traces on.
    assertThat(exemplars).isEmpty();
  }

  @Test
  void requests_with_traced_items_send_nothing_to_a_collector_and_log_nothing_about_one()
      throws Exception {
    String traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    try (LogCapture log = LogCapture.start(Level.WARNING)) {
      String queue = uniqueQueue("untraced");
      for (int i = 0; i < 5; i++) {
        Response created =
            json()
                .header("traceparent", traceparent)
                .body(Map.of("dedupeKey", "k" + i, "payload", i))
                .post("/v1/queues/{q}/items", queue);
        // Stored and handed over all the same: the agent's trace goes on in the worker.
        created.then().statusCode(201).body("traceparent", equalTo(traceparent));
        String id = created.path("id");
        Response claimed = claim(id, Map.of());
        claimed.then().statusCode(200).body("traceparent", equalTo(traceparent));
        complete(id, Map.of("claimToken", claimed.path("claimToken"))).then().statusCode(200);
      }
      Thread.sleep(1_000); // ample for a 10 ms batch delay and a connect to a local port

      assertThat(connections.get()).as("connections to the OTLP endpoint").isZero();
      assertThat(log.records())
          .extracting(LogCapture::format)
          .filteredOn(line -> line.contains("opentelemetry") || line.contains("xport"))
          .isEmpty();
    }
  }
}
