package dev.claimq.api;

import static dev.claimq.Api.awaitState;
import static dev.claimq.Api.claim;
import static dev.claimq.Api.claimNext;
import static dev.claimq.Api.claimedNext;
import static dev.claimq.Api.complete;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.fail;
import static dev.claimq.Api.heartbeat;
import static dev.claimq.Api.json;
import static dev.claimq.Api.problem;
import static dev.claimq.Api.release;
import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;

import dev.claimq.AsAdmin;
import dev.claimq.telemetry.MetricValues;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * The lost answer: a request commits, its answer never reaches the client, and the client sends the
 * exact same request again. Each replay answers as the documents say, and changes nothing a second
 * time: the rows are counted in the database, the counters on /q/metrics.
 */
@QuarkusTest
class LostAnswerTest extends AsAdmin {
  @Inject DataSource dataSource;

  @Test
  void a_replayed_batch_enqueue_answers_each_entry_200_with_the_item_the_first_one_made()
      throws SQLException {
    String queue = uniqueQueue("lost-batch-enqueue");
    Map<String, Object> body =
        Map.of(
            "items",
            List.of(
                Map.of("dedupeKey", "a", "payload", 1), Map.of("dedupeKey", "b", "payload", 2)));
    Response first = batch("/v1/queues/" + queue + "/items:batch", body);

    Response replay = batch("/v1/queues/" + queue + "/items:batch", body);

    assertThat(first.<List<Integer>>path("results.status")).containsExactly(201, 201);
    assertThat(replay.<List<Integer>>path("results.status")).containsExactly(200, 200);
    assertThat(replay.<List<String>>path("results.item.id"))
        .isEqualTo(first.<List<String>>path("results.item.id"));
    assertThat(count("SELECT count(*) FROM item WHERE queue = ?", queue)).isEqualTo(2);
  }

  @Test
  void a_replayed_claim_by_id_answers_204_and_the_lost_claim_comes_back_when_its_lease_ends()
      throws Exception {
    String queue = uniqueQueue("lost-claim");
    String id = enqueued(queue, "k", 1);
    Map<String, Object> body = Map.of("worker", "w", "leaseSeconds", 1);
    String lost = claim(id, body).then().statusCode(200).extract().path("claimToken");

    claim(id, body).then().statusCode(204);

    assertThat(attemptRows(id)).as("one claim, one attempt").isEqualTo(1);
    assertThat(column(id, "attempts")).isEqualTo("1");
    assertThat(column(id, "claim_token")).as("still the lost answer's claim").isEqualTo(lost);
    // The token is gone with the answer: the item is not stuck, its lease ends it.
    awaitState(id, "pending");
    claim(id, Map.of("worker", "w"))
        .then()
        .statusCode(200)
        .body("priorAttempts.size()", equalTo(1));
    assertThat(attemptRows(id)).isEqualTo(2);
  }

  @Test
  void a_replayed_claim_next_claims_another_item_and_the_lost_one_comes_back_when_its_lease_ends()
      throws Exception {
    String queue = uniqueQueue("lost-claim-next");
    String a = enqueued(queue, "a", 1);
    String b = enqueued(queue, "b", 2);
    Map<String, Object> body = Map.of("worker", "w", "leaseSeconds", 1);
    claimNext(queue, body).then().statusCode(200).body("id", equalTo(a));

    claimNext(queue, body).then().statusCode(200).body("id", equalTo(b));

    assertThat(attemptRows(b)).isEqualTo(1);
    comesBackWhenItsLeaseEnds(queue, a);
  }

  @Test
  void a_replayed_long_poll_waits_again_and_the_item_the_lost_answer_claimed_comes_back_later()
      throws Exception {
    String queue = uniqueQueue("lost-long-poll");
    String id = enqueued(queue, "k", 1);
    // A lease longer than the wait: the replay's 204 comes before the reaper frees the item.
    Map<String, Object> body = Map.of("worker", "w", "leaseSeconds", 3, "waitSeconds", 1);
    claimNext(queue, body).then().statusCode(200).body("id", equalTo(id));

    claimNext(queue, body).then().statusCode(204);

    comesBackWhenItsLeaseEnds(queue, id);
  }

  @Test
  void a_repeated_complete_with_next_leaves_the_item_its_lost_answer_claimed_to_the_reaper()
      throws Exception {
    String queue = uniqueQueue("lost-next");
    String a = enqueued(queue, "a", 1);
    String b = enqueued(queue, "b", 2);
    String token = claimedNext(queue, "w").path("claimToken");
    Map<String, Object> body =
        Map.of("claimToken", token, "next", Map.of("worker", "w", "leaseSeconds", 1));
    complete(a, body).then().statusCode(200).body("next.id", equalTo(b));

    complete(a, body).then().statusCode(200).body("next", nullValue());

    assertThat(attemptRows(a)).isEqualTo(1);
    comesBackWhenItsLeaseEnds(queue, b);
  }

  @Test
  void a_replayed_heartbeat_extends_the_same_claim_again_and_opens_no_attempt()
      throws SQLException {
    String queue = uniqueQueue("lost-heartbeat");
    Response claimed = claimedItem(queue);
    String id = claimed.path("id");
    String token = claimed.path("claimToken");
    Map<String, Object> body = Map.of("claimToken", token, "leaseSeconds", 120);
    heartbeat(id, body).then().statusCode(200);

    heartbeat(id, body).then().statusCode(200).body("state", equalTo("sending"));

    assertThat(column(id, "lease_seconds")).isEqualTo("120");
    assertThat(attemptRows(id)).isEqualTo(1);
    assertThat(column(id, "attempts")).isEqualTo("1");
    assertThat(column(id, "claim_token")).isEqualTo(token);
  }

  @Test
  void a_replayed_release_answers_200_and_gives_the_attempt_back_once() throws SQLException {
    String queue = uniqueQueue("lost-release");
    Response claimed = claimedItem(queue);
    String id = claimed.path("id");
    String token = claimed.path("claimToken");
    Map<String, Object> body = Map.of("claimToken", token, "delaySeconds", 30);
    MetricValues before = MetricValues.scrape();
    String first = release(id, body).then().statusCode(200).extract().asString();

    release(id, body).then().statusCode(200).body(equalTo(first));

    assertThat(column(id, "attempts")).as("the one claim's attempt given back once").isEqualTo("0");
    assertThat(column(id, "releases")).isEqualTo("1");
    assertThat(attemptRows(id)).isEqualTo(1);
    assertThat(delta(before, "claimq_releases_total", queue)).isEqualTo(1);
  }

  @Test
  void a_replayed_fail_that_does_not_know_whether_it_sent_answers_the_same_and_counts_once()
      throws SQLException {
    String queue = uniqueQueue("lost-fail-unknown");
    Response claimed = claimedItem(queue);
    String id = claimed.path("id");
    String token = claimed.path("claimToken");
    Map<String, Object> body = Map.of("claimToken", token, "error", "timeout", "sent", "unknown");
    MetricValues before = MetricValues.scrape();
    String first = fail(id, body).then().statusCode(200).extract().asString();

    fail(id, body).then().statusCode(200).body(equalTo(first));

    assertThat(attemptRows(id)).isEqualTo(1);
    assertThat(column(id, "attempts")).isEqualTo("1");
    assertThat(delta(before, "claimq_fails_total", queue)).isEqualTo(1);
  }

  @Test
  void a_replayed_late_complete_is_a_stale_claim_and_records_the_late_success_once()
      throws Exception {
    String queue = uniqueQueue("lost-late");
    String id = enqueued(queue, "k", 1);
    String stale = claim(id, Map.of("worker", "slow", "leaseSeconds", 1)).path("claimToken");
    awaitState(id, "pending");
    String current = claim(id, Map.of("worker", "next")).path("claimToken");
    complete(id, Map.of("claimToken", current, "externalRef", "msg_2")).then().statusCode(200);
    Map<String, Object> late = Map.of("claimToken", stale, "externalRef", "msg_1");
    MetricValues before = MetricValues.scrape();
    problem(complete(id, late), 409, "stale-claim")
        .body("detail", containsString("recorded as a late success"));

    // The late success is on its attempt already: the repeat is told the claim is stale.
    problem(complete(id, late), 409, "stale-claim")
        .body("detail", org.hamcrest.Matchers.not(containsString("recorded")));

    assertThat(column(id, "duplicate_sends")).isEqualTo("1");
    assertThat(
            count(
                "SELECT count(*) FROM attempt WHERE item_id = CAST(? AS bigint)"
                    + " AND late_external_ref IS NOT NULL",
                id))
        .isEqualTo(1);
    assertThat(delta(before, "claimq_late_successes_total", queue)).isEqualTo(1);
    assertThat(delta(before, "claimq_duplicate_sends_total", queue)).isEqualTo(1);
  }

  @Test
  void a_replayed_batch_complete_and_fail_answer_each_entry_200_again_and_finish_it_once()
      throws SQLException {
    String queue = uniqueQueue("lost-batch-finish");
    ClaimedPair pair = claimedPair(queue);
    String a = pair.completed();
    String b = pair.failed();
    Map<String, Object> completes = Map.of("items", List.of(pair.complete()));
    Map<String, Object> fails = Map.of("items", List.of(pair.fail()));
    MetricValues before = MetricValues.scrape();
    String completed = batch("/v1/items:complete", completes).asString();
    String failed = batch("/v1/items:fail", fails).asString();

    assertThat(batch("/v1/items:complete", completes).asString()).isEqualTo(completed);
    assertThat(batch("/v1/items:fail", fails).asString()).isEqualTo(failed);

    assertThat(completed).contains("\"status\":200");
    assertThat(failed).contains("\"status\":200");
    assertThat(attemptRows(a)).isEqualTo(1);
    assertThat(attemptRows(b)).isEqualTo(1);
    assertThat(column(b, "attempts")).isEqualTo("1");
    assertThat(delta(before, "claimq_completes_total", queue)).isEqualTo(1);
    assertThat(delta(before, "claimq_fails_total", queue)).isEqualTo(1);
  }

  @Test
  void an_entry_repeated_inside_one_batch_finish_is_its_repeat_and_counted_once()
      throws SQLException {
    // Each entry after the first for one claim answers as its repeat (README): 200, no second
    // finish, and no second count, which three copies of each entry once made three.
    String queue = uniqueQueue("lost-batch-repeat");
    ClaimedPair pair = claimedPair(queue);
    String a = pair.completed();
    String b = pair.failed();
    Map<String, Object> complete = pair.complete();
    Map<String, Object> fail = pair.fail();
    MetricValues before = MetricValues.scrape();

    String completed =
        batch("/v1/items:complete", Map.of("items", List.of(complete, complete, complete)))
            .asString();
    String failed = batch("/v1/items:fail", Map.of("items", List.of(fail, fail, fail))).asString();

    assertThat(completed.split("\"status\":200", -1)).hasSize(4);
    assertThat(failed.split("\"status\":200", -1)).hasSize(4);
    assertThat(attemptRows(a)).isEqualTo(1);
    assertThat(column(b, "attempts")).isEqualTo("1");
    assertThat(delta(before, "claimq_completes_total", queue)).isEqualTo(1);
    assertThat(delta(before, "claimq_fails_total", queue, "outcome", "retried")).isEqualTo(1);
  }

  @Test
  void a_replayed_operator_action_is_a_409_naming_the_state_it_left_and_is_recorded_once()
      throws SQLException {
    String queue = uniqueQueue("lost-operator");
    String gated = ApprovalGateTest.gated("lost-operator-gated");
    Map<String, String> ids =
        Map.of(
            "retry", failedItem(queue, "retried"),
            "resolve", failedItem(queue, "resolved"),
            "cancel", enqueued(queue, "cancelled", 1),
            "approve", enqueued(gated, "approved", 1),
            "reject", enqueued(gated, "rejected", 1));
    Map<String, String> leftIn =
        Map.of(
            "retry", "pending",
            "resolve", "done",
            "cancel", "cancelled",
            "approve", "pending",
            "reject", "cancelled");
    MetricValues before = MetricValues.scrape();

    for (String action : ids.keySet()) {
      String id = ids.get(action);
      operator(action, id).then().statusCode(200);

      problem(operator(action, id), 409, "state-conflict")
          .body("detail", containsString("is " + leftIn.get(action)));

      assertThat(
              count(
                  "SELECT count(*) FROM item_action WHERE item_id = CAST(? AS bigint)"
                      + " AND action = ?",
                  id,
                  action))
          .as(action)
          .isEqualTo(1);
      String itsQueue = action.equals("approve") || action.equals("reject") ? gated : queue;
      assertThat(delta(before, "claimq_operator_actions_total", itsQueue, "action", action))
          .as(action)
          .isEqualTo(1);
    }
    assertThat(attemptRows(ids.get("retry"))).as("a retry claims nothing").isEqualTo(1);
  }

  @Test
  void a_replayed_bulk_action_finds_nothing_left_to_do_and_acts_on_each_item_once()
      throws SQLException {
    String queue = uniqueQueue("lost-bulk");
    List<String> ids = List.of(enqueued(queue, "a", 1), enqueued(queue, "b", 2));
    Map<String, Object> filter = Map.of("queue", queue, "state", "pending");
    MetricValues before = MetricValues.scrape();
    batch("/v1/items:cancel", filter).then().body("items.size()", equalTo(2));

    batch("/v1/items:cancel", filter)
        .then()
        .body("items.size()", equalTo(0))
        .body("more", equalTo(false));

    for (String id : ids) {
      assertThat(count("SELECT count(*) FROM item_action WHERE item_id = CAST(? AS bigint)", id))
          .isEqualTo(1);
    }
    assertThat(delta(before, "claimq_operator_actions_total", queue, "action", "cancel"))
        .isEqualTo(2);
  }

  @Test
  void a_replayed_policy_pause_or_resume_answers_the_queue_as_it_is_and_records_nothing_new()
      throws SQLException {
    String queue = uniqueQueue("lost-queue");
    Map<String, Object> policy = Map.of("maxAttempts", 3, "leaseSeconds", 30);
    MetricValues before = MetricValues.scrape();

    for (String action : List.of("policy", "pause", "resume")) {
      Response first = queueAction(queue, action, policy);

      Response replay = queueAction(queue, action, policy);

      assertThat(replay.asString()).as(action).isEqualTo(first.asString());
      assertThat(delta(before, "claimq_operator_actions_total", queue, "action", action))
          .as(action)
          .isEqualTo(1);
    }
    assertThat(count("SELECT count(*) FROM queue_action WHERE queue = ?", queue)).isEqualTo(3);
  }

  private static Response queueAction(String queue, String action, Map<String, Object> policy) {
    Response response =
        action.equals("policy")
            ? json().body(policy).put("/v1/queues/{queue}/policy", queue)
            : io.restassured.RestAssured.post("/v1/queues/{queue}/" + action, queue);
    response.then().statusCode(200);
    return response;
  }

  /**
   * The item a lost answer claimed, still sending under that one claim, is released by the reaper
   * when its lease ends and is the queue's next claim: its second attempt.
   */
  private void comesBackWhenItsLeaseEnds(String queue, String id) throws Exception {
    assertThat(attemptRows(id)).as("the lost claim's attempt").isEqualTo(1);
    assertThat(column(id, "state")).isEqualTo("sending");
    awaitState(id, "pending");
    claimNext(queue, Map.of("worker", "w")).then().statusCode(200).body("id", equalTo(id));
    assertThat(attemptRows(id)).isEqualTo(2);
  }

  /** A new item of the queue, claimed: the claim's answer. */
  private static Response claimedItem(String queue) {
    enqueued(queue, "k", 1);
    return claimedNext(queue, "w");
  }

  /** A fresh item of the queue, failed for good by its one claim. */
  private static String failedItem(String queue, String key) {
    String id = enqueued(queue, key, 1);
    String token = claimedNext(queue, "w").path("claimToken");
    fail(id, Map.of("claimToken", token, "error", "x", "retryable", false))
        .then()
        .statusCode(200)
        .body("state", equalTo("failed"));
    return id;
  }

  private static Response operator(String action, String id) {
    Object body =
        switch (action) {
          case "reject" -> Map.of("reason", "no");
          case "resolve" -> Map.of("note", "the provider has it");
          case "approve" -> Map.of();
          default -> null;
        };
    return body == null
        ? io.restassured.RestAssured.post("/v1/items/{id}/" + action, id)
        : json().body(body).post("/v1/items/{id}/" + action, id);
  }

  /** A call whose path has a literal ':', answered 200. */
  private static Response batch(String path, Object body) {
    Response response = json().urlEncodingEnabled(false).body(body).post(path);
    response.then().statusCode(200);
    return response;
  }

  /**
   * Two items of a queue claimed in one batch: a complete entry for one, a fail entry for the
   * other.
   */
  private record ClaimedPair(
      String completed, String failed, Map<String, Object> complete, Map<String, Object> fail) {}

  private static ClaimedPair claimedPair(String queue) {
    enqueued(queue, "a", 1);
    enqueued(queue, "b", 2);
    List<Map<String, Object>> claimed =
        json().body(Map.of("max", 2)).post("/v1/queues/{q}/claim:batch", queue).path("items");
    String a = (String) claimed.get(0).get("id");
    String b = (String) claimed.get(1).get("id");
    return new ClaimedPair(
        a,
        b,
        Map.of("id", a, "claimToken", claimed.get(0).get("claimToken"), "externalRef", "r"),
        Map.of("id", b, "claimToken", claimed.get(1).get("claimToken"), "error", "x"));
  }

  private static double delta(MetricValues before, String counter, String queue, String... tags) {
    String[] labels = new String[tags.length + 2];
    labels[0] = "queue";
    labels[1] = queue;
    System.arraycopy(tags, 0, labels, 2, tags.length);
    return MetricValues.scrape().value(counter, labels) - before.value(counter, labels);
  }

  private long attemptRows(String id) throws SQLException {
    return count("SELECT count(*) FROM attempt WHERE item_id = CAST(? AS bigint)", id);
  }

  /** One column of the item's row, as text. */
  private String column(String id, String column) throws SQLException {
    return single("SELECT CAST(" + column + " AS text) FROM item WHERE id = CAST(? AS bigint)", id);
  }

  private long count(String sql, String... params) throws SQLException {
    return Long.parseLong(single(sql, params));
  }

  private String single(String sql, String... params) throws SQLException {
    try (Connection connection = dataSource.getConnection();
        PreparedStatement statement = connection.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        statement.setString(i + 1, params[i]);
      }
      try (ResultSet row = statement.executeQuery()) {
        assertThat(row.next()).isTrue();
        return row.getString(1);
      }
    }
  }
}
