package dev.claimq.api;

import static dev.claimq.Api.awaitState;
import static dev.claimq.Api.claim;
import static dev.claimq.Api.complete;
import static dev.claimq.Api.enqueue;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.fail;
import static dev.claimq.Api.item;
import static dev.claimq.Api.json;
import static dev.claimq.Api.problem;
import static dev.claimq.Api.queueEntry;
import static dev.claimq.Api.uniqueQueue;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.equalTo;

import dev.claimq.AsAdmin;
import dev.claimq.Race;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * The operations the console is built on: who am I, find an item from whatever is in hand, filter
 * the failed, and retry or cancel many at once, previewed first, audited, each item once.
 */
@QuarkusTest
class OperatorBulkTest extends AsAdmin {
  @Inject DataSource dataSource;

  @Test
  void me_names_the_key_its_roles_and_its_queues() {
    given()
        .header("Authorization", "Bearer dev-operator-key")
        .get("/v1/me")
        .then()
        .statusCode(200)
        .body("name", equalTo("dev-operator"))
        .body("roles", contains("operator"))
        .body("queues", contains("*"));
    given()
        .header("Authorization", "Bearer dev-agent-key")
        .get("/v1/me")
        .then()
        .statusCode(200)
        .body("roles", contains("agent"));
    given().header("Authorization", "Bearer wrong").get("/v1/me").then().statusCode(401);
  }

  @Test
  void the_failed_list_filters_by_reason_text_as_written_and_by_time() {
    String queue = uniqueQueue("bulk-filter");
    String timeout = failed(queue, "a", "SMTP 451: Timeout_waiting 100%");
    failed(queue, "b", "422 invalid recipient");
    Instant between = Instant.now().truncatedTo(ChronoUnit.MILLIS);
    String later = failed(queue, "c", "another TIMEOUT_waiting 100%");

    assertThat(ids(list(queue, Map.of("reason", "timeout_WAITING 100%"))))
        .containsExactly(later, timeout);
    assertThat(ids(list(queue, Map.of("reason", "timeout_waiting 1000")))).isEmpty();
    assertThat(ids(list(queue, Map.of("reason", "_"))))
        .as("_ is a character, not a wildcard")
        .containsExactly(later, timeout);
    assertThat(ids(list(queue, Map.of("updatedAfter", between.toString())))).containsExactly(later);
    assertThat(ids(list(queue, Map.of("updatedBefore", between.toString())))).hasSize(2);
    problem(
            given().queryParam("updatedAfter", "yesterday").get("/v1/items"),
            400,
            "invalid-request")
        .body("errors[0].field", equalTo("updatedAfter"));
  }

  @Test
  void search_finds_an_item_by_id_dedupe_key_idempotency_key_or_external_reference() {
    String queue = uniqueQueue("bulk-search");
    String key = "order/" + queue;
    String id = enqueued(queue, key, 1);
    String token = claim(id, Map.of()).path("claimToken");
    String ref = "msg_" + queue;
    complete(id, Map.of("claimToken", token, "externalRef", ref)).then().statusCode(200);
    String idempotencyKey = item(id).path("idempotencyKey");

    for (String text : List.of(id, key, idempotencyKey, ref)) {
      assertThat(ids(given().queryParam("q", text).get("/v1/items:search")))
          .as("searching %s", text)
          .containsExactly(id);
    }
    assertThat(ids(given().queryParam("q", "order/nothing-" + queue).get("/v1/items:search")))
        .isEmpty();
    problem(given().get("/v1/items:search"), 400, "invalid-request")
        .body("errors[0].field", equalTo("q"));
  }

  @Test
  void a_dry_run_previews_and_changes_nothing_then_the_retry_retries_each_and_audits_it() {
    String queue = uniqueQueue("bulk-retry");
    List<String> timeouts = new ArrayList<>();
    for (int n = 0; n < 3; n++) {
      timeouts.add(0, failed(queue, "t" + n, "provider timeout"));
    }
    String other = failed(queue, "o", "422 invalid recipient");
    Map<String, Object> filter = Map.of("queue", queue, "reason", "TIMEOUT");

    Response preview = bulk("retry", with(filter, "dryRun", true, "limit", 2));
    preview.then().statusCode(200).body("dryRun", equalTo(true)).body("more", equalTo(true));
    assertThat(ids(preview)).containsExactlyElementsOf(timeouts.subList(0, 2));
    for (String id : timeouts) {
      item(id).then().body("state", equalTo("failed"));
      given()
          .get("/v1/items/{id}/actions", id)
          .then()
          .body("actions", org.hamcrest.Matchers.empty());
    }

    Response retried = bulk("retry", filter);
    retried.then().statusCode(200).body("dryRun", equalTo(false)).body("more", equalTo(false));
    assertThat(ids(retried)).containsExactlyElementsOf(timeouts);
    for (String id : timeouts) {
      item(id).then().body("state", equalTo("pending")).body("attempts", equalTo(0));
      given()
          .get("/v1/items/{id}/actions", id)
          .then()
          .body("actions.action", contains("retry"))
          .body("actions.actor", contains("dev-admin"))
          .body("actions.note", contains("bulk"));
    }
    item(other).then().body("state", equalTo("failed"));
  }

  @Test
  void a_cancel_of_many_takes_pending_or_failed_and_refuses_any_other_state_naming_it() {
    String queue = uniqueQueue("bulk-cancel");
    String pending = enqueued(queue, "p", 1);
    String failed = failed(queue, "f", "boom");

    assertThat(ids(bulk("cancel", Map.of("queue", queue, "state", "pending"))))
        .containsExactly(pending);
    item(pending).then().body("state", equalTo("cancelled"));
    item(failed).then().body("state", equalTo("failed"));
    assertThat(ids(bulk("cancel", Map.of("queue", queue)))).containsExactly(failed);

    problem(bulk("cancel", Map.of("queue", queue, "state", "done")), 400, "invalid-request")
        .body("errors[0].field", equalTo("state"));
    problem(bulk("retry", Map.of("queue", queue, "state", "pending")), 400, "invalid-request")
        .body("errors[0].field", equalTo("state"));
    problem(bulk("retry", Map.of("queue", queue, "limit", 501)), 400, "invalid-request");
  }

  @Test
  void sixteen_racing_bulk_retries_retry_each_item_exactly_once() throws Exception {
    String queue = uniqueQueue("bulk-race");
    List<String> ids = new ArrayList<>();
    for (int n = 0; n < 10; n++) {
      ids.add(failed(queue, "k" + n, "boom"));
    }

    List<List<String>> won = Race.of(16, n -> ids(bulk("retry", Map.of("queue", queue))));

    List<String> all = won.stream().flatMap(List::stream).toList();
    assertThat(all).as("every item retried by exactly one of the calls").hasSize(10);
    assertThat(all).containsExactlyInAnyOrderElementsOf(ids);
    for (String id : ids) {
      given().get("/v1/items/{id}/actions", id).then().body("actions.action", contains("retry"));
    }
  }

  @Test
  void an_item_past_its_providers_horizon_is_left_for_a_single_forced_retry() throws Exception {
    String queue = uniqueQueue("bulk-horizon");
    json()
        .body(Map.of("providerKeyTtl", "PT1H"))
        .put("/v1/queues/{q}/policy", queue)
        .then()
        .statusCode(200);
    String old = failed(queue, "old", "boom");
    String recent = failed(queue, "new", "boom");
    try (Connection connection = dataSource.getConnection();
        PreparedStatement age =
            connection.prepareStatement(
                "UPDATE item SET created_at = now() - interval '2 hours' WHERE id = ?")) {
      age.setLong(1, Long.parseLong(old));
      age.executeUpdate();
    }

    assertThat(ids(bulk("retry", Map.of("queue", queue)))).containsExactly(recent);
    item(old).then().body("state", equalTo("failed"));
  }

  @Test
  void the_queue_list_shows_the_last_minutes_completes_and_fails() throws Exception {
    String queue = uniqueQueue("bulk-throughput");
    for (int n = 0; n < 2; n++) {
      String id = enqueued(queue, "done" + n, n);
      complete(id, Map.of("claimToken", claim(id, Map.of()).path("claimToken")))
          .then()
          .statusCode(200);
    }
    failed(queue, "failed", "boom");
    // A lease that expired is a failed attempt too (it was left out).
    String expired = enqueued(queue, "expired", 1);
    claim(expired, Map.of("leaseSeconds", 1)).then().statusCode(200);
    awaitState(expired, "pending");
    Map<String, Object> entry = queueEntry(queue);
    assertThat(entry).isNotNull();
    assertThat(entry.get("doneLastMinute")).isEqualTo(2);
    assertThat(entry.get("failedLastMinute")).isEqualTo(2);
  }

  /** An item failed for good with this reason. */
  private static String failed(String queue, String key, String reason) {
    String id = enqueue(queue, Map.of("dedupeKey", key, "payload", 1, "maxAttempts", 1)).path("id");
    fail(
            id,
            Map.of(
                "claimToken",
                claim(id, Map.of()).path("claimToken"),
                "error",
                reason,
                "retryable",
                false))
        .then()
        .statusCode(200)
        .body("state", equalTo("failed"));
    return id;
  }

  private static Response list(String queue, Map<String, String> query) {
    return given()
        .queryParam("queue", queue)
        .queryParam("state", "failed")
        .queryParams(query)
        .get("/v1/items");
  }

  private static Response bulk(String action, Map<String, Object> body) {
    return json().body(body).post("/v1/items:" + action);
  }

  private static Map<String, Object> with(Map<String, Object> body, Object... more) {
    Map<String, Object> merged = new HashMap<>(body);
    for (int i = 0; i < more.length; i += 2) {
      merged.put((String) more[i], more[i + 1]);
    }
    return merged;
  }

  private static List<String> ids(Response response) {
    response.then().statusCode(200);
    return response.jsonPath().getList("items.id", String.class);
  }
}
