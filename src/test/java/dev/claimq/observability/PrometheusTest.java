package dev.claimq.observability;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.claimq.Api;
import dev.claimq.AsAdmin;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A real Prometheus, run as its own process, scrapes the service's /q/metrics every second (with no
 * API key, as operators will configure it) and loads docs/prometheus-alerts.yml: what it stores can
 * be queried back, the rules evaluate with health ok, and every dashboard expression is PromQL that
 * Prometheus accepts.
 */
@QuarkusTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PrometheusTest extends AsAdmin {
  private static final Duration PATIENCE = Duration.ofSeconds(15);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String SCRAPE_JOB = "claimq";

  // Grafana fills these in before it sends a panel's query.
  private static final Map<String, String> GRAFANA_VARIABLES =
      Map.of("$queue", ".*", "$__rate_interval", "1m", "$__range", "5m");

  private final HttpClient http = HttpClient.newHttpClient();
  private Path work;
  private Process prometheus;
  private URI api;

  @TestHTTPResource("/")
  URI base;

  @BeforeAll
  void startPrometheus() throws Exception {
    String binary = PrometheusTools.require("prometheus");
    work = Files.createTempDirectory("prometheus-test");
    int port = freePort();
    api = URI.create("http://127.0.0.1:" + port + "/");
    Path config = work.resolve("prometheus.yml");
    Files.writeString(
        config,
        """
        global:
          scrape_interval: 1s
          evaluation_interval: 1s
        rule_files:
          - %s
        scrape_configs:
          - job_name: %s
            metrics_path: /q/metrics
            static_configs:
              - targets: ["127.0.0.1:%d"]
        """
            .formatted(ObservabilityDocs.ALERTS.toAbsolutePath(), SCRAPE_JOB, base.getPort()));
    prometheus =
        new ProcessBuilder(
                binary,
                "--config.file=" + config,
                "--storage.tsdb.path=" + work.resolve("data"),
                "--web.listen-address=127.0.0.1:" + port,
                "--log.level=warn")
            .redirectErrorStream(true)
            .redirectOutput(work.resolve("prometheus.log").toFile())
            .start();
    await("Prometheus to be ready", () -> get("-/ready").statusCode() == 200);
  }

  @AfterAll
  void stopPrometheus() throws Exception {
    if (prometheus != null) {
      prometheus.destroy();
      if (!prometheus.waitFor(10, TimeUnit.SECONDS)) {
        prometheus.destroyForcibly().waitFor();
      }
    }
    if (work != null) {
      try (Stream<Path> files = Files.walk(work)) {
        files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
      }
    }
  }

  @Test
  void prometheus_scrapes_the_service_without_a_key_and_answers_for_its_requests()
      throws Exception {
    Api.enqueued(Api.uniqueQueue("prometheus"), "k", 1);

    JsonNode up = await("a successful scrape", () -> query("up{job=\"claimq\"} == 1"), hasResult());
    assertThat(up.path(0).path("metric").path("instance").asText())
        .isEqualTo("127.0.0.1:" + base.getPort());
    await(
        "the enqueue in Prometheus",
        () ->
            query(
                "sum(http_server_requests_seconds_count{job=\"claimq\","
                    + " uri=\"/v1/queues/{queue}/items\", status=\"201\"}) >= 1"),
        hasResult());
  }

  @Test
  void the_maintenance_metrics_reach_prometheus_labelled_by_task_beside_its_own_job()
      throws Exception {
    // The service labels its background tasks "task": "job" stays the scrape job's, which the
    // alert rules and the dashboard rely on.
    JsonNode result =
        await(
            "the reaper's last run in Prometheus",
            () -> query("claimq_maintenance_since_last_run_seconds{task=\"reaper\"}"),
            hasResult());
    assertThat(result.path(0).path("metric").path("job").asText()).isEqualTo(SCRAPE_JOB);
  }

  @Test
  void prometheus_loads_every_alert_rule_and_evaluates_it_with_health_ok() throws Exception {
    List<String> alerts = new ArrayList<>();
    ObservabilityDocs.alertExpressions().keySet().forEach(key -> alerts.add(key.substring(6)));
    // On no data every rule is ok; an evaluation over a real scrape can fail (many-to-many).
    await("a successful scrape", () -> query("up{job=\"claimq\"} == 1"), hasResult());
    Instant scraped = Instant.now();

    JsonNode rules =
        await(
            "every rule evaluated after the scrape",
            () -> rules(),
            loaded -> loaded.size() == alerts.size() && evaluatedAfter(loaded, scraped));

    Map<String, String> health = new LinkedHashMap<>();
    rules.forEach(
        rule ->
            health.put(
                rule.path("name").asText(),
                rule.path("health").asText() + " " + rule.path("lastError").asText("")));
    assertThat(health.keySet()).containsExactlyInAnyOrderElementsOf(alerts);
    assertThat(health).allSatisfy((name, state) -> assertThat(state).as(name).isEqualTo("ok "));
  }

  @Test
  void prometheus_accepts_every_dashboard_expression() throws Exception {
    Map<String, String> refused = new LinkedHashMap<>();
    for (Map.Entry<String, String> panel : ObservabilityDocs.dashboardExpressions().entrySet()) {
      String expression = panel.getValue();
      for (Map.Entry<String, String> variable : GRAFANA_VARIABLES.entrySet()) {
        expression = expression.replace(variable.getKey(), variable.getValue());
      }
      HttpResponse<String> answer = get("api/v1/query?query=" + encode(expression));
      if (answer.statusCode() != 200) {
        refused.put(panel.getKey(), answer.body());
      }
    }
    assertThat(refused).as("expressions Prometheus refuses").isEmpty();
  }

  private JsonNode query(String promql) throws Exception {
    HttpResponse<String> answer = get("api/v1/query?query=" + encode(promql));
    assertThat(answer.statusCode()).as(promql + ": " + answer.body()).isEqualTo(200);
    return JSON.readTree(answer.body()).path("data").path("result");
  }

  /** Every rule of every group Prometheus has loaded. */
  private JsonNode rules() throws Exception {
    HttpResponse<String> answer = get("api/v1/rules");
    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
    var all = JSON.createArrayNode();
    JSON.readTree(answer.body())
        .path("data")
        .path("groups")
        .forEach(group -> group.path("rules").forEach(all::add));
    return all;
  }

  private static boolean evaluatedAfter(JsonNode rules, Instant instant) {
    for (JsonNode rule : rules) {
      String last = rule.path("lastEvaluation").asText("");
      if (last.isEmpty() || !Instant.parse(last).isAfter(instant)) {
        return false;
      }
    }
    return true;
  }

  private static Predicate<JsonNode> hasResult() {
    return result -> result.isArray() && !result.isEmpty();
  }

  private HttpResponse<String> get(String path) throws IOException, InterruptedException {
    return http.send(
        HttpRequest.newBuilder(api.resolve(path)).timeout(Duration.ofSeconds(5)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private interface Check<T> {
    T get() throws Exception;
  }

  private void await(String what, Check<Boolean> done) throws Exception {
    await(what, () -> done.get() ? Boolean.TRUE : null, value -> value != null);
  }

  /** Asks again until the answer passes, failing with Prometheus's log after PATIENCE. */
  private <T> T await(String what, Check<T> ask, Predicate<T> passes) throws Exception {
    Instant deadline = Instant.now().plus(PATIENCE);
    T last = null;
    Exception error = null;
    while (Instant.now().isBefore(deadline)) {
      if (!prometheus.isAlive()) {
        break;
      }
      try {
        last = ask.get();
        if (passes.test(last)) {
          return last;
        }
      } catch (IOException e) {
        error = e; // not listening yet
      }
      Thread.sleep(200);
    }
    throw new AssertionError(
        "waited "
            + PATIENCE.toSeconds()
            + " s for "
            + what
            + "; last answer "
            + last
            + (error == null ? "" : ", last error " + error)
            + "\nPrometheus "
            + (prometheus.isAlive() ? "runs" : "exited " + prometheus.exitValue())
            + ", its log:\n"
            + Files.readString(work.resolve("prometheus.log")));
  }

  private static String encode(String text) {
    return URLEncoder.encode(text, StandardCharsets.UTF_8);
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
