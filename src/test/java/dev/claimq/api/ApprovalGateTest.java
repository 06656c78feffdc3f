package dev.claimq.api;

import static dev.claimq.Api.cancel;
import static dev.claimq.Api.claimNext;
import static dev.claimq.Api.claimedNext;
import static dev.claimq.Api.complete;
import static dev.claimq.Api.enqueue;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.item;
import static dev.claimq.Api.json;
import static dev.claimq.Api.problem;
import static dev.claimq.Api.queueEntry;
import static dev.claimq.Api.retry;
import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import dev.claimq.AsAdmin;
import dev.claimq.Locks;
import dev.claimq.Race;
import dev.claimq.maintenance.QueueSampler;
import dev.claimq.telemetry.MetricValues;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A queue that requires approval holds new work until an operator approves or rejects it. */
@QuarkusTest
class ApprovalGateTest extends AsAdmin {
  @Inject QueueSampler sampler;
  @Inject javax.sql.DataSource dataSource;

  @Test
  void a_new_item_of_a_gated_queue_is_held_unclaimable_and_says_who_proposed_it() {
    String queue = gated("gate-held");
    String id =
        enqueue(queue, Map.of("dedupeKey", "k", "payload", Map.of("to", "ada")))
            .then()
            .statusCode(201)
            .body("state", equalTo("held"))
            .extract()
            .path("id");

    claimNext(queue, Map.of("worker", "w")).then().statusCode(204);
    json().body(Map.of("worker", "w")).post("/v1/items/{id}/claim", id).then().statusCode(204);
    item(id).then().body("state", equalTo("held")).body("enqueuedBy", equalTo("dev-admin"));
  }

  @Test
  void a_replayed_proposal_answers_the_held_item_and_a_different_payload_is_refused() {
    String queue = gated("gate-replay");
    String id = enqueued(queue, "k", Map.of("n", 1));

    enqueue(queue, Map.of("dedupeKey", "k", "payload", Map.of("n", 1)))
        .then()
        .statusCode(200)
        .body("id", equalTo(id))
        .body("state", equalTo("held"));
    problem(
        enqueue(queue, Map.of("dedupeKey", "k", "payload", Map.of("n", 2))),
        422,
        "dedupe-key-reused");
    assertThat(
            json()
                .queryParam("queue", queue)
                .get("/v1/items")
                .then()
                .statusCode(200)
                .extract()
                .<List<Object>>path("items"))
        .hasSize(1);
  }

  @Test
  void an_approved_item_is_claimed_and_completed_and_its_approval_is_audited() {
    String queue = gated("gate-approve");
    String id = enqueued(queue, "k", 1);

    approve(id, Map.of("note", "checked")).then().statusCode(200).body("state", equalTo("pending"));
    Response claimed = claimedNext(queue, "w");
    assertThat(claimed.<String>path("id")).isEqualTo(id);
    complete(id, Map.of("claimToken", claimed.path("claimToken"), "externalRef", "msg-1"))
        .then()
        .statusCode(200)
        .body("state", equalTo("done"));

    JsonPath actions = json().get("/v1/items/{id}/actions", id).then().extract().jsonPath();
    assertThat(actions.getList("actions.action")).containsExactly("approve");
    assertThat(actions.getList("actions.actor")).containsExactly("dev-admin");
    assertThat(actions.getList("actions.note")).containsExactly("checked");
  }

  @Test
  void a_rejected_item_is_cancelled_with_its_reason_and_cannot_be_approved_after() {
    String queue = gated("gate-reject");
    String id = enqueued(queue, "k", 1);

    reject(id, Map.of("reason", "Wrong recipient"))
        .then()
        .statusCode(200)
        .body("state", equalTo("cancelled"))
        .body("lastError", equalTo("Wrong recipient"));
    problem(approve(id, Map.of()), 409, "state-conflict")
        .body("detail", containsString("is cancelled: only held items can be approved"));
    claimNext(queue, Map.of("worker", "w")).then().statusCode(204);
    assertThat(actions(id, "note")).containsExactly("Wrong recipient");
  }

  @Test
  void a_retried_rejection_goes_back_to_held_and_no_worker_claims_it_until_approved() {
    String queue = gated("gate-retry-rejected");
    String id = enqueued(queue, "k", 1);
    reject(id, Map.of("reason", "Wrong recipient")).then().statusCode(200);

    retry(id).then().statusCode(200).body("state", equalTo("held"));
    claimNext(queue, Map.of("worker", "w")).then().statusCode(204);
    reject(id, Map.of("reason", "Still wrong")).then().statusCode(200);
    retry(id).then().statusCode(200).body("state", equalTo("held"));
    approve(id, Map.of()).then().statusCode(200).body("state", equalTo("pending"));
    assertThat(claimedNext(queue, "w").<String>path("id")).isEqualTo(id);
    assertThat(actions(id, "action"))
        .containsExactly("reject", "retry", "reject", "retry", "approve");
  }

  @Test
  void a_retry_that_waited_for_an_approval_and_a_cancel_frees_the_approved_item() throws Exception {
    String queue = gated("gate-retry-race");
    String id = enqueued(queue, "k", 1);
    reject(id, Map.of("reason", "Wrong recipient")).then().statusCode(200);
    long item = Long.parseLong(id);

    try (java.sql.Connection operators = dataSource.getConnection()) {
      // Other operators' retry, approval and cancel, as their statements make them, held
      // uncommitted while this retry arrives: it reads the item rejected and waits for the row.
      operators.setAutoCommit(false);
      try (java.sql.Statement statement = operators.createStatement()) {
        statement.executeUpdate(
            "UPDATE item SET state = 'cancelled', rejected = false WHERE id = " + item);
        statement.executeUpdate(
            "INSERT INTO item_action (item_id, action, actor) VALUES ("
                + item
                + ", 'retry', 'op'), ("
                + item
                + ", 'approve', 'op'), ("
                + item
                + ", 'cancel', 'op')");
      }

      // Approved since its rejection: retried to the workers, not held for a second approval.
      Locks.sentWhileHeld(dataSource, operators, () -> retry(id))
          .then()
          .statusCode(200)
          .body("state", equalTo("pending"));
    }
  }

  @Test
  void a_retry_refused_while_a_rejection_commits_says_the_item_changed_meanwhile()
      throws Exception {
    String id = enqueued(gated("gate-retry-reject-race"), "k", 1);

    try (java.sql.Connection operator = dataSource.getConnection()) {
      // Another operator's rejection, held uncommitted: the retry judges the item held (not
      // retryable), then reads it for its answer after the rejection, cancelled.
      operator.setAutoCommit(false);
      try (java.sql.Statement statement = operator.createStatement()) {
        statement.executeUpdate(
            "UPDATE item SET state = 'cancelled', rejected = true, last_error = 'No'"
                + " WHERE id = "
                + Long.parseLong(id));
      }

      // Not "is cancelled: only failed or cancelled items can be retried", which contradicts
      // itself: the retry may be sent again.
      problem(Locks.sentWhileHeld(dataSource, operator, () -> retry(id)), 409, "state-conflict")
          .body(
              "detail",
              equalTo(
                  "Item "
                      + id
                      + " became cancelled while this retry ran, in a change made at the same"
                      + " moment: send the retry again if it still applies."));
    }
    retry(id).then().statusCode(200).body("state", equalTo("held"));
  }

  @Test
  void a_bulk_retry_of_cancelled_items_holds_the_rejected_and_frees_the_approved() {
    String queue = gated("gate-bulk-retry");
    String rejected = enqueued(queue, "rejected", 1);
    String approvedThenCancelled = enqueued(queue, "approved", 2);
    reject(rejected, Map.of("reason", "no")).then().statusCode(200);
    approve(approvedThenCancelled, Map.of()).then().statusCode(200);
    cancel(approvedThenCancelled).then().statusCode(200).body("state", equalTo("cancelled"));

    bulk("retry", Map.of("queue", queue, "state", "cancelled"))
        .then()
        .statusCode(200)
        .body("items.id", equalTo(List.of(approvedThenCancelled, rejected)))
        .body("items.state", equalTo(List.of("pending", "held")));
    assertThat(claimedNext(queue, "w").<String>path("id")).isEqualTo(approvedThenCancelled);
    claimNext(queue, Map.of("worker", "w")).then().statusCode(204);
    item(rejected).then().body("state", equalTo("held"));
  }

  @Test
  void a_rejection_needs_a_reason_and_only_a_held_item_can_be_approved() {
    String held = enqueued(gated("gate-refusals"), "k", 1);
    String pending = enqueued(uniqueQueue("gate-open"), "k", 1);

    problem(reject(held, Map.of()), 400, "invalid-request")
        .body("errors[0].field", equalTo("reason"));
    problem(reject(held, Map.of("reason", "")), 400, "invalid-request")
        .body("errors[0].field", equalTo("reason"));
    problem(approve(pending, Map.of()), 409, "state-conflict")
        .body("detail", containsString("is pending: only held items"));
    item(held).then().body("state", equalTo("held"));
    item(pending).then().body("state", equalTo("pending"));
  }

  @Test
  void sixteen_racing_approvals_and_rejections_of_one_item_leave_exactly_one_outcome()
      throws Exception {
    String id = enqueued(gated("gate-race"), "k", 1);

    List<Integer> statuses =
        Race.of(
            16,
            i ->
                (i % 2 == 0 ? approve(id, Map.of()) : reject(id, Map.of("reason", "no " + i)))
                    .statusCode());

    assertThat(statuses.stream().filter(s -> s == 200).count()).isEqualTo(1);
    assertThat(statuses.stream().filter(s -> s == 409).count()).isEqualTo(15);
    JsonPath actions = json().get("/v1/items/{id}/actions", id).then().extract().jsonPath();
    assertThat(actions.getList("actions")).hasSize(1);
    String state = item(id).path("state");
    assertThat(state)
        .isEqualTo(
            actions.getString("actions[0].action").equals("approve") ? "pending" : "cancelled");
  }

  @Test
  void held_items_are_approved_or_rejected_in_bulk_after_a_dry_run() {
    String queue = gated("gate-bulk");
    String a = enqueued(queue, "a", 1);
    String b = enqueued(queue, "b", 2);
    String c = enqueued(queue, "c", 3);

    bulk("approve", Map.of("queue", queue, "dryRun", true))
        .then()
        .statusCode(200)
        .body("items.id", equalTo(List.of(c, b, a)))
        .body("more", equalTo(false));
    item(a).then().body("state", equalTo("held"));

    bulk("approve", Map.of("queue", queue, "limit", 2))
        .then()
        .statusCode(200)
        .body("items.state", equalTo(List.of("pending", "pending")))
        .body("more", equalTo(true));
    bulk("reject", Map.of("queue", queue, "reason", "late"))
        .then()
        .statusCode(200)
        .body("items.id", equalTo(List.of(a)))
        .body("items[0].lastError", equalTo("late"));
    assertThat(actions(a, "note")).containsExactly("late");

    problem(bulk("reject", Map.of("queue", queue)), 400, "invalid-request")
        .body("errors[0].field", equalTo("reason"));
    problem(bulk("approve", Map.of("queue", queue, "reason", "x")), 400, "malformed-request")
        .body("detail", containsString("reason"));
  }

  @Test
  void queues_and_metrics_show_held_counts_and_the_oldest_held_age() {
    String queue = gated("gate-counts");
    enqueued(queue, "a", 1);
    enqueued(queue, "b", 2);
    String approved = enqueued(queue, "c", 3);
    approve(approved, Map.of()).then().statusCode(200);

    Map<String, Object> entry = queueEntry(queue);
    assertThat(entry)
        .extracting("counts")
        .isEqualTo(Map.of("held", 2, "pending", 1, "sending", 0, "failed", 0));
    assertThat(((Number) entry.get("oldestHeldAgeSeconds")).doubleValue()).isBetween(0.0, 60.0);

    sampler.sample();
    MetricValues scrape = MetricValues.scrape();
    assertThat(scrape.value("claimq_items", "queue", queue, "state", "held")).isEqualTo(2);
    assertThat(scrape.value("claimq_oldest_held_age_seconds", "queue", queue))
        .isGreaterThan(0)
        .isLessThan(60);
  }

  @Test
  void the_oldest_held_age_counts_from_when_the_item_was_held_not_enqueued() throws Exception {
    // Enqueued an hour ago (its created_at moved back), rejected, then retried now: held again,
    // it has waited for approval a moment, not the hour the count from createdAt said.
    String queue = gated("gate-reheld");
    String id = enqueued(queue, "a", 1);
    try (var connection = dataSource.getConnection();
        var statement =
            connection.prepareStatement(
                "UPDATE item SET created_at = created_at - interval '1 hour' WHERE id = ?")) {
      statement.setLong(1, Long.parseLong(id));
      assertThat(statement.executeUpdate()).isEqualTo(1);
    }
    reject(id, Map.of("reason", "Wrong recipient")).then().statusCode(200);
    retry(id).then().statusCode(200).body("state", equalTo("held"));

    Map<String, Object> entry = queueEntry(queue);
    assertThat(((Number) entry.get("oldestHeldAgeSeconds")).doubleValue()).isBetween(0.0, 60.0);
    sampler.sample();
    assertThat(MetricValues.scrape().value("claimq_oldest_held_age_seconds", "queue", queue))
        .isLessThan(60);
  }

  @Test
  void a_queue_without_the_gate_is_untouched_and_the_policy_says_so() {
    String open = uniqueQueue("gate-none");
    enqueue(open, Map.of("dedupeKey", "k", "payload", 1))
        .then()
        .statusCode(201)
        .body("state", equalTo("pending"));
    json()
        .get("/v1/queues/{queue}/policy", open)
        .then()
        .statusCode(200)
        .body("requireApproval", equalTo(null))
        .body("effective.requireApproval", equalTo(false));
    String queue = gated("gate-policy");
    json()
        .get("/v1/queues/{queue}/policy", queue)
        .then()
        .body("requireApproval", equalTo(true))
        .body("effective.requireApproval", equalTo(true));
    problem(
            json().body("{\"requireApproval\": \"yes\"}").put("/v1/queues/{q}/policy", queue),
            400,
            "malformed-request")
        .body("detail", containsString("requireApproval"));
    json().get("/v1/queues/{queue}/policy", queue).then().body("requireApproval", equalTo(true));
  }

  /** A fresh queue whose policy requires approval. */
  static String gated(String prefix) {
    String queue = uniqueQueue(prefix);
    json()
        .body(Map.of("requireApproval", true))
        .put("/v1/queues/{queue}/policy", queue)
        .then()
        .statusCode(200)
        .body("requireApproval", equalTo(true));
    return queue;
  }

  static Response approve(String id, Map<String, ?> body) {
    return json().body(body).post("/v1/items/{id}/approve", id);
  }

  static Response reject(String id, Map<String, ?> body) {
    return json().body(body).post("/v1/items/{id}/reject", id);
  }

  /** One field of each of the item's audited actions, oldest first. */
  private static List<Object> actions(String id, String field) {
    return json()
        .get("/v1/items/{id}/actions", id)
        .then()
        .extract()
        .jsonPath()
        .getList("actions." + field);
  }

  private static Response bulk(String action, Map<String, ?> body) {
    return json().body(body).post("/v1/items:" + action);
  }
}
