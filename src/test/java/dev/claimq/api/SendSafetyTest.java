package dev.claimq.api;

import static dev.claimq.Api.awaitState;
import static dev.claimq.Api.claim;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.fail;
import static dev.claimq.Api.item;
import static dev.claimq.Api.json;
import static dev.claimq.Api.problem;
import static dev.claimq.Api.retry;
import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.notNullValue;
import static org.hamcrest.Matchers.nullValue;
import static org.hamcrest.Matchers.startsWith;

import dev.claimq.AsAdmin;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.restassured.response.Response;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The send-safety features: a send intent that marks the next claim possiblySent (or holds the item
 * for a human), and a crash loop quarantined before its attempts run out. Leases here are 1 s and
 * the reaper runs every second, so each expiry is waited for.
 */
@QuarkusTest
class SendSafetyTest extends AsAdmin {

  @Test
  void a_claim_after_an_intent_and_an_expired_lease_says_possibly_sent_with_the_prior_attempt()
      throws Exception {
    String queue = uniqueQueue("intent");
    String id = enqueued(queue, "k", 1);
    String token = claim(id, Map.of("worker", "crashed", "leaseSeconds", 1)).path("claimToken");
    intent(id, token).then().statusCode(200).body("state", equalTo("sending"));
    Instant first = Instant.parse(attempts(id).get(0).get("intentAt").toString());
    intent(id, token).then().statusCode(200); // repeat-safe: the first intent's time stays
    assertThat(attempts(id).get(0).get("intentAt").toString()).isEqualTo(first.toString());

    awaitState(id, "pending");
    Response next = claim(id, Map.of("worker", "careful"));

    next.then()
        .statusCode(200)
        .body("possiblySent", equalTo(true))
        .body("priorAttempts.size()", equalTo(1))
        .body("priorAttempts[0].worker", equalTo("crashed"))
        .body("priorAttempts[0].outcome", equalTo("lease_expired"))
        .body("priorAttempts[0].intentAt", notNullValue())
        .body("priorAttempts[0].error", startsWith("lease expired"));
  }

  @Test
  void an_expired_lease_without_an_intent_is_not_possibly_sent() throws Exception {
    String queue = uniqueQueue("nointent");
    String id = enqueued(queue, "k", 1);
    claim(id, Map.of("leaseSeconds", 1))
        .then()
        .statusCode(200)
        .body("possiblySent", equalTo(false));

    awaitState(id, "pending");

    claim(id, Map.of())
        .then()
        .statusCode(200)
        .body("possiblySent", equalTo(false))
        .body("priorAttempts.size()", equalTo(1))
        .body("priorAttempts[0].intentAt", nullValue());
  }

  @Test
  void under_hold_an_intent_then_an_expired_lease_fails_the_item_as_outcome_unknown()
      throws Exception {
    String queue = uniqueQueue("hold");
    policy(queue, Map.of("onUnknownOutcome", "hold"));
    String id = enqueued(queue, "k", 1);
    String token = claim(id, Map.of("leaseSeconds", 1)).path("claimToken");
    intent(id, token).then().statusCode(200);

    awaitState(id, "failed");

    item(id)
        .then()
        .body("attempts", equalTo(1))
        .body("lastError", startsWith("outcome unknown: lease expired"));
  }

  @Test
  void a_retryable_fail_that_does_not_know_whether_it_sent_flags_or_holds_by_policy() {
    String queue = uniqueQueue("unknown");
    String id = enqueued(queue, "k", 1);
    String token = claim(id, Map.of()).path("claimToken");
    fail(
            id,
            Map.of(
                "claimToken", token, "error", "timeout", "sent", "unknown", "retryAfterSeconds", 0))
        .then()
        .statusCode(200)
        .body("state", equalTo("pending"));
    claim(id, Map.of()).then().statusCode(200).body("possiblySent", equalTo(true));

    String held = uniqueQueue("unknown-held");
    policy(held, Map.of("onUnknownOutcome", "hold"));
    String other = enqueued(held, "k", 1);
    String heldToken = claim(other, Map.of()).path("claimToken");
    fail(other, Map.of("claimToken", heldToken, "error", "timeout", "sent", "unknown"))
        .then()
        .statusCode(200)
        .body("state", equalTo("failed"))
        .body("lastError", equalTo("outcome unknown: timeout"));
    assertThat(attempts(other).get(0).get("sentUnknown")).isEqualTo(true);
  }

  @Test
  void an_intent_with_a_stale_token_is_409_and_records_nothing() {
    String queue = uniqueQueue("stale-intent");
    String id = enqueued(queue, "k", 1);
    claim(id, Map.of()).then().statusCode(200);

    problem(intent(id, "forged"), 409, "stale-claim");
    problem(intent("999999999999", "forged"), 404, "item-not-found");
    assertThat(attempts(id).get(0).get("intentAt")).isNull();
  }

  @Test
  void leases_expiring_crash_loop_after_times_in_a_row_fail_the_item_before_its_attempts_run_out()
      throws Exception {
    String queue = uniqueQueue("crashloop");
    policy(queue, Map.of("crashLoopAfter", 2));
    String id = enqueued(queue, Map.of("dedupeKey", "poison", "payload", 1, "maxAttempts", 5));

    claim(id, Map.of("leaseSeconds", 1)).then().statusCode(200);
    awaitState(id, "pending"); // one expiry: not yet a loop
    claim(id, Map.of("leaseSeconds", 1)).then().statusCode(200);
    awaitState(id, "failed");

    item(id)
        .then()
        .body("attempts", equalTo(2))
        .body("maxAttempts", equalTo(5))
        .body("lastError", startsWith("crash loop: 2 leases expired in a row; lease expired"));
  }

  @Test
  void an_operators_retry_starts_a_crash_loop_count_afresh() throws Exception {
    String queue = uniqueQueue("loop-retried");
    policy(queue, Map.of("crashLoopAfter", 2));
    String id = enqueued(queue, Map.of("dedupeKey", "poison", "payload", 1, "maxAttempts", 5));
    claim(id, Map.of("leaseSeconds", 1)).then().statusCode(200);
    awaitState(id, "pending");
    claim(id, Map.of("leaseSeconds", 1)).then().statusCode(200);
    awaitState(id, "failed");

    // A fresh budget of attempts: one expiry after the retry is one, not the third of a loop.
    retry(id).then().statusCode(200);
    claim(id, Map.of("leaseSeconds", 1)).then().statusCode(200);
    awaitState(id, "pending");
    item(id).then().body("attempts", equalTo(1)).body("lastError", startsWith("lease expired"));
  }

  @Test
  void a_lease_expiry_after_a_fail_is_not_part_of_a_crash_loop() throws Exception {
    String queue = uniqueQueue("no-loop");
    policy(queue, Map.of("crashLoopAfter", 2));
    String id = enqueued(queue, Map.of("dedupeKey", "k", "payload", 1, "maxAttempts", 5));
    String token = claim(id, Map.of()).path("claimToken");
    fail(id, Map.of("claimToken", token, "error", "busy", "retryAfterSeconds", 0));

    claim(id, Map.of("leaseSeconds", 1)).then().statusCode(200);
    awaitState(id, "pending");

    item(id).then().body("attempts", equalTo(2)).body("lastError", startsWith("lease expired"));
  }

  static Response intent(String id, String token) {
    return json().body(Map.of("claimToken", token)).post("/v1/items/{id}/intent", id);
  }

  static void policy(String queue, Map<String, ?> policy) {
    json().body(policy).put("/v1/queues/{queue}/policy", queue).then().statusCode(200);
  }

  static List<Map<String, Object>> attempts(String id) {
    return RestAssured.get("/v1/items/{id}/attempts", id).then().extract().path("attempts");
  }

  /** Waits (up to 6 s: a 1 s lease and a reaper every second) for the item to reach the state. */
}
