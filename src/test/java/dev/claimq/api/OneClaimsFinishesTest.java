package dev.claimq.api;

import static dev.claimq.Api.claim;
import static dev.claimq.Api.complete;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.fail;
import static dev.claimq.Api.item;
import static dev.claimq.Api.json;
import static dev.claimq.Api.problem;
import static dev.claimq.Api.release;
import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;

import dev.claimq.AsAdmin;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A claim ends once, by its complete, fail or release, and only a repeat of that same finish is a
 * replay (200). Another finish with the same token comes after the claim ended: a 409 that changes
 * nothing, except a complete with the provider's reference, which is a late success.
 */
@QuarkusTest
class OneClaimsFinishesTest extends AsAdmin {

  @Test
  void a_fail_after_the_claims_own_release_is_a_stale_claim_not_a_repeat() {
    String id = enqueued(uniqueQueue("release-then-fail"), "k", 1);
    String token = claim(id, Map.of()).path("claimToken");
    release(id, Map.of("claimToken", token)).then().statusCode(200);

    problem(
        fail(id, Map.of("claimToken", token, "error", "boom", "retryable", false)),
        409,
        "stale-claim");

    item(id).then().body("state", equalTo("pending")).body("lastError", nullValue());
    attempts(id).then().body("attempts.outcome", contains("released"));
  }

  @Test
  void a_release_after_the_claims_own_fail_is_a_stale_claim_not_a_repeat() {
    String id = enqueued(uniqueQueue("fail-then-release"), "k", 1);
    String token = claim(id, Map.of()).path("claimToken");
    fail(id, Map.of("claimToken", token, "error", "boom")).then().statusCode(200);
    String runAt = item(id).path("runAt");

    problem(release(id, Map.of("claimToken", token, "delaySeconds", 86400)), 409, "stale-claim");

    item(id).then().body("runAt", equalTo(runAt));
    attempts(id).then().body("attempts.outcome", contains("retry"));
  }

  @Test
  void a_batch_fail_after_the_claims_own_release_is_a_stale_claim_too() {
    String id = enqueued(uniqueQueue("release-then-batch-fail"), "k", 1);
    String token = claim(id, Map.of()).path("claimToken");
    release(id, Map.of("claimToken", token)).then().statusCode(200);

    json()
        .body(
            Map.of(
                "items",
                List.of(
                    Map.of("id", id, "claimToken", token, "error", "boom", "retryable", false))))
        .post("/v1/items:fail")
        .then()
        .statusCode(200)
        .body("results[0].status", equalTo(409));
    item(id).then().body("state", equalTo("pending")).body("lastError", nullValue());
  }

  @Test
  void a_complete_after_the_claims_own_fail_records_the_send_as_a_late_success() {
    // The worker timed out on the provider and said so, then learned the send went out.
    String id = enqueued(uniqueQueue("fail-then-complete"), "k", 1);
    String token = claim(id, Map.of()).path("claimToken");
    fail(
            id,
            Map.of(
                "claimToken",
                token,
                "error",
                "timeout",
                "sent",
                "unknown",
                "retryAfterSeconds",
                3600))
        .then()
        .statusCode(200)
        .body("state", equalTo("pending"));

    problem(
            complete(id, Map.of("claimToken", token, "externalRef", "msg_late")),
            409,
            "stale-claim")
        .body("detail", containsString("recorded as a late success"));

    item(id).then().body("state", equalTo("done")).body("externalRef", equalTo("msg_late"));
    attempts(id).then().body("attempts[0].lateSuccess.externalRef", equalTo("msg_late"));
    // Its repeat is no second late success, and no replay either: the claim ended with the fail.
    problem(
        complete(id, Map.of("claimToken", token, "externalRef", "msg_late")), 409, "stale-claim");
  }

  @Test
  void a_complete_after_the_claims_own_permanent_fail_turns_the_failed_item_done() {
    String id = enqueued(uniqueQueue("failed-then-complete"), "k", 1);
    String token = claim(id, Map.of()).path("claimToken");
    fail(id, Map.of("claimToken", token, "error", "rejected", "retryable", false))
        .then()
        .body("state", equalTo("failed"));

    problem(complete(id, Map.of("claimToken", token, "externalRef", "msg_9")), 409, "stale-claim");

    item(id).then().body("state", equalTo("done")).body("externalRef", equalTo("msg_9"));
  }

  @Test
  void a_repeated_complete_with_another_external_ref_is_refused_and_the_first_stands() {
    String id = enqueued(uniqueQueue("complete-twice"), "k", 1);
    String token = claim(id, Map.of()).path("claimToken");
    complete(id, Map.of("claimToken", token, "externalRef", "msg_A")).then().statusCode(200);

    problem(
            complete(id, Map.of("claimToken", token, "externalRef", "msg_B")),
            409,
            "different-report")
        .body("detail", containsString("'msg_A'"));
    problem(complete(id, Map.of("claimToken", token)), 409, "different-report");

    complete(id, Map.of("claimToken", token, "externalRef", "msg_A")).then().statusCode(200);
    item(id).then().body("externalRef", equalTo("msg_A"));
  }

  @Test
  void a_batch_that_completes_one_claim_twice_applies_the_first_entry_and_refuses_the_other() {
    // Either order: the entry sent first is the one stored, as if the two had come one by one.
    for (List<String> refs : List.of(List.of("msg_A", "msg_B"), List.of("msg_B", "msg_A"))) {
      String id = enqueued(uniqueQueue("batch-complete-twice"), "k", 1);
      String token = claim(id, Map.of()).path("claimToken");

      List<Integer> statuses =
          batchStatuses(
              "/v1/items:complete",
              Map.of("id", id, "claimToken", token, "externalRef", refs.get(0)),
              Map.of("id", id, "claimToken", token, "externalRef", refs.get(1)));

      assertThat(statuses).as(refs.toString()).containsExactly(200, 409);
      item(id).then().body("externalRef", equalTo(refs.get(0)));
    }
  }

  @Test
  void a_repeated_fail_with_another_report_is_refused_and_the_first_stands() {
    String id = enqueued(uniqueQueue("fail-twice"), "k", 1);
    String token = claim(id, Map.of()).path("claimToken");
    fail(id, Map.of("claimToken", token, "error", "first")).then().statusCode(200);

    // The first fail retries: a permanent fail with its token is not its repeat.
    problem(
            fail(id, Map.of("claimToken", token, "error", "first", "retryable", false)),
            409,
            "different-report")
        .body("detail", containsString("'first'"));
    problem(fail(id, Map.of("claimToken", token, "error", "second")), 409, "different-report");

    fail(id, Map.of("claimToken", token, "error", "first")).then().statusCode(200);
    item(id).then().body("state", equalTo("pending")).body("lastError", equalTo("first"));

    // A permanent fail ends the attempts as a last retryable one would: a retryable repeat of
    // it cannot be told from that one's, so it is a repeat, and the item stays failed.
    String permanent = enqueued(uniqueQueue("fail-twice-permanent"), "k", 1);
    String its = claim(permanent, Map.of()).path("claimToken");
    fail(permanent, Map.of("claimToken", its, "error", "422", "retryable", false))
        .then()
        .statusCode(200);
    fail(permanent, Map.of("claimToken", its, "error", "422"))
        .then()
        .statusCode(200)
        .body("state", equalTo("failed"));
  }

  @Test
  void a_repeated_fail_with_another_sent_is_refused_and_the_first_stands() {
    for (List<String> sent : List.of(List.of("no", "unknown"), List.of("unknown", "no"))) {
      String id = enqueued(uniqueQueue("fail-sent-twice"), "k", 1);
      String token = claim(id, Map.of()).path("claimToken");
      Map<String, Object> first =
          Map.of("claimToken", token, "error", "timeout", "sent", sent.get(0));
      fail(id, first).then().statusCode(200);

      problem(
              fail(id, Map.of("claimToken", token, "error", "timeout", "sent", sent.get(1))),
              409,
              "different-report")
          .body("detail", containsString("sent"));
      fail(id, first).then().statusCode(200);
      attempts(id)
          .then()
          .body("attempts.sentUnknown", contains(sent.get(0).equals("unknown")))
          .body("attempts.outcome", contains("retry"));
    }
  }

  @Test
  void a_repeated_fail_with_another_retry_after_is_refused_and_the_first_stands() {
    String id = enqueued(uniqueQueue("fail-retry-after-twice"), "k", 1);
    String token = claim(id, Map.of()).path("claimToken");
    Map<String, Object> first =
        Map.of("claimToken", token, "error", "429", "retryAfterSeconds", 60);
    fail(id, first).then().statusCode(200);
    String runAt = item(id).path("runAt");

    problem(
            fail(id, Map.of("claimToken", token, "error", "429", "retryAfterSeconds", 3600)),
            409,
            "different-report")
        .body("detail", containsString("'429'"));
    fail(id, first).then().statusCode(200);
    // Without retryAfterSeconds the service's backoff was asked for: any delay is that.
    fail(id, Map.of("claimToken", token, "error", "429")).then().statusCode(200);
    item(id).then().body("state", equalTo("pending")).body("runAt", equalTo(runAt));
  }

  @Test
  void a_repeated_fail_that_was_held_for_a_human_is_a_repeat_despite_the_prefix() {
    String queue = uniqueQueue("fail-held-twice");
    json()
        .body(Map.of("onUnknownOutcome", "hold"))
        .put("/v1/queues/{queue}/policy", queue)
        .then()
        .statusCode(200);
    String id = enqueued(queue, "k", 1);
    String token = claim(id, Map.of()).path("claimToken");
    Map<String, Object> body = Map.of("claimToken", token, "error", "timeout", "sent", "unknown");
    fail(id, body).then().statusCode(200).body("state", equalTo("failed"));

    fail(id, body).then().statusCode(200).body("lastError", equalTo("outcome unknown: timeout"));
  }

  @Test
  void a_batch_that_fails_one_claim_twice_applies_the_first_entry_and_refuses_the_other() {
    for (List<String> errors : List.of(List.of("A", "B"), List.of("B", "A"))) {
      String id = enqueued(uniqueQueue("batch-fail-twice"), "k", 1);
      String token = claim(id, Map.of()).path("claimToken");

      List<Integer> statuses =
          batchStatuses(
              "/v1/items:fail",
              Map.of("id", id, "claimToken", token, "error", errors.get(0), "retryable", false),
              Map.of("id", id, "claimToken", token, "error", errors.get(1)));

      assertThat(statuses).as(errors.toString()).containsExactly(200, 409);
      item(id).then().body("lastError", equalTo(errors.get(0))).body("state", equalTo("failed"));
    }
  }

  @Test
  void a_batch_that_fails_one_claim_twice_keeps_the_first_entrys_sent_with_its_error() {
    // The attempt's sentUnknown and the item's lastError come from one entry, the first: never
    // one from each, which would answer 200 for a report the attempt does not keep.
    for (List<String> sent : List.of(List.of("no", "unknown"), List.of("unknown", "no"))) {
      String id = enqueued(uniqueQueue("batch-fail-sent-twice"), "k", 1);
      String token = claim(id, Map.of()).path("claimToken");

      List<Integer> statuses =
          batchStatuses(
              "/v1/items:fail",
              Map.of("id", id, "claimToken", token, "error", "timeout", "sent", sent.get(0)),
              Map.of("id", id, "claimToken", token, "error", "timeout", "sent", sent.get(1)));

      assertThat(statuses).as(sent.toString()).containsExactly(200, 409);
      attempts(id)
          .then()
          .body("attempts.sentUnknown", contains(sent.get(0).equals("unknown")))
          .body("attempts.outcome", contains("retry"));
    }
  }

  @Test
  void a_repeated_release_with_another_delay_is_refused_and_the_first_stands() {
    String id = enqueued(uniqueQueue("release-twice"), "k", 1);
    String token = claim(id, Map.of()).path("claimToken");
    release(id, Map.of("claimToken", token, "delaySeconds", 60)).then().statusCode(200);
    String runAt = item(id).path("runAt");

    problem(release(id, Map.of("claimToken", token)), 409, "different-report")
        .body("detail", containsString("due again after 60 seconds"));
    problem(
        release(id, Map.of("claimToken", token, "delaySeconds", 86400)), 409, "different-report");

    release(id, Map.of("claimToken", token, "delaySeconds", 60)).then().statusCode(200);
    item(id).then().body("state", equalTo("pending")).body("runAt", equalTo(runAt));
    attempts(id).then().body("attempts.outcome", contains("released"));
  }

  /** The status of each entry of a batch finish, in the order sent. */
  @SafeVarargs
  private static List<Integer> batchStatuses(String path, Map<String, Object>... entries) {
    return json()
        .body(Map.of("items", List.of(entries)))
        .post(path)
        .then()
        .statusCode(200)
        .extract()
        .path("results.status");
  }

  private static io.restassured.response.Response attempts(String id) {
    return RestAssured.get("/v1/items/{id}/attempts", id);
  }
}
