package dev.claimq.api;

import static dev.claimq.Api.claim;
import static dev.claimq.Api.claimNext;
import static dev.claimq.Api.complete;
import static dev.claimq.Api.enqueue;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.fail;
import static dev.claimq.Api.item;
import static dev.claimq.Api.json;
import static dev.claimq.Api.problem;
import static dev.claimq.Api.uniqueQueue;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.claimq.AgentSpan;
import dev.claimq.AsAdmin;
import dev.claimq.InMemorySpans;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.Header;
import io.restassured.http.Headers;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * Traces carried from agent to worker: an enqueue's traceparent is stored exactly as sent, shown on
 * every claim and read, and continued by the spans of the item's claims and finishes, with the SDK
 * on and its spans caught in memory. What the default (tracing off) does is in
 * TracesOffByDefaultTest.
 */
@QuarkusTest
@TestProfile(InMemorySpans.On.class)
class TracesTest extends AsAdmin {

  private static final AttributeKey<String> ITEM_ID = AttributeKey.stringKey("claimq.item.id");
  private static final AttributeKey<String> QUEUE = AttributeKey.stringKey("claimq.queue");
  private static final AttributeKey<Long> ATTEMPT = AttributeKey.longKey("claimq.attempt");
  private static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("claimq.outcome");

  @Inject InMemorySpanExporter exported;
  @Inject DataSource dataSource;

  @Test
  void one_trace_runs_from_the_agents_enqueue_through_the_claim_to_the_complete() {
    AgentSpan agent = AgentSpan.next();
    String queue = uniqueQueue("traced");
    String id = enqueuedWith(agent.traceparent(), queue, "welcome/1");

    Response claimed = claimNext(queue, Map.of("worker", "w1"));
    claimed.then().statusCode(200).body("id", equalTo(id));
    complete(id, Map.of("claimToken", claimed.path("claimToken"), "externalRef", "msg-1"))
        .then()
        .statusCode(200);

    List<SpanData> trace =
        spansUntil(spans -> inTrace(spans, agent).size() >= 3, agent.traceId(), "3 spans");
    assertThat(trace)
        .extracting(SpanData::getName)
        .containsExactlyInAnyOrder(
            "POST /v1/queues/{queue}/items", "claimq.claim", "claimq.complete");

    // The enqueue's own server span continues the agent's span...
    SpanData enqueue = named(trace, "POST /v1/queues/{queue}/items");
    assertThat(enqueue.getKind()).isEqualTo(SpanKind.SERVER);
    assertThat(enqueue.getParentSpanId()).isEqualTo(agent.spanId());
    assertThat(enqueue.getParentSpanContext().isRemote()).isTrue();

    // ...and so do the claim and the complete, each linked to the request that did it.
    SpanData claim = named(trace, "claimq.claim");
    assertItemSpan(claim, agent, id, queue, 1, "changed");
    assertLinkedTo(claim, "POST /v1/queues/{queue}/claim");
    SpanData done = named(trace, "claimq.complete");
    assertItemSpan(done, agent, id, queue, 1, "changed");
    assertLinkedTo(done, "POST /v1/items/{id}/complete");
  }

  @Test
  void a_claim_by_id_and_a_fail_are_in_the_agents_trace_too_and_so_is_the_next_attempt() {
    AgentSpan agent = AgentSpan.next();
    String queue = uniqueQueue("traced");
    String id = enqueuedWith(agent.traceparent(), queue, "retry/1");

    Response first = claim(id, Map.of("worker", "w1"));
    first.then().statusCode(200);
    fail(id, Map.of("claimToken", first.path("claimToken"), "error", "429", "retryAfterSeconds", 0))
        .then()
        .statusCode(200)
        .body("state", equalTo("pending"));
    Response second = claim(id, Map.of("worker", "w2"));
    second.then().statusCode(200).body("attempts", equalTo(2));
    // A refused report still tells the trace what happened to the item: here the first claim's
    // fail again, with another error (a different report; a repeat is told by the claim's own
    // attempt, not by the item, which the second claim holds now).
    fail(id, Map.of("claimToken", first.path("claimToken"), "error", "late"))
        .then()
        .statusCode(409);

    List<SpanData> trace =
        spansUntil(spans -> inTrace(spans, agent).size() >= 5, agent.traceId(), "5 spans");
    List<SpanData> claims = trace.stream().filter(s -> s.getName().equals("claimq.claim")).toList();
    assertThat(claims).hasSize(2);
    assertThat(claims)
        .extracting(s -> s.getAttributes().get(ATTEMPT))
        .containsExactlyInAnyOrder(1L, 2L);
    for (SpanData claim : claims) {
      assertItemSpan(claim, agent, id, queue, claim.getAttributes().get(ATTEMPT), "changed");
      assertLinkedTo(claim, "POST /v1/items/{id}/claim");
    }
    List<SpanData> fails = trace.stream().filter(s -> s.getName().equals("claimq.fail")).toList();
    assertThat(fails)
        .extracting(s -> s.getAttributes().get(OUTCOME))
        .containsExactlyInAnyOrder("changed", "different_fail");
    for (SpanData failed : fails) {
      long attempt = "changed".equals(failed.getAttributes().get(OUTCOME)) ? 1 : 2;
      assertItemSpan(failed, agent, id, queue, attempt, failed.getAttributes().get(OUTCOME));
      assertLinkedTo(failed, "POST /v1/items/{id}/fail");
    }
  }

  @Test
  void each_item_of_a_batch_claim_and_of_a_batch_complete_has_its_span() {
    AgentSpan agent = AgentSpan.next();
    String queue = uniqueQueue("traced");
    enqueueBatch(
            queue,
            agent.traceparent(),
            List.of(Map.of("dedupeKey", "a", "payload", 1), Map.of("dedupeKey", "b", "payload", 2)))
        .then()
        .statusCode(200);

    List<Map<String, Object>> items =
        json().body(Map.of("max", 5)).post("/v1/queues/{q}/claim:batch", queue).path("items");
    assertThat(items).hasSize(2);
    List<Map<String, Object>> completes = new ArrayList<>();
    for (Map<String, Object> claimed : items) {
      completes.add(Map.of("id", claimed.get("id"), "claimToken", claimed.get("claimToken")));
    }
    json()
        .urlEncodingEnabled(false)
        .body(Map.of("items", completes))
        .post("/v1/items:complete")
        .then()
        .statusCode(200)
        .body("results.status", equalTo(List.of(200, 200)));

    List<SpanData> trace =
        spansUntil(spans -> inTrace(spans, agent).size() >= 5, agent.traceId(), "5 spans");
    for (Map<String, Object> claimed : items) {
      String id = (String) claimed.get("id");
      List<SpanData> ofItem =
          trace.stream().filter(s -> id.equals(s.getAttributes().get(ITEM_ID))).toList();
      assertThat(ofItem)
          .extracting(SpanData::getName)
          .containsExactlyInAnyOrder("claimq.claim", "claimq.complete");
      assertItemSpan(named(ofItem, "claimq.claim"), agent, id, queue, 1, "changed");
      assertLinkedTo(named(ofItem, "claimq.claim"), "POST /v1/queues/{queue}/claim:batch");
      assertItemSpan(named(ofItem, "claimq.complete"), agent, id, queue, 1, "changed");
      assertLinkedTo(named(ofItem, "claimq.complete"), "POST /v1/items:complete");
    }
  }

  @Test
  void a_request_span_keeps_the_querys_names_but_not_its_values() {
    given()
        .queryParam("q", "ada.lovelace@example.com")
        .get("/v1/items:search")
        .then()
        .statusCode(200);

    List<SpanData> spans =
        spansUntil(
            found ->
                found.stream()
                    .anyMatch(s -> s.getAttributes().asMap().toString().contains("items:search")),
            null,
            "the search's server span");
    SpanData search =
        spans.stream()
            .filter(s -> s.getAttributes().asMap().toString().contains("items:search"))
            .findFirst()
            .orElseThrow();
    assertThat(
            search
                .getAttributes()
                .get(io.opentelemetry.api.common.AttributeKey.stringKey("url.query")))
        .isEqualTo("q=REDACTED");
    assertThat(spans).noneMatch(s -> s.toString().contains("lovelace"));
  }

  @Test
  void an_item_enqueued_without_a_traceparent_adds_no_spans_of_its_own() {
    String queue = uniqueQueue("untraced");
    String id = enqueued(queue, "k", 1);
    Response claimed = claim(id, Map.of());
    claimed.then().statusCode(200).body("traceparent", nullValue());
    complete(id, Map.of("claimToken", claimed.path("claimToken"))).then().statusCode(200);

    // The requests themselves are spans, as every request is; the item has none of its own.
    spansUntil(
        spans -> spans.stream().anyMatch(s -> s.getName().equals("POST /v1/items/{id}/complete")),
        null,
        "the complete's server span");
    assertThat(exported.getFinishedSpanItems())
        .noneMatch(s -> id.equals(s.getAttributes().get(ITEM_ID)));
  }

  @Test
  void the_traceparent_comes_back_exactly_on_every_claim_and_every_read() {
    // Not sampled (flags 00): stored as sent all the same.
    String traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00";
    String queue = uniqueQueue("roundtrip");
    Response created =
        enqueueWith(traceparent, queue, Map.of("dedupeKey", "k", "payload", Map.of("n", 1)));
    created.then().statusCode(201).body("traceparent", equalTo(traceparent));
    String id = created.path("id");

    item(id).then().statusCode(200).body("traceparent", equalTo(traceparent));
    Response claimed = claim(id, Map.of("worker", "w"));
    claimed.then().statusCode(200).body("traceparent", equalTo(traceparent));
    complete(id, Map.of("claimToken", claimed.path("claimToken")))
        .then()
        .statusCode(200)
        .body("traceparent", equalTo(traceparent));
    given()
        .queryParam("queue", queue)
        .get("/v1/items")
        .then()
        .body("items[0].traceparent", equalTo(traceparent));
    assertThat(stored(id)).isEqualTo(traceparent);
  }

  @Test
  void every_claim_answer_puts_traceparent_before_possiblySent_and_keeps_claimToken_last()
      throws Exception {
    AgentSpan agent = AgentSpan.next();
    String queue = uniqueQueue("order");
    String byId = enqueuedWith(agent.traceparent(), queue, "by-id");
    assertClaimFieldOrder(claim(byId, Map.of()).asString(), agent.traceparent());

    enqueuedWith(agent.traceparent(), queue, "next");
    assertClaimFieldOrder(claimNext(queue, Map.of()).asString(), agent.traceparent());

    enqueuedWith(agent.traceparent(), queue, "batch");
    JsonNode batch =
        new ObjectMapper()
            .readTree(
                json().body(Map.of("max", 1)).post("/v1/queues/{q}/claim:batch", queue).asString());
    assertClaimFieldOrder(batch.path("items").get(0).toString(), agent.traceparent());

    // Without one, the field is there and null, so a worker can read it positionally too.
    String plain = enqueued(queue, "plain", 1);
    String answer = claim(plain, Map.of()).asString();
    assertThat(new ObjectMapper().readTree(answer).get("traceparent").isNull()).isTrue();
    assertClaimFieldOrder(answer, null);
  }

  @Test
  void a_malformed_traceparent_is_refused_naming_it_and_nothing_is_stored() {
    String queue = uniqueQueue("malformed");
    String valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    List<String> malformed =
        List.of(
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",
            valid + "," + valid);
    for (String value : malformed) {
      var body = Map.of("dedupeKey", "k", "payload", 1);
      problem(enqueueWith(value, queue, body), 400, "invalid-request")
          .body("errors[0].field", equalTo("traceparent"))
          .body("errors.size()", equalTo(1));
      problem(
              enqueueBatch(queue, value, List.of(Map.of("dedupeKey", "b", "payload", 1))),
              400,
              "invalid-request")
          .body("errors[0].field", equalTo("traceparent"));
    }
    // Twice is as ambiguous as a repeated JSON field.
    Response twice =
        json()
            .headers(
                new Headers(new Header("traceparent", valid), new Header("traceparent", valid)))
            .body(Map.of("dedupeKey", "k", "payload", 1))
            .post("/v1/queues/{q}/items", queue);
    problem(twice, 400, "invalid-request").body("errors[0].field", equalTo("traceparent"));

    given().queryParam("queue", queue).get("/v1/items").then().body("items.size()", equalTo(0));
  }

  @Test
  void a_later_version_laid_out_as_version_00_is_kept_as_sent_as_w3c_asks() {
    String queue = uniqueQueue("later-version");
    String later = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    enqueueWith(later, queue, Map.of("dedupeKey", "k", "payload", 1))
        .then()
        .statusCode(201)
        .body("traceparent", equalTo(later));
  }

  @Test
  void the_table_itself_refuses_a_traceparent_of_any_other_form() throws SQLException {
    try (Connection connection = dataSource.getConnection();
        Statement statement = connection.createStatement()) {
      for (String value :
          List.of(
              "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 ",
              "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01")) {
        String insert =
            "INSERT INTO item (queue, dedupe_key, payload, max_attempts, traceparent)"
                + " VALUES ('check', 'k', '1', 1, '"
                + value
                + "')";
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> statement.execute(insert))
            .hasMessageContaining("item_traceparent_w3c");
      }
    }
  }

  @Test
  void a_replay_keeps_the_first_traceparent_and_is_no_error() {
    String first = AgentSpan.next().traceparent();
    String queue = uniqueQueue("replay");
    var body = Map.of("dedupeKey", "k", "payload", Map.of("to", "ada"));
    String id = enqueueWith(first, queue, body).then().statusCode(201).extract().path("id");

    enqueueWith(AgentSpan.next().traceparent(), queue, body)
        .then()
        .statusCode(200)
        .header(QueuesResource.REPLAYED_HEADER, "true")
        .body("id", equalTo(id))
        .body("traceparent", equalTo(first));
    enqueue(queue, body).then().statusCode(200).body("traceparent", equalTo(first));
    assertThat(stored(id)).isEqualTo(first);

    // An item made without one stays without one.
    var plain = Map.of("dedupeKey", "plain", "payload", 1);
    String plainId = enqueue(queue, plain).then().statusCode(201).extract().path("id");
    enqueueWith(first, queue, plain).then().statusCode(200).body("traceparent", nullValue());
    assertThat(stored(plainId)).isNull();
  }

  @Test
  void a_batch_stores_its_traceparent_with_each_new_entry_and_replays_keep_theirs() {
    String older = AgentSpan.next().traceparent();
    String batch = AgentSpan.next().traceparent();
    String queue = uniqueQueue("batch");
    String existing = enqueuedWith(older, queue, "old");

    Response answer =
        enqueueBatch(
            queue,
            batch,
            List.of(
                Map.of("dedupeKey", "new-1", "payload", 1),
                Map.of("dedupeKey", "old", "payload", 1),
                Map.of("dedupeKey", "new-2", "payload", 2)));
    answer
        .then()
        .statusCode(200)
        .body("results.status", equalTo(List.of(201, 200, 201)))
        .body("results.item.traceparent", equalTo(List.of(batch, older, batch)));
    assertThat(stored(answer.path("results[0].item.id"))).isEqualTo(batch);
    assertThat(stored(existing)).isEqualTo(older);
    assertThat(stored(answer.path("results[2].item.id"))).isEqualTo(batch);

    enqueueBatch(queue, null, List.of(Map.of("dedupeKey", "new-3", "payload", 3)))
        .then()
        .statusCode(200)
        .body("results[0].item.traceparent", nullValue());
  }

  // --- helpers ---

  private static Response enqueueWith(String traceparent, String queue, Object body) {
    return json().header("traceparent", traceparent).body(body).post("/v1/queues/{q}/items", queue);
  }

  @Test
  void with_traces_on_the_metrics_point_at_a_trace_that_fed_them() {
    String queue = uniqueQueue("exemplar");
    enqueued(queue, "exemplar/1", 1);
    claimNext(queue, Map.of("worker", "w1")).then().statusCode(200);

    // OpenMetrics (the format that carries exemplars) shows, beside the bucket that the claim's
    // wait in the queue landed in, the trace of that claim.
    String metrics =
        given()
            .accept("application/openmetrics-text; version=1.0.0; charset=utf-8")
            .get("/q/metrics")
            .then()
            .statusCode(200)
            .extract()
            .asString();
    Matcher exemplar =
        Pattern.compile(
                "^claimq_queue_wait_seconds_bucket\\{queue=\""
                    + queue
                    + "\",.*# \\{span_id=\"(\\w+)\",trace_id=\"(\\w+)\"\\}",
                Pattern.MULTILINE)
            .matcher(metrics);
    assertThat(exemplar.find()).as("an exemplar on the queue's wait buckets").isTrue();
    String spanId = exemplar.group(1);
    String traceId = exemplar.group(2);
    InMemorySpans.until(
        exported,
        spans ->
            spans.stream()
                .anyMatch(
                    s ->
                        s.getName().equals("POST /v1/queues/{queue}/claim")
                            && s.getTraceId().equals(traceId)
                            && s.getSpanId().equals(spanId)),
        "the claim's span " + traceId + "/" + spanId);
  }

  private static String enqueuedWith(String traceparent, String queue, String dedupeKey) {
    return enqueueWith(traceparent, queue, Map.of("dedupeKey", dedupeKey, "payload", 1))
        .then()
        .statusCode(201)
        .extract()
        .path("id");
  }

  private static Response enqueueBatch(
      String queue, String traceparent, List<Map<String, Object>> items) {
    var request = json().urlEncodingEnabled(false);
    if (traceparent != null) {
      request.header("traceparent", traceparent);
    }
    return request.body(Map.of("items", items)).post("/v1/queues/" + queue + "/items:batch");
  }

  /** The traceparent column as the table holds it. */
  private String stored(String id) {
    try (Connection connection = dataSource.getConnection();
        Statement statement = connection.createStatement();
        var rows =
            statement.executeQuery(
                "SELECT traceparent FROM item WHERE id = " + Long.parseLong(id))) {
      assertThat(rows.next()).as("item %s is stored", id).isTrue();
      return rows.getString(1);
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  private static void assertClaimFieldOrder(String claimed, String traceparent) throws Exception {
    JsonNode item = new ObjectMapper().readTree(claimed);
    List<String> fields = new ArrayList<>();
    item.fieldNames().forEachRemaining(fields::add);
    assertThat(fields.get(fields.size() - 1)).isEqualTo("claimToken");
    assertThat(fields.indexOf("traceparent"))
        .isNotNegative()
        .isLessThan(fields.indexOf("possiblySent"));
    assertThat(fields.indexOf("possiblySent")).isLessThan(fields.indexOf("priorAttempts"));
    assertThat(fields.indexOf("priorAttempts")).isLessThan(fields.indexOf("claimToken"));
    assertThat(item.get("traceparent").isNull() ? null : item.get("traceparent").asText())
        .isEqualTo(traceparent);
  }

  private void assertItemSpan(
      SpanData span, AgentSpan agent, String id, String queue, long attempt, String outcome) {
    assertThat(span.getKind()).isEqualTo(SpanKind.INTERNAL);
    assertThat(span.getTraceId()).isEqualTo(agent.traceId());
    assertThat(span.getParentSpanId()).isEqualTo(agent.spanId());
    assertThat(span.getAttributes().get(ITEM_ID)).isEqualTo(id);
    assertThat(span.getAttributes().get(QUEUE)).isEqualTo(queue);
    assertThat(span.getAttributes().get(ATTEMPT)).isEqualTo(attempt);
    assertThat(span.getAttributes().get(OUTCOME)).isEqualTo(outcome);
    assertThat(span.getEndEpochNanos()).isGreaterThanOrEqualTo(span.getStartEpochNanos());
  }

  /** The span links to exactly one span: the server span of the request named, in its trace. */
  private void assertLinkedTo(SpanData span, String request) {
    assertThat(span.getLinks()).hasSize(1);
    SpanContext linked = span.getLinks().get(0).getSpanContext();
    SpanData server =
        spansUntil(
                spans -> spans.stream().anyMatch(s -> s.getSpanId().equals(linked.getSpanId())),
                linked.getTraceId(),
                "the linked span")
            .stream()
            .filter(s -> s.getSpanId().equals(linked.getSpanId()))
            .findFirst()
            .orElseThrow();
    assertThat(server.getKind()).isEqualTo(SpanKind.SERVER);
    assertThat(server.getName()).isEqualTo(request);
  }

  private static SpanData named(List<SpanData> spans, String name) {
    List<SpanData> named = spans.stream().filter(s -> s.getName().equals(name)).toList();
    assertThat(named).as("spans named %s", name).hasSize(1);
    return named.get(0);
  }

  private static List<SpanData> inTrace(List<SpanData> spans, AgentSpan agent) {
    return spans.stream().filter(s -> s.getTraceId().equals(agent.traceId())).toList();
  }

  /** The exported spans, of this trace when given, once {@code ready} holds of all of them. */
  private List<SpanData> spansUntil(Predicate<List<SpanData>> ready, String traceId, String what) {
    List<SpanData> spans = InMemorySpans.until(exported, ready, what);
    return traceId == null
        ? spans
        : spans.stream().filter(s -> s.getTraceId().equals(traceId)).toList();
  }
}
