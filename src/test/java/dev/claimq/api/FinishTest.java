package dev.claimq.api;

import static dev.claimq.Api.claim;
import static dev.claimq.Api.claimedNext;
import static dev.claimq.Api.complete;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.fail;
import static dev.claimq.Api.heartbeat;
import static dev.claimq.Api.item;
import static dev.claimq.Api.leaseOf;
import static dev.claimq.Api.problem;
import static dev.claimq.Api.retry;
import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.nullValue;

import dev.claimq.AsAdmin;
import dev.claimq.Race;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.restassured.response.Response;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

@QuarkusTest
class FinishTest extends AsAdmin {

  @Test
  void complete_marks_the_item_done_and_records_the_external_ref() {
    String queue = uniqueQueue("complete");
    String id = enqueued(queue, "k", 1);
    String token = claimedNext(queue, "w").path("claimToken");

    complete(id, Map.of("claimToken", token, "externalRef", "msg_1"))
        .then()
        .statusCode(200)
        .body("state", equalTo("done"))
        .body("externalRef", equalTo("msg_1"))
        .body("leaseExpiresAt", nullValue())
        .body("claimToken", nullValue());
    RestAssured.get("/v1/items/{id}/attempts", id)
        .then()
        .body("attempts.size()", equalTo(1))
        .body("attempts[0].outcome", equalTo("done"))
        .body("attempts[0].worker", equalTo("w"));
  }

  @Test
  void repeating_an_accepted_complete_answers_200_with_the_same_item() {
    String queue = uniqueQueue("recomplete");
    String id = enqueued(queue, "k", 1);
    String token = claimedNext(queue, "w").path("claimToken");
    Map<String, String> body = Map.of("claimToken", token, "externalRef", "msg_1");
    String first = complete(id, body).then().statusCode(200).extract().asString();

    complete(id, body).then().statusCode(200).body(equalTo(first));
  }

  @Test
  void concurrent_repeats_of_one_complete_all_answer_200_and_finish_the_attempt_once()
      throws Exception {
    // The repeats that wait for the first one's row lock find the item done when they get it;
    // their answer must say so (a replay), not explain the refusal from the state before it.
    String queue = uniqueQueue("recomplete-race");
    for (int round = 0; round < 10; round++) {
      String id = enqueued(queue, "k" + round, round);
      String token = claimedNext(queue, "w").path("claimToken");
      Map<String, String> body = Map.of("claimToken", token, "externalRef", "msg_" + round);

      List<Integer> statuses = Race.of(8, thread -> complete(id, body).statusCode());

      assertThat(statuses).as("round %d", round).containsOnly(200);
      RestAssured.get("/v1/items/{id}/attempts", id)
          .then()
          .body("attempts.size()", equalTo(1))
          .body("attempts[0].outcome", equalTo("done"));
    }
  }

  @Test
  void complete_with_a_token_that_never_claimed_the_item_is_409() {
    String queue = uniqueQueue("wrongtoken");
    String id = enqueued(queue, "k", 1);
    claimedNext(queue, "w");
    problem(complete(id, Map.of("claimToken", "forged")), 409, "stale-claim");
    item(id).then().body("state", equalTo("sending"));

    String pending = enqueued(queue, "never-claimed", 1);
    problem(complete(pending, Map.of("claimToken", "forged")), 409, "stale-claim");
    item(pending).then().body("state", equalTo("pending"));
  }

  @Test
  void heartbeat_and_fail_of_an_unknown_item_are_404_and_bad_bodies_400() {
    problem(heartbeat("123456789012", Map.of("claimToken", "t")), 404, "item-not-found");
    problem(fail("123456789012", Map.of("claimToken", "t", "error", "x")), 404, "item-not-found");
    String queue = uniqueQueue("hbbody");
    String id = enqueued(queue, "k", 1);
    String token = claimedNext(queue, "w").path("claimToken");
    problem(heartbeat(id, Map.of()), 400, "invalid-request")
        .body("errors[0].field", equalTo("claimToken"));
    problem(heartbeat(id, Map.of("claimToken", token, "leaseSeconds", 0)), 400, "invalid-request")
        .body("errors[0].field", equalTo("leaseSeconds"));
    item(id).then().body("state", equalTo("sending"));
  }

  @Test
  void complete_of_an_unknown_item_is_404_and_a_missing_token_is_400() {
    problem(complete("123456789012", Map.of("claimToken", "t")), 404, "item-not-found");
    String queue = uniqueQueue("notoken");
    String id = enqueued(queue, "k", 1);
    problem(complete(id, Map.of()), 400, "invalid-request")
        .body("errors[0].field", equalTo("claimToken"));
    problem(
        complete(id, Map.of("claimToken", "t", "externalRef", "r".repeat(501))),
        400,
        "invalid-request");
  }

  @Test
  void a_stale_token_is_409_after_the_lease_expired_and_another_worker_claimed() throws Exception {
    String queue = uniqueQueue("stale");
    String id = enqueued(queue, "k", Map.of("n", 1));
    Response first = claim(id, Map.of("worker", "slow", "leaseSeconds", 1));
    String staleToken = first.path("claimToken");
    String idempotencyKey = first.path("idempotencyKey");

    Response second = awaitClaim(id, "fast", Duration.ofSeconds(8));
    assertThat(second.<Integer>path("attempts")).isEqualTo(2);
    assertThat(second.<String>path("idempotencyKey")).isEqualTo(idempotencyKey);

    problem(complete(id, Map.of("claimToken", staleToken)), 409, "stale-claim");
    problem(heartbeat(id, Map.of("claimToken", staleToken)), 409, "stale-claim");
    problem(fail(id, Map.of("claimToken", staleToken, "error", "x")), 409, "stale-claim");
    complete(id, Map.of("claimToken", second.path("claimToken"))).then().statusCode(200);
    RestAssured.get("/v1/items/{id}/attempts", id)
        .then()
        .body("attempts.outcome", org.hamcrest.Matchers.contains("lease_expired", "done"))
        .body("attempts[0].error", containsString("lease expired"));
  }

  @Test
  void an_expired_lease_goes_back_to_pending_within_five_seconds() throws Exception {
    String queue = uniqueQueue("expire");
    String id = enqueued(queue, "k", 1);
    claim(id, Map.of("worker", "gone", "leaseSeconds", 1)).then().statusCode(200);

    Instant deadline = Instant.now().plusSeconds(1 + 5);
    while (!"pending".equals(item(id).path("state")) && Instant.now().isBefore(deadline)) {
      Thread.sleep(100);
    }
    item(id)
        .then()
        .body("state", equalTo("pending"))
        .body("leaseExpiresAt", nullValue())
        .body("lastError", containsString("lease expired"));
  }

  @Test
  void an_expired_lease_on_the_last_attempt_leaves_the_item_failed() throws Exception {
    String queue = uniqueQueue("expirelast");
    String id = enqueued(queue, Map.of("dedupeKey", "k", "payload", 1, "maxAttempts", 1));
    claim(id, Map.of("leaseSeconds", 1)).then().statusCode(200);

    Instant deadline = Instant.now().plusSeconds(6);
    while (!"failed".equals(item(id).path("state")) && Instant.now().isBefore(deadline)) {
      Thread.sleep(100);
    }
    item(id).then().body("state", equalTo("failed")).body("attempts", equalTo(1));
  }

  @Test
  void heartbeat_extends_the_lease_and_keeps_the_claim_alive() throws Exception {
    String queue = uniqueQueue("heartbeat");
    String id = enqueued(queue, "k", 1);
    String token = claim(id, Map.of("leaseSeconds", 2)).path("claimToken");

    for (int i = 0; i < 4; i++) { // 4 s of work on a 2 s lease
      Thread.sleep(1000);
      heartbeat(id, Map.of("claimToken", token))
          .then()
          .statusCode(200)
          .body("state", equalTo("sending"));
    }
    Response extended = heartbeat(id, Map.of("claimToken", token, "leaseSeconds", 600));
    extended.then().statusCode(200);
    Duration lease = leaseOf(extended);
    assertThat(lease).isEqualTo(Duration.ofSeconds(600));
    // A heartbeat without leaseSeconds then extends by the length last set, as documented.
    assertThat(leaseOf(heartbeat(id, Map.of("claimToken", token))))
        .isEqualTo(Duration.ofSeconds(600));
    complete(id, Map.of("claimToken", token)).then().statusCode(200);
    problem(heartbeat(id, Map.of("claimToken", token)), 409, "stale-claim");
  }

  @Test
  void a_retryable_failure_goes_back_to_pending_after_a_backoff() {
    String queue = uniqueQueue("retry");
    String id = enqueued(queue, "k", 1);
    String token = claimedNext(queue, "w").path("claimToken");

    Response failed = fail(id, Map.of("claimToken", token, "error", "SMTP 451"));

    failed
        .then()
        .statusCode(200)
        .body("state", equalTo("pending"))
        .body("lastError", equalTo("SMTP 451"));
    Duration backoff =
        Duration.between(
            Instant.parse(failed.path("updatedAt")), Instant.parse(failed.path("runAt")));
    // First retry: between half and all of the 10 s base.
    assertThat(backoff).isBetween(Duration.ofSeconds(5), Duration.ofSeconds(10));
    dev.claimq.Api.json().post("/v1/queues/{q}/claim", queue).then().statusCode(204);
  }

  @Test
  void retryAfterSeconds_replaces_the_computed_backoff() {
    String queue = uniqueQueue("retryafter");
    String id = enqueued(queue, "k", 1);
    String token = claimedNext(queue, "w").path("claimToken");

    Response failed = fail(id, Map.of("claimToken", token, "error", "429", "retryAfterSeconds", 0));

    failed.then().statusCode(200).body("state", equalTo("pending"));
    assertThat(Instant.parse(failed.path("runAt")))
        .isEqualTo(Instant.parse(failed.path("updatedAt")));
    claimedNext(queue, "w2").then().body("id", equalTo(id)).body("attempts", equalTo(2));
  }

  @Test
  void a_permanent_failure_stays_failed_at_once() {
    String queue = uniqueQueue("permanent");
    String id = enqueued(queue, "k", 1);
    String token = claimedNext(queue, "w").path("claimToken");

    fail(id, Map.of("claimToken", token, "error", "invalid address", "retryable", false))
        .then()
        .statusCode(200)
        .body("state", equalTo("failed"))
        .body("attempts", equalTo(1));
  }

  @Test
  void retries_stop_at_the_cap_then_an_operator_retry_starts_over_with_the_same_idempotency_key() {
    String queue = uniqueQueue("cap");
    String id = enqueued(queue, Map.of("dedupeKey", "k", "payload", 1, "maxAttempts", 3));
    String idempotencyKey = item(id).path("idempotencyKey");

    for (int attempt = 1; attempt <= 3; attempt++) {
      Response claimed = claimedNext(queue, "w");
      assertThat(claimed.<Integer>path("attempts")).isEqualTo(attempt);
      assertThat(claimed.<String>path("idempotencyKey")).isEqualTo(idempotencyKey);
      fail(
              id,
              Map.of(
                  "claimToken",
                  claimed.path("claimToken"),
                  "error",
                  "boom " + attempt,
                  "retryAfterSeconds",
                  0))
          .then()
          .statusCode(200)
          .body("state", equalTo(attempt < 3 ? "pending" : "failed"));
    }
    dev.claimq.Api.json().post("/v1/queues/{q}/claim", queue).then().statusCode(204);

    retry(id)
        .then()
        .statusCode(200)
        .body("state", equalTo("pending"))
        .body("attempts", equalTo(0))
        .body("idempotencyKey", equalTo(idempotencyKey));
    claimedNext(queue, "w").then().body("id", equalTo(id)).body("attempts", equalTo(1));
    RestAssured.get("/v1/items/{id}/attempts", id)
        .then()
        .body("attempts.outcome", org.hamcrest.Matchers.contains("retry", "retry", "failed", null))
        .body("attempts.error[2]", equalTo("boom 3"));
  }

  @Test
  void repeating_an_accepted_fail_answers_200_without_counting_twice() {
    String queue = uniqueQueue("refail");
    String id = enqueued(queue, "k", 1);
    String token = claimedNext(queue, "w").path("claimToken");
    Map<String, Object> body = Map.of("claimToken", token, "error", "boom");
    fail(id, body).then().statusCode(200).body("state", equalTo("pending"));

    fail(id, body)
        .then()
        .statusCode(200)
        .body("state", equalTo("pending"))
        .body("attempts", equalTo(1));
    RestAssured.get("/v1/items/{id}/attempts", id).then().body("attempts.size()", equalTo(1));
  }

  @Test
  void a_failure_reason_is_stored_with_secrets_redacted() {
    String queue = uniqueQueue("redact");
    String id = enqueued(queue, "k", 1);
    String token = claimedNext(queue, "w").path("claimToken");
    String reason =
        "POST https://api:s3cr3tpw@mail.example.com failed\u0007: password=hunter2 "
            + "Authorization: Bearer abc.def-ghi_jkl123";

    Response failed = fail(id, Map.of("claimToken", token, "error", reason));

    failed
        .then()
        .statusCode(200)
        .body("lastError", not(containsString("hunter2")))
        .body("lastError", not(containsString("s3cr3tpw")))
        .body("lastError", not(containsString("abc.def-ghi_jkl123")))
        .body("lastError", not(containsString("\u0007")))
        .body("lastError", containsString("password=[REDACTED]"));
    RestAssured.get("/v1/items/{id}/attempts", id)
        .then()
        .body("attempts[0].error", not(containsString("hunter2")));
  }

  @Test
  void fail_requires_a_reason_and_a_valid_retry_after() {
    String queue = uniqueQueue("failbody");
    String id = enqueued(queue, "k", 1);
    String token = claimedNext(queue, "w").path("claimToken");
    problem(fail(id, Map.of("claimToken", token)), 400, "invalid-request")
        .body("errors[0].field", equalTo("error"));
    // Nothing would be left of it once its control characters are dropped.
    problem(
            fail(id, Map.of("claimToken", token, "error", "\u0000\u0001\u007f\u0085 ")),
            400,
            "invalid-request")
        .body("errors[0].field", equalTo("error"));
    Map<String, Object> negative = new HashMap<>(Map.of("claimToken", token, "error", "x"));
    negative.put("retryAfterSeconds", -1);
    problem(fail(id, negative), 400, "invalid-request");
    problem(
        fail(id, Map.of("claimToken", token, "error", "x", "retryable", "yes")),
        400,
        "malformed-request");
    item(id).then().body("state", equalTo("sending"));
  }

  /** Claims the item as soon as the reaper has released it. */
  private static Response awaitClaim(String id, String worker, Duration timeout)
      throws InterruptedException {
    Instant deadline = Instant.now().plus(timeout);
    while (Instant.now().isBefore(deadline)) {
      Response response = claim(id, Map.of("worker", worker));
      if (response.statusCode() == 200) {
        return response;
      }
      Thread.sleep(100);
    }
    throw new AssertionError("item " + id + " was not released within " + timeout);
  }
}
