package dev.claimq.api;

import static dev.claimq.Api.allQueues;
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
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;

import dev.claimq.AsAdmin;
import dev.claimq.Race;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.restassured.response.Response;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Operators' queue policies, pause and resume; workers' release; operators' resolve. */
@QuarkusTest
class QueuePolicyTest extends AsAdmin {

  @Test
  void a_queue_without_a_policy_shows_the_service_defaults_in_effect() {
    String queue = uniqueQueue("nopolicy");
    RestAssured.get("/v1/queues/{queue}/policy", queue)
        .then()
        .statusCode(200)
        .body("maxAttempts", nullValue())
        .body("paused", equalTo(false))
        .body("updatedBy", nullValue())
        .body("effective.maxAttempts", equalTo(5))
        .body("effective.leaseSeconds", equalTo(60))
        .body("effective.crashLoopAfter", equalTo(3))
        .body("effective.onUnknownOutcome", equalTo("retry"))
        .body("effective.maxReleases", equalTo(10));
  }

  @Test
  void a_policy_sets_the_defaults_of_new_items_and_claims_and_is_logged_with_the_key() {
    String queue = uniqueQueue("policy");
    json()
        .body(Map.of("maxAttempts", 2, "leaseSeconds", 300))
        .put("/v1/queues/{queue}/policy", queue)
        .then()
        .statusCode(200)
        .body("maxAttempts", equalTo(2))
        .body("effective.leaseSeconds", equalTo(300))
        .body("updatedBy", equalTo("dev-admin"));

    String id = enqueued(queue, "k", 1);
    item(id).then().body("maxAttempts", equalTo(2));
    String explicit = enqueued(queue, Map.of("dedupeKey", "own", "payload", 1, "maxAttempts", 4));
    item(explicit).then().body("maxAttempts", equalTo(4)); // the enqueue's own value wins
    Response claimed = claim(id, Map.of());
    long lease =
        java.time.Duration.between(
                java.time.Instant.parse(claimed.path("updatedAt")),
                java.time.Instant.parse(claimed.path("leaseExpiresAt")))
            .toSeconds();
    assertThat(lease).isBetween(299L, 300L);

    List<Map<String, Object>> actions =
        RestAssured.get("/v1/queues/{queue}/actions", queue).then().extract().path("actions");
    assertThat(actions).hasSize(1);
    assertThat(actions.get(0))
        .containsEntry("action", "policy")
        .containsEntry("actor", "dev-admin");
    assertThat((Map<String, Object>) actions.get(0).get("policy")).containsEntry("maxAttempts", 2);
  }

  @Test
  void a_policy_out_of_range_is_a_400_that_names_the_field_and_changes_nothing() {
    String queue = uniqueQueue("badpolicy");
    problem(
            json()
                .body(Map.of("onUnknownOutcome", "maybe"))
                .put("/v1/queues/{queue}/policy", queue),
            400,
            "invalid-request")
        .body("errors[0].field", equalTo("onUnknownOutcome"));
    problem(
            json().body(Map.of("maxAttempts", 101)).put("/v1/queues/{queue}/policy", queue),
            400,
            "invalid-request")
        .body("errors[0].field", equalTo("maxAttempts"));
    RestAssured.get("/v1/queues/{queue}/actions", queue).then().body("actions.size()", equalTo(0));
  }

  @Test
  void a_queue_backoff_sets_the_retry_delay_of_single_and_batch_fails() {
    String queue = uniqueQueue("backoff");
    json()
        .body(Map.of("backoffBaseSeconds", 100, "backoffCapSeconds", 100))
        .put("/v1/queues/{queue}/policy", queue)
        .then()
        .statusCode(200)
        .body("effective.backoffBaseSeconds", equalTo(100));
    String single = enqueued(queue, "single", 1);
    String batched = enqueued(queue, "batched", 1);
    String token = claim(single, Map.of()).path("claimToken");
    String other = claim(batched, Map.of()).path("claimToken");

    java.time.Instant before = java.time.Instant.now();
    fail(single, Map.of("claimToken", token, "error", "busy")).then().statusCode(200);
    json()
        .body(Map.of("items", List.of(Map.of("id", batched, "claimToken", other, "error", "busy"))))
        .post("/v1/items:fail")
        .then()
        .statusCode(200);

    // The first retry waits half to all of the base: 50 to 100 s here, 5 to 10 s by default.
    for (String id : List.of(single, batched)) {
      java.time.Instant due = java.time.Instant.parse(item(id).path("runAt"));
      assertThat(due).isBetween(before.plusSeconds(49), before.plusSeconds(102));
    }
    problem(
            json()
                .body(Map.of("backoffBaseSeconds", 100, "backoffCapSeconds", 10))
                .put("/v1/queues/{queue}/policy", queue),
            400,
            "invalid-request")
        .body("errors[0].field", equalTo("backoffCapSeconds"));
  }

  @Test
  void a_cap_below_the_base_the_service_fills_in_is_refused_not_raised_to_it() {
    // The service's base is 10 s and its cap 1 h. A cap of 5 alone was stored and answered as 5
    // while retries used 10; a base of 7200 alone ran with a cap of 7200 that no one set.
    String queue = uniqueQueue("backoff-defaults");
    for (Map<String, Object> body :
        List.<Map<String, Object>>of(
            Map.of("backoffCapSeconds", 5), Map.of("backoffBaseSeconds", 7200))) {
      String field = body.keySet().iterator().next();
      problem(json().body(body).put("/v1/queues/{queue}/policy", queue), 400, "invalid-request")
          .body("errors[0].field", equalTo(field))
          .body("detail", containsString("the service's"));
    }
    RestAssured.get("/v1/queues/{queue}/policy", queue)
        .then()
        .statusCode(200)
        .header("ETag", equalTo("\"0\""))
        .body("backoffCapSeconds", nullValue())
        .body("backoffBaseSeconds", nullValue());
    json()
        .body(Map.of("backoffCapSeconds", 10))
        .put("/v1/queues/{queue}/policy", queue)
        .then()
        .statusCode(200)
        .body("effective.backoffCapSeconds", equalTo(10))
        .body("effective.backoffBaseSeconds", equalTo(10));
  }

  @Test
  void a_paused_queue_accepts_enqueues_but_answers_claims_204_until_resumed() {
    String queue = uniqueQueue("paused");
    String id = enqueued(queue, "k", 1);
    RestAssured.post("/v1/queues/{queue}/pause", queue)
        .then()
        .statusCode(200)
        .body("paused", equalTo(true));

    enqueue(queue, Map.of("dedupeKey", "while-paused", "payload", 1)).then().statusCode(201);
    claimNext(queue, Map.of()).then().statusCode(204);
    claim(id, Map.of()).then().statusCode(204);
    json()
        .body(Map.of("max", 5))
        .post("/v1/queues/{queue}/claim:batch", queue)
        .then()
        .statusCode(204);
    List<Map<String, Object>> queues = allQueues();
    assertThat(queues)
        .filteredOn(q -> queue.equals(q.get("queue")))
        .singleElement()
        .satisfies(q -> assertThat(q.get("paused")).isEqualTo(true));

    RestAssured.post("/v1/queues/{queue}/resume", queue).then().statusCode(200);
    claim(id, Map.of()).then().statusCode(200);
    List<Map<String, Object>> actions =
        RestAssured.get("/v1/queues/{queue}/actions", queue).then().extract().path("actions");
    assertThat(actions).extracting(a -> a.get("action")).containsExactly("pause", "resume");
  }

  @Test
  void a_long_poll_parked_on_a_paused_queue_keeps_waiting_and_gets_the_item_on_resume()
      throws Exception {
    String queue = uniqueQueue("paused-poll");
    RestAssured.post("/v1/queues/{queue}/pause", queue).then().statusCode(200);
    enqueued(queue, "k", 1);

    CompletableFuture<Response> parked =
        CompletableFuture.supplyAsync(() -> claimNext(queue, Map.of("waitSeconds", 15)));
    Thread.sleep(2_000); // two fallback looks, both refused by the pause
    assertThat(parked).isNotDone();

    RestAssured.post("/v1/queues/{queue}/resume", queue).then().statusCode(200);

    parked.get(10, TimeUnit.SECONDS).then().statusCode(200).body("queue", equalTo(queue));
  }

  @Test
  void a_resume_racing_a_first_pause_answers_the_queue_as_each_asked() throws Exception {
    // The resume's statement may see no policy row while the pause inserts one: answering the
    // pause read back afterwards, it said "resumed" with paused true.
    List<String> wrong = new ArrayList<>();
    for (int round = 0; round < 40; round++) {
      String queue = uniqueQueue("pauserace");
      List<Response> answers =
          Race.of(
              2, i -> RestAssured.post("/v1/queues/{q}/" + (i == 0 ? "pause" : "resume"), queue));
      for (int i = 0; i < 2; i++) {
        Response answer = answers.get(i);
        boolean asked = i == 0;
        if (answer.statusCode() != 200 || !Boolean.valueOf(asked).equals(answer.path("paused"))) {
          wrong.add(
              (asked ? "pause" : "resume")
                  + " of "
                  + queue
                  + ": "
                  + answer.statusCode()
                  + " "
                  + answer.asString());
        }
      }
    }
    assertThat(wrong).isEmpty();
  }

  @Test
  void release_hands_the_claim_back_without_using_an_attempt_and_is_bounded() {
    String queue = uniqueQueue("release");
    json()
        .body(Map.of("maxReleases", 2))
        .put("/v1/queues/{queue}/policy", queue)
        .then()
        .statusCode(200);
    String id = enqueued(queue, Map.of("dedupeKey", "k", "payload", 1, "maxAttempts", 1));

    for (int round = 1; round <= 2; round++) {
      String token = claim(id, Map.of()).path("claimToken");
      release(id, token, 0)
          .then()
          .statusCode(200)
          .body("state", equalTo("pending"))
          .body("attempts", equalTo(0));
      release(id, token, 0).then().statusCode(200); // a repeat answers the same
    }
    String token = claim(id, Map.of()).path("claimToken");
    problem(release(id, token, 0), 409, "release-limit");
    item(id).then().body("state", equalTo("sending")); // still this worker's
    complete(id, Map.of("claimToken", token)).then().statusCode(200);

    List<String> outcomes =
        RestAssured.get("/v1/items/{id}/attempts", id).then().extract().path("attempts.outcome");
    assertThat(outcomes).containsExactly("released", "released", "done");
    // A released claim gives its count back: each of the three claims was attempt 1.
    List<Integer> numbers =
        RestAssured.get("/v1/items/{id}/attempts", id).then().extract().path("attempts.attempt");
    assertThat(numbers).containsExactly(1, 1, 1);
    problem(release(id, "forged", 0), 409, "stale-claim");
  }

  @Test
  void a_release_with_a_delay_is_due_only_after_it() {
    String queue = uniqueQueue("release-later");
    String id = enqueued(queue, "k", 1);
    String token = claim(id, Map.of()).path("claimToken");

    release(id, token, 3600).then().statusCode(200);

    claimNext(queue, Map.of()).then().statusCode(204);
    assertThat(java.time.Instant.parse(item(id).path("runAt")))
        .isAfter(java.time.Instant.now().plusSeconds(3500));
  }

  @Test
  void resolve_marks_a_failed_item_done_with_the_operators_note_and_nothing_else() {
    String queue = uniqueQueue("resolve");
    String id = enqueued(queue, "k", 1);
    String token = claim(id, Map.of()).path("claimToken");
    problem(resolve(id, Map.of("note", "too early")), 409, "state-conflict");
    fail(id, Map.of("claimToken", token, "error", "timeout", "retryable", false));

    resolve(id, Map.of("externalRef", "msg_7", "note", "provider confirms msg_7"))
        .then()
        .statusCode(200)
        .body("state", equalTo("done"))
        .body("externalRef", equalTo("msg_7"));

    RestAssured.get("/v1/items/{id}/actions", id)
        .then()
        .body("actions[0].action", equalTo("resolve"))
        .body("actions[0].note", equalTo("provider confirms msg_7"))
        .body("actions[0].actor", equalTo("dev-admin"));
    problem(resolve(id, Map.of()), 409, "state-conflict");
  }

  private static Response release(String id, String token, long delaySeconds) {
    return dev.claimq.Api.release(id, Map.of("claimToken", token, "delaySeconds", delaySeconds));
  }

  private static Response resolve(String id, Map<String, ?> body) {
    return json().body(body).post("/v1/items/{id}/resolve", id);
  }
}
