package dev.claimq.examples;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.claimq.AgentSpan;
import dev.claimq.Api;
import dev.claimq.AsAdmin;
import dev.claimq.InMemorySpans;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The workers under examples/ are documentation that must stay true: each one runs here as a real
 * OS process against the in-process service, sends through the fake provider, and the provider's
 * record (one entry per idempotency key) together with each item's attempts proves every item was
 * sent exactly once. A missing python3, node or curl fails these tests; CI installs them. Traces
 * are on, so that the service's spans show which trace each worker's report to it was in.
 */
@QuarkusTest
@TestProfile(InMemorySpans.On.class)
class ReferenceWorkersTest extends AsAdmin {
  static final String AGENT_KEY = env("CLAIMQ_AGENT_KEY", "dev-agent-key");
  static final String WORKER_KEY = env("CLAIMQ_WORKER_KEY", "dev-worker-key");
  static final String OPERATOR_KEY = env("CLAIMQ_OPERATOR_KEY", "dev-operator-key");
  static final Path LOGS = Path.of("target", "reference-workers");

  /** The four reference workers, and the shell worker once more without jq. */
  enum Worker {
    PYTHON("python3", "examples/workers/worker.py"),
    NODE("node", "examples/workers/worker.mjs"),
    JAVA(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "examples/workers/Worker.java"),
    BASH("bash", "examples/workers/worker.sh"),
    BASH_WITHOUT_JQ("bash", "examples/workers/worker.sh");

    final List<String> command;

    Worker(String... command) {
      this.command = List.of(command);
    }
  }

  @TestHTTPResource("/")
  URI base;

  @Inject InMemorySpanExporter exported;

  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private final ObjectMapper json = new ObjectMapper();
  private Process provider;
  private String providerUrl;

  @BeforeEach
  void startProvider() throws IOException {
    provider =
        new ProcessBuilder("python3", "examples/demo/provider.py")
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    // Its first line names its URL; a provider that fails to start ends the stream instead.
    var firstLine =
        new BufferedReader(new InputStreamReader(provider.getInputStream(), StandardCharsets.UTF_8))
            .readLine();
    assertThat(firstLine).as("the provider's first line").startsWith("PROVIDER_URL=");
    providerUrl = firstLine.substring("PROVIDER_URL=".length());
  }

  @AfterEach
  void stopProvider() throws InterruptedException {
    provider.destroy();
    provider.waitFor(10, TimeUnit.SECONDS);
  }

  @ParameterizedTest
  @EnumSource(Worker.class)
  void a_worker_drains_a_queue_sending_every_item_exactly_once(Worker worker) throws Exception {
    String queue = Api.uniqueQueue("drain-" + worker.name().toLowerCase().replace('_', '-'));
    List<String> ids = new ArrayList<>();
    for (int n = 0; n < 30; n++) {
      ids.add(enqueue(queue, newItem("send/" + n, Map.of("n", n))));
    }

    Run run = runUntilExit(worker, queue, Map.of("CLAIMQ_EXIT_WHEN_EMPTY", "1"));

    assertThat(run.exitCode).as("log:%n%s", run.log()).isZero();
    Map<String, JsonNode> sends = providerRecord();
    assertThat(sends).as("one provider entry per item").hasSize(ids.size());
    for (String id : ids) {
      JsonNode item = item(id);
      assertThat(item.path("state").asText()).as("item %s", id).isEqualTo("done");
      JsonNode send = sends.get(item.path("idempotencyKey").asText());
      assertThat(send).as("the provider saw item %s's idempotency key", id).isNotNull();
      assertThat(send.path("accepted").asInt()).as("sends of item %s", id).isEqualTo(1);
      assertThat(item.path("externalRef").asText())
          .as("externalRef is the provider's id")
          .isEqualTo(send.path("id").asText());
      assertThat(outcomes(id)).as("attempts of item %s", id).containsExactly("done");
      assertThat(attempts(id).get(0).path("intentAt").isTextual())
          .as("item %s: the worker declared its intent before sending", id)
          .isTrue();
    }
  }

  @ParameterizedTest
  @EnumSource(Worker.class)
  void a_worker_reports_provider_failures_as_claimq_expects_and_heartbeats_slow_sends(Worker worker)
      throws Exception {
    String queue = Api.uniqueQueue("failures-" + worker.name().toLowerCase().replace('_', '-'));
    String permanent = enqueue(queue, newItem("permanent", Map.of("fail", "permanent")));
    // A 503 with Retry-After: 1. The computed backoff would be 5 to 10 s, longer than the worker
    // waits on an empty queue: only a worker that passes retryAfterSeconds sees the item again.
    String flaky = enqueue(queue, newItem("flaky", Map.of("failTimes", 1, "retryAfter", 1)));
    // Longer than the 3 s lease: without heartbeats the claim expires, complete answers 409, and
    // the item is claimed and sent a second time.
    String slow = enqueue(queue, newItem("slow", Map.of("sleepSeconds", 5)));

    Run run =
        runUntilExit(
            worker, queue, Map.of("CLAIMQ_EXIT_WHEN_EMPTY", "1", "CLAIMQ_LEASE_SECONDS", "3"));

    assertThat(run.exitCode).as("log:%n%s", run.log()).isZero();
    Map<String, JsonNode> sends = providerRecord();

    assertThat(item(permanent).path("state").asText())
        .as("log:%n%s", run.log())
        .isEqualTo("failed");
    assertThat(outcomes(permanent)).as("a 4xx is not retried").containsExactly("failed");
    assertThat(sends.get(key(permanent)).path("refused").asInt()).isEqualTo(1);

    assertThat(item(flaky).path("state").asText()).as("log:%n%s", run.log()).isEqualTo("done");
    assertThat(outcomes(flaky)).as("a 503 is retried").containsExactly("retry", "done");
    assertThat(sends.get(key(flaky)).path("accepted").asInt()).isEqualTo(1);

    assertThat(item(slow).path("state").asText()).as("log:%n%s", run.log()).isEqualTo("done");
    assertThat(outcomes(slow)).as("heartbeats kept the one claim").containsExactly("done");
    assertThat(sends.get(key(slow)).path("accepted").asInt()).isEqualTo(1);
  }

  /**
   * Provider answers that claimq would refuse if passed on as they came: a fail claimq answers 400
   * is lost (the protocol says not to repeat it), and the item stays sending until its lease
   * expires.
   */
  @ParameterizedTest
  @EnumSource(Worker.class)
  void a_worker_passes_on_odd_provider_answers_in_a_form_claimq_accepts(Worker worker)
      throws Exception {
    String queue = Api.uniqueQueue("odd-" + worker.name().toLowerCase().replace('_', '-'));
    // A Retry-After of two days, beyond claimq's 86400 s: passed on as 86400.
    String twoDays =
        enqueue(
            queue,
            newItem("two-days", Map.of("failTimes", 1, "failStatus", 429, "retryAfter", 172800)));
    // A Retry-After too large for a 64-bit integer: still a delay, so 86400 as well.
    String huge =
        enqueue(
            queue, newItem("huge", Map.of("failTimes", 1, "retryAfter", "99999999999999999999")));
    // A Retry-After that is no number of seconds: ignored, the computed backoff applies.
    String date =
        enqueue(
            queue,
            newItem("date", Map.of("failTimes", 1, "retryAfter", "Wed, 21 Oct 2015 07:28:00 GMT")));
    // A body whose 500th character is an emoji: a cut at 500 bytes or UTF-16 units splits it.
    String emoji =
        enqueue(
            queue,
            newItem(
                "emoji",
                Map.of(
                    "failTimes",
                    1,
                    "retryAfter",
                    0,
                    "failBody",
                    "a".repeat(499) + "\uD83D\uDE00".repeat(10))));
    // The provider's id as a JSON number: claimq's externalRef is a string.
    String numeric = enqueue(queue, newItem("numeric", Map.of("numericId", true)));

    Instant started = Instant.now();
    Run run = runUntilExit(worker, queue, Map.of("CLAIMQ_EXIT_WHEN_EMPTY", "1"));

    assertThat(run.exitCode).as("log:%n%s", run.log()).isZero();
    for (String id : List.of(twoDays, huge)) {
      JsonNode item = item(id);
      assertThat(item.path("state").asText())
          .as("item %s; log:%n%s", id, run.log())
          .isEqualTo("pending");
      assertThat(outcomes(id)).as("item %s", id).containsExactly("retry");
      assertThat(Instant.parse(item.path("runAt").asText()))
          .as("item %s waits the longest delay claimq takes", id)
          .isAfter(started.plus(Duration.ofHours(23)))
          .isBefore(Instant.now().plus(Duration.ofHours(25)));
    }
    JsonNode dated = item(date);
    assertThat(dated.path("state").asText()).as("log:%n%s", run.log()).isIn("pending", "done");
    assertThat(outcomes(date).get(0)).as("log:%n%s", run.log()).isEqualTo("retry");
    if (dated.path("state").asText().equals("pending")) {
      assertThat(Instant.parse(dated.path("runAt").asText()))
          .as("the computed backoff, not a day")
          .isBefore(Instant.now().plus(Duration.ofHours(1)));
    }
    assertThat(item(emoji).path("state").asText()).as("log:%n%s", run.log()).isEqualTo("done");
    assertThat(outcomes(emoji)).as("log:%n%s", run.log()).containsExactly("retry", "done");
    JsonNode sent = item(numeric);
    assertThat(sent.path("state").asText()).as("log:%n%s", run.log()).isEqualTo("done");
    assertThat(sent.path("externalRef").isTextual()).as("log:%n%s", run.log()).isTrue();
    assertThat(sent.path("externalRef").asText())
        .isEqualTo(providerRecord().get(key(numeric)).path("id").asText());
  }

  @ParameterizedTest
  @EnumSource(Worker.class)
  void a_worker_continues_an_items_trace_in_its_send_and_in_its_complete_and_fail(Worker worker)
      throws Exception {
    AgentSpan agent = AgentSpan.next();
    String queue = Api.uniqueQueue("traces-" + worker.name().toLowerCase().replace('_', '-'));
    String sent = enqueue(queue, newItem("sent", Map.of("n", 1)), agent.traceparent());
    String refused =
        enqueue(queue, newItem("refused", Map.of("fail", "permanent")), agent.traceparent());
    String plain = enqueue(queue, newItem("plain", Map.of("n", 2)));

    Run run = runUntilExit(worker, queue, Map.of("CLAIMQ_EXIT_WHEN_EMPTY", "1"));

    assertThat(run.exitCode).as("log:%n%s", run.log()).isZero();
    Map<String, List<String>> calls = providerTraceparents();
    assertThat(calls.get(key(sent))).as("log:%n%s", run.log()).containsExactly(agent.traceparent());
    assertThat(calls.get(key(refused))).containsExactly(agent.traceparent());
    assertThat(calls.get(key(plain))).as("an item without one").containsExactly((String) null);

    // What the worker told claimq: its complete and its fail in the agent's trace, under the
    // agent's span; the untraced item's complete in a trace of its own.
    String completeSent = "/v1/items/" + sent + "/complete";
    String failRefused = "/v1/items/" + refused + "/fail";
    String completePlain = "/v1/items/" + plain + "/complete";
    List<SpanData> spans =
        InMemorySpans.until(
            exported,
            all ->
                List.of(completeSent, failRefused, completePlain).stream()
                    .allMatch(path -> !requests(all, path).isEmpty()),
            "the server spans of the worker's reports");
    for (String path : List.of(completeSent, failRefused)) {
      for (SpanData request : requests(spans, path)) {
        assertThat(request.getTraceId()).as(path).isEqualTo(agent.traceId());
        assertThat(request.getParentSpanId()).as(path).isEqualTo(agent.spanId());
      }
    }
    assertThat(requests(spans, completePlain))
        .allSatisfy(request -> assertThat(request.getParentSpanContext().isValid()).isFalse());
  }

  /** The server spans of the requests to this path. */
  private static List<SpanData> requests(List<SpanData> spans, String path) {
    return spans.stream()
        .filter(s -> s.getKind() == SpanKind.SERVER)
        .filter(s -> path.equals(s.getAttributes().get(AttributeKey.stringKey("url.path"))))
        .toList();
  }

  @ParameterizedTest
  @EnumSource(
      value = Worker.class,
      names = {"PYTHON", "NODE", "JAVA", "BASH"})
  void sigterm_stops_a_worker_after_it_finishes_the_item_in_hand(Worker worker) throws Exception {
    String queue = Api.uniqueQueue("sigterm-" + worker.name().toLowerCase());
    int count = 20;
    for (int n = 0; n < count; n++) {
      enqueue(queue, newItem("slow/" + n, Map.of("n", n, "sleepSeconds", 0.5)));
    }
    Process process = startWorker(worker, queue, Map.of());
    try {
      awaitProviderRecord(3, Duration.ofSeconds(30));
      process.destroy(); // SIGTERM, most likely in the middle of a send
      assertThat(process.waitFor(20, TimeUnit.SECONDS)).as("exited after SIGTERM").isTrue();
    } finally {
      process.destroyForcibly();
    }
    String log = Files.readString(logFile(worker));
    assertThat(process.exitValue()).as("log:%n%s", log).isZero();

    Map<String, Long> states =
        items(queue).stream()
            .collect(Collectors.groupingBy(i -> i.path("state").asText(), Collectors.counting()));
    assertThat(states).as("log:%n%s", log).doesNotContainKey("sending");
    long done = states.getOrDefault("done", 0L);
    assertThat(done).as("stopped before draining the queue").isBetween(3L, count - 1L);
    // The send in flight at SIGTERM was completed, not abandoned: every send the provider
    // accepted belongs to a done item.
    assertThat(providerRecord()).as("log:%n%s", log).hasSize((int) done);
  }

  @Test
  void the_demo_ends_by_proving_every_item_was_sent_exactly_once() throws Exception {
    Path log = LOGS.resolve("demo.log");
    Files.createDirectories(LOGS);
    ProcessBuilder demo =
        new ProcessBuilder("bash", "examples/demo.sh")
            .redirectErrorStream(true)
            .redirectOutput(log.toFile());
    withKeys(demo.environment()).put("CLAIMQ_URL", serviceUrl());
    Process process = demo.start();
    try {
      assertThat(process.waitFor(90, TimeUnit.SECONDS)).as("demo finished").isTrue();
    } finally {
      process.destroyForcibly();
    }
    List<String> lines = Files.readAllLines(log);
    String output = String.join("\n", lines);
    assertThat(process.exitValue()).as("output:%n%s", output).isZero();
    assertThat(lines.get(lines.size() - 1))
        .as("output:%n%s", output)
        .matches("demo: (\\d+) items, \\1 sent exactly once, 0 duplicates: OK");
  }

  private record Run(int exitCode, Path logFile) {
    String log() {
      try {
        return Files.readString(logFile);
      } catch (IOException e) {
        return "(no log: " + e + ")";
      }
    }
  }

  private Run runUntilExit(Worker worker, String queue, Map<String, String> env)
      throws IOException, InterruptedException {
    Process process = startWorker(worker, queue, env);
    try {
      boolean exited = process.waitFor(90, TimeUnit.SECONDS);
      assertThat(exited)
          .as("exited within 90 s; its log:%n%s", new Run(-1, logFile(worker)).log())
          .isTrue();
    } finally {
      process.destroyForcibly();
    }
    return new Run(process.exitValue(), logFile(worker));
  }

  private Process startWorker(Worker worker, String queue, Map<String, String> env)
      throws IOException {
    Files.createDirectories(LOGS);
    ProcessBuilder builder =
        new ProcessBuilder(worker.command)
            .redirectErrorStream(true)
            .redirectOutput(logFile(worker).toFile());
    Map<String, String> environment = builder.environment();
    environment.put("CLAIMQ_URL", serviceUrl());
    environment.put("CLAIMQ_QUEUE", queue);
    environment.put("CLAIMQ_WORKER", worker.name().toLowerCase());
    environment.put("CLAIMQ_API_KEY", WORKER_KEY);
    environment.put("CLAIMQ_WAIT_SECONDS", "2");
    environment.put("PROVIDER_URL", providerUrl);
    if (worker == Worker.BASH_WITHOUT_JQ) {
      environment.put("CLAIMQ_NO_JQ", "1");
    }
    environment.putAll(env);
    return builder.start();
  }

  private static Path logFile(Worker worker) {
    return LOGS.resolve(worker.name().toLowerCase() + ".log");
  }

  private String serviceUrl() {
    return base.toString().replaceAll("/$", "");
  }

  private static Map<String, String> withKeys(Map<String, String> environment) {
    environment.put("CLAIMQ_AGENT_KEY", AGENT_KEY);
    environment.put("CLAIMQ_WORKER_KEY", WORKER_KEY);
    environment.put("CLAIMQ_OPERATOR_KEY", OPERATOR_KEY);
    return environment;
  }

  private static Map<String, Object> newItem(String dedupeKey, Object payload) {
    return Map.of("dedupeKey", dedupeKey, "payload", payload);
  }

  private static String enqueue(String queue, Map<String, ?> body) {
    return enqueue(queue, body, null);
  }

  /** Enqueues as an agent does, in its trace when it has a traceparent (else null). */
  private static String enqueue(String queue, Map<String, ?> body, String traceparent) {
    var request = given().header("Authorization", "Bearer " + AGENT_KEY);
    if (traceparent != null) {
      request.header("traceparent", traceparent);
    }
    return request
        .contentType(ContentType.JSON)
        .body(body)
        .post("/v1/queues/{queue}/items", queue)
        .then()
        .statusCode(201)
        .extract()
        .path("id");
  }

  private JsonNode item(String id) throws IOException {
    return json.readTree(
        operator().get("/v1/items/{id}", id).then().statusCode(200).extract().asString());
  }

  private String key(String id) throws IOException {
    return item(id).path("idempotencyKey").asText();
  }

  private List<JsonNode> items(String queue) throws IOException {
    String page =
        operator()
            .queryParam("queue", queue)
            .queryParam("limit", 500)
            .get("/v1/items")
            .then()
            .statusCode(200)
            .extract()
            .asString();
    List<JsonNode> items = new ArrayList<>();
    json.readTree(page).path("items").forEach(items::add);
    return items;
  }

  /** The outcome of each attempt of an item, oldest first. */
  private List<String> outcomes(String id) throws IOException {
    List<String> outcomes = new ArrayList<>();
    attempts(id).forEach(a -> outcomes.add(a.path("outcome").asText()));
    return outcomes;
  }

  private List<JsonNode> attempts(String id) throws IOException {
    String attempts =
        operator().get("/v1/items/{id}/attempts", id).then().statusCode(200).extract().asString();
    List<JsonNode> list = new ArrayList<>();
    json.readTree(attempts).path("attempts").forEach(list::add);
    return list;
  }

  private static io.restassured.specification.RequestSpecification operator() {
    return given().header("Authorization", "Bearer " + OPERATOR_KEY);
  }

  /** The provider's record, by idempotency key. */
  private Map<String, JsonNode> providerRecord() throws IOException, InterruptedException {
    HttpResponse<String> response =
        http.send(
            HttpRequest.newBuilder(URI.create(providerUrl)).timeout(Duration.ofSeconds(10)).build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).isEqualTo(200);
    Map<String, JsonNode> sends = new HashMap<>();
    json.readTree(response.body())
        .path("sends")
        .forEach(send -> sends.put(send.path("idempotencyKey").asText(), send));
    return sends;
  }

  /** The traceparent of each request the provider got (null: none), by idempotency key. */
  private Map<String, List<String>> providerTraceparents()
      throws IOException, InterruptedException {
    HttpResponse<String> response =
        http.send(
            HttpRequest.newBuilder(URI.create(providerUrl.replace("/sends", "/requests")))
                .timeout(Duration.ofSeconds(10))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).isEqualTo(200);
    Map<String, List<String>> traceparents = new HashMap<>();
    for (JsonNode request : json.readTree(response.body()).path("requests")) {
      JsonNode traceparent = request.path("traceparent");
      traceparents
          .computeIfAbsent(request.path("idempotencyKey").asText(), key -> new ArrayList<>())
          .add(traceparent.isTextual() ? traceparent.asText() : null);
    }
    return traceparents;
  }

  private void awaitProviderRecord(int entries, Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (providerRecord().size() < entries && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    assertThat(providerRecord())
        .as("sends before the deadline")
        .hasSizeGreaterThanOrEqualTo(entries);
  }

  private static String env(String name, String fallback) {
    String value = System.getenv(name);
    return value == null || value.isBlank() ? fallback : value;
  }
}
