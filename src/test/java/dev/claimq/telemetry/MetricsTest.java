package dev.claimq.telemetry;

import static dev.claimq.Api.claim;
import static dev.claimq.Api.claimNext;
import static dev.claimq.Api.claimedNext;
import static dev.claimq.Api.complete;
import static dev.claimq.Api.enqueue;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.fail;
import static dev.claimq.Api.heartbeat;
import static dev.claimq.Api.retry;
import static dev.claimq.Api.uniqueQueue;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import dev.claimq.AsAdmin;
import dev.claimq.PlainHttp;
import dev.claimq.Race;
import dev.claimq.maintenance.QueueSampler;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.net.URI;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * /q/metrics scraped around known operations: each counter moves by exactly what was done, on the
 * queue it was done to (every test has a queue of its own, so deltas are exact).
 */
@QuarkusTest
class MetricsTest extends AsAdmin {
  @TestHTTPResource("/")
  URI base;

  @Inject QueueSampler sampler;

  @Test
  void a_run_at_long_past_waits_from_the_enqueue() {
    String queue = uniqueQueue("metrics-past");
    enqueued(queue, Map.of("dedupeKey", "old", "payload", 1, "runAt", "2001-01-01T00:00:00Z"));
    enqueued(queue, Map.of("dedupeKey", "older", "payload", 2, "runAt", "2001-01-01T00:00:00Z"));

    sampler.sample();
    MetricValues sampled = MetricValues.scrape();
    claimedNext(queue, "w");
    MetricValues after = MetricValues.scrape();

    // Not the 25 years since 2001: both are seconds.
    assertThat(sampled.value("claimq_oldest_due_pending_age_seconds", "queue", queue))
        .isLessThan(60);
    assertThat(after.value("claimq_queue_wait_seconds_sum", "queue", queue)).isLessThan(60);
    assertThat(after.value("claimq_queue_wait_seconds_count", "queue", queue)).isEqualTo(1);
  }

  @Test
  void sixteen_racing_claims_of_one_item_count_one_won_and_fifteen_lost() throws Exception {
    String queue = uniqueQueue("metrics-race");
    String id = enqueued(queue, "k", 1);
    MetricValues before = MetricValues.scrape();

    List<Integer> statuses = Race.of(16, n -> claim(id, Map.of("worker", "w" + n)).statusCode());

    assertThat(statuses).filteredOn(s -> s == 200).hasSize(1);
    MetricValues after = MetricValues.scrape();
    assertThat(delta(before, after, "claimq_claims_total", "queue", queue, "result", "won"))
        .isEqualTo(1);
    assertThat(delta(before, after, "claimq_claims_total", "queue", queue, "result", "lost"))
        .isEqualTo(15);
    assertThat(delta(before, after, "claimq_queue_wait_seconds_count", "queue", queue))
        .isEqualTo(1);
  }

  @Test
  void a_drain_counts_its_claims_completes_fails_and_their_times() {
    String queue = uniqueQueue("metrics-drain");
    for (int n = 0; n < 4; n++) {
      enqueue(queue, Map.of("dedupeKey", "k" + n, "payload", n, "maxAttempts", 2))
          .then()
          .statusCode(201);
    }
    MetricValues before = MetricValues.scrape();

    finish(claimedNext(queue, "w"), "complete", Map.of("externalRef", "msg_1"));
    finish(claimedNext(queue, "w"), "fail", Map.of("error", "busy", "retryable", true));
    finish(claimedNext(queue, "w"), "fail", Map.of("error", "busy again", "retryable", true));
    finish(claimedNext(queue, "w"), "fail", Map.of("error", "bad address", "retryable", false));
    claimNext(queue, Map.of()).then().statusCode(204);

    MetricValues after = MetricValues.scrape();
    assertThat(delta(before, after, "claimq_claims_total", "queue", queue, "result", "won"))
        .isEqualTo(4);
    assertThat(delta(before, after, "claimq_claims_total", "queue", queue, "result", "empty"))
        .isEqualTo(1);
    assertThat(delta(before, after, "claimq_completes_total", "queue", queue)).isEqualTo(1);
    assertThat(delta(before, after, "claimq_fails_total", "queue", queue, "outcome", "retried"))
        .isEqualTo(2);
    assertThat(delta(before, after, "claimq_fails_total", "queue", queue, "outcome", "final"))
        .isEqualTo(1);
    assertThat(delta(before, after, "claimq_queue_wait_seconds_count", "queue", queue))
        .isEqualTo(4);
    assertThat(delta(before, after, "claimq_processing_seconds_count", "queue", queue))
        .isEqualTo(4);
    assertThat(delta(before, after, "claimq_stale_reports_total", "queue", queue)).isZero();
  }

  @Test
  void a_repeated_complete_counts_once_and_a_stale_report_counts_as_stale() {
    String queue = uniqueQueue("metrics-stale");
    enqueued(queue, "k", 1);
    Response claimed = claimedNext(queue, "w");
    MetricValues before = MetricValues.scrape();

    finish(claimed, "complete", Map.of());
    finish(claimed, "complete", Map.of()); // a repeat: 200, nothing new
    heartbeat(claimed.path("id"), Map.of("claimToken", "not-the-token")).then().statusCode(409);
    complete(claimed.path("id"), Map.of("claimToken", "not-the-token")).then().statusCode(409);

    MetricValues after = MetricValues.scrape();
    assertThat(delta(before, after, "claimq_completes_total", "queue", queue)).isEqualTo(1);
    assertThat(delta(before, after, "claimq_stale_reports_total", "queue", queue)).isEqualTo(2);
  }

  @Test
  void an_expired_lease_and_a_late_complete_count_a_duplicate_send_whichever_report_comes_first()
      throws Exception {
    // After the item was done with msg_2, or before, telling the claim that then completed with
    // msg_2 that msg_1 went out: either way the provider was called twice.
    for (boolean lateFirst : new boolean[] {false, true}) {
      String queue = uniqueQueue("metrics-late");
      String id = enqueued(queue, "k", 1);
      MetricValues before = MetricValues.scrape();
      String stale = claim(id, Map.of("worker", "slow", "leaseSeconds", 1)).path("claimToken");
      dev.claimq.Api.awaitState(id, "pending"); // the reaper ended the lease
      String current = claim(id, Map.of("worker", "next")).path("claimToken");
      Runnable late =
          () ->
              complete(id, Map.of("claimToken", stale, "externalRef", "msg_1"))
                  .then()
                  .statusCode(409);
      if (lateFirst) {
        late.run();
      }
      complete(id, Map.of("claimToken", current, "externalRef", "msg_2")).then().statusCode(200);
      if (!lateFirst) {
        late.run();
      }

      MetricValues after = MetricValues.scrape();
      for (String counter :
          List.of(
              "claimq_lease_expiries_total",
              "claimq_late_successes_total",
              "claimq_duplicate_sends_total",
              "claimq_stale_reports_total",
              "claimq_completes_total")) {
        assertThat(delta(before, after, counter, "queue", queue))
            .as(counter + (lateFirst ? ", the late success first" : ""))
            .isEqualTo(1);
      }
    }
  }

  @Test
  void releases_operator_actions_and_pauses_are_counted() {
    String queue = uniqueQueue("metrics-operator");
    enqueued(queue, "a", 1);
    String failed = enqueue(queue, Map.of("dedupeKey", "b", "payload", 2)).path("id");
    Response first = claimedNext(queue, "w");
    MetricValues before = MetricValues.scrape();

    given()
        .contentType("application/json")
        .body(Map.of("claimToken", first.path("claimToken")))
        .post("/v1/items/{id}/release", first.<String>path("id"))
        .then()
        .statusCode(200);
    given().post("/v1/queues/{queue}/pause", queue).then().statusCode(200);
    given().post("/v1/queues/{queue}/resume", queue).then().statusCode(200);
    given().post("/v1/items/{id}/cancel", failed).then().statusCode(200);
    retry(failed).then().statusCode(200);
    retry(failed).then().statusCode(409); // not failed or cancelled now: no action taken

    MetricValues after = MetricValues.scrape();
    assertThat(delta(before, after, "claimq_releases_total", "queue", queue)).isEqualTo(1);
    for (String action : List.of("pause", "resume", "cancel", "retry")) {
      assertThat(
              delta(
                  before, after, "claimq_operator_actions_total", "queue", queue, "action", action))
          .as(action)
          .isEqualTo(1);
    }
  }

  @Test
  void the_sampled_gauges_show_live_items_due_soon_and_pauses() {
    String queue = uniqueQueue("metrics-gauges");
    enqueued(queue, "due-1", 1);
    enqueued(queue, "due-2", 2);
    enqueued(queue, Map.of("dedupeKey", "soon", "payload", 3, "runAt", inSeconds(30)));
    enqueued(queue, Map.of("dedupeKey", "later", "payload", 4, "runAt", inSeconds(600)));
    claimedNext(queue, "w");
    given().post("/v1/queues/{queue}/pause", queue).then().statusCode(200);

    sampler.sample();

    MetricValues scrape = MetricValues.scrape();
    assertThat(scrape.value("claimq_items", "queue", queue, "state", "pending")).isEqualTo(3);
    assertThat(scrape.value("claimq_items", "queue", queue, "state", "sending")).isEqualTo(1);
    assertThat(scrape.value("claimq_items", "queue", queue, "state", "failed")).isZero();
    assertThat(scrape.value("claimq_items_due_next_minute", "queue", queue)).isEqualTo(1);
    assertThat(scrape.value("claimq_queue_paused", "queue", queue)).isEqualTo(1);
    assertThat(scrape.value("claimq_oldest_due_pending_age_seconds", "queue", queue))
        .isGreaterThan(0)
        .isLessThan(60);
    assertThat(scrape.value("claimq_maintenance_since_last_run_seconds", "task", "reaper"))
        .as("the reaper runs every second in tests")
        .isBetween(0.0, 3.0);
    // The age counts from the start until a first run: that one has run is the timer's count.
    assertThat(scrape.value("claimq_maintenance_run_seconds_count", "task", "reaper"))
        .isGreaterThan(0);
  }

  @Test
  void the_service_reports_its_pool_its_http_server_and_its_parked_long_polls() {
    enqueued(uniqueQueue("metrics-builtin"), "k", 1);
    MetricValues scrape = MetricValues.scrape();
    assertThat(scrape.has("claimq_longpolls_parked")).isTrue();
    assertThat(scrape.has("agroal_active_count")).as("the pool's metrics").isTrue();
    assertThat(scrape.has("http_server_requests_seconds_count")).as("the server's").isTrue();
  }

  @Test
  void requests_without_a_key_cannot_add_http_series() throws Exception {
    // Each 405 was tagged with its raw path, and each made-up method as sent.
    PlainHttp http = new PlainHttp(base);
    for (int i = 0; i < 120; i++) {
      assertThat(
              http.send("POST", "/v1/items/" + (987_000 + i) + "/attempts", null, null)
                  .statusCode())
          .isIn(401, 405);
    }
    for (String method : List.of("ZZQA", "ZZQB", "ZZQC")) {
      http.send(method, "/v1/me", null, null);
    }
    // Below /mcp the HTTP layer's 401 came before any route, tagged with the path as sent.
    for (int i = 0; i < 20; i++) {
      assertThat(http.send("GET", "/mcp/" + (987_000 + i), null, null).statusCode()).isEqualTo(401);
    }
    MetricValues scrape = MetricValues.scrape();
    String requests = "http_server_requests_seconds_count";
    assertThat(scrape.labelValues(requests, "uri")).noneMatch(uri -> uri.contains("987"));
    assertThat(scrape.labelValues(requests, "method")).noneMatch(m -> m.startsWith("ZZQ"));
    assertThat(scrape.value(requests, "uri", "/v1/items/{id}/attempts", "method", "POST"))
        .isGreaterThanOrEqualTo(120);
    assertThat(scrape.value(requests, "method", "OTHER")).isGreaterThanOrEqualTo(3);
  }

  private static void finish(Response claimed, String how, Map<String, Object> body) {
    Map<String, Object> request = new java.util.HashMap<>(body);
    request.put("claimToken", claimed.path("claimToken"));
    (how.equals("complete")
            ? complete(claimed.path("id"), request)
            : fail(claimed.path("id"), request))
        .then()
        .statusCode(200);
  }

  private static String inSeconds(int seconds) {
    return Instant.now()
        .plusSeconds(seconds)
        .truncatedTo(java.time.temporal.ChronoUnit.MILLIS)
        .toString();
  }

  static double delta(MetricValues before, MetricValues after, String name, String... labels) {
    return after.value(name, labels) - before.value(name, labels);
  }
}
