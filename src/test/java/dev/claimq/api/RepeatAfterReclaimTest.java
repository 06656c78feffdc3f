package dev.claimq.api;

import static dev.claimq.Api.claim;
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
import static org.hamcrest.Matchers.hasKey;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.nullValue;

import dev.claimq.AsAdmin;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A worker repeats a report whose answer it lost, and the item has been claimed again meanwhile: by
 * the report's own next, or by another worker. The repeat is told by the claim's own attempt, not
 * by what the item is now, so it answers 200 as a repeat and claims nothing.
 */
@QuarkusTest
class RepeatAfterReclaimTest extends AsAdmin {

  @Test
  void a_repeated_fail_whose_next_claimed_the_same_item_answers_200_with_next_null() {
    String queue = uniqueQueue("refail-next-self");
    String id = enqueued(queue, "a", 1);
    String token = claimedNext(queue, "w0").path("claimToken");
    Map<String, Object> body =
        Map.of(
            "claimToken",
            token,
            "error",
            "boom",
            "retryAfterSeconds",
            0,
            "next",
            Map.of("worker", "w1"));
    Response first = fail(id, body);
    first.then().statusCode(200).body("state", equalTo("pending")).body("next.id", equalTo(id));
    String next = first.path("next.claimToken");

    fail(id, body)
        .then()
        .statusCode(200)
        .body("id", equalTo(id))
        .body("$", hasKey("next"))
        .body("next", nullValue());

    // The repeat claimed nothing: next's claim is still the item's.
    heartbeat(id, Map.of("claimToken", next)).then().statusCode(200);
    json()
        .get("/v1/items/{id}/attempts", id)
        .then()
        .statusCode(200)
        .body("attempts.size()", equalTo(2));
  }

  @Test
  void a_repeated_fail_after_another_worker_reclaimed_and_failed_the_item_answers_200() {
    String queue = uniqueQueue("refail-reclaimed");
    String id = enqueued(queue, "a", 1);
    String mine = claimedNext(queue, "w0").path("claimToken");
    Map<String, Object> body = Map.of("claimToken", mine, "error", "boom", "retryAfterSeconds", 0);
    fail(id, body).then().statusCode(200).body("state", equalTo("pending"));
    String theirs = claimedNext(queue, "w1").path("claimToken");

    fail(id, body).then().statusCode(200).body("state", equalTo("sending"));

    // Their claim goes on; and once they failed it otherwise, the repeat is still this claim's.
    fail(id, Map.of("claimToken", theirs, "error", "other", "retryAfterSeconds", 0))
        .then()
        .statusCode(200)
        .body("lastError", equalTo("other"));
    fail(id, body).then().statusCode(200).body("lastError", equalTo("other"));
    // The refusal quotes this claim's own first reason: the item's lastError is theirs.
    problem(
            fail(
                id,
                Map.of("claimToken", mine, "error", "not what it said", "retryAfterSeconds", 0)),
            409,
            "different-report")
        .body("detail", containsString("was failed by this claim"))
        .body("detail", containsString("its error was 'boom'"));

    // Done by them since: the refusal of a different fail still speaks of this claim's fail, not
    // of a complete this claim never made.
    String last = claimedNext(queue, "w2").path("claimToken");
    complete(id, Map.of("claimToken", last, "externalRef", "by-w2")).then().statusCode(200);
    problem(fail(id, Map.of("claimToken", mine, "error", "other again")), 409, "different-report")
        .body("detail", containsString("was failed by this claim"))
        .body("detail", containsString("its error was 'boom'"))
        .body("detail", not(containsString("completed")));
  }

  @Test
  void a_fail_after_the_claims_own_release_and_a_reclaim_stays_409_stale_claim() {
    String queue = uniqueQueue("refail-released");
    String id = enqueued(queue, "a", 1);
    String mine = claimedNext(queue, "w0").path("claimToken");
    release(id, Map.of("claimToken", mine, "delaySeconds", 0)).then().statusCode(200);
    claimedNext(queue, "w1");

    problem(fail(id, Map.of("claimToken", mine, "error", "boom")), 409, "stale-claim");
    problem(fail(id, Map.of("claimToken", "never-held", "error", "boom")), 409, "stale-claim");
  }

  @Test
  void a_repeated_release_after_another_worker_reclaimed_the_item_answers_200() {
    String queue = uniqueQueue("rerelease-reclaimed");
    String id = enqueued(queue, "a", 1);
    String mine = claimedNext(queue, "w0").path("claimToken");
    Map<String, Object> body = Map.of("claimToken", mine, "delaySeconds", 0);
    release(id, body).then().statusCode(200);
    String theirs = claimedNext(queue, "w1").path("claimToken");

    release(id, body).then().statusCode(200).body("state", equalTo("sending"));

    complete(id, Map.of("claimToken", theirs)).then().statusCode(200);
  }

  @Test
  void a_repeated_batch_fail_after_another_worker_reclaimed_the_item_answers_200() {
    String queue = uniqueQueue("batch-refail-reclaimed");
    String id = enqueued(queue, "a", 1);
    String mine =
        claim(id, Map.of("worker", "w0")).then().statusCode(200).extract().path("claimToken");
    Map<String, Object> batch =
        Map.of(
            "items",
            List.of(Map.of("id", id, "claimToken", mine, "error", "boom", "retryAfterSeconds", 0)));
    assertThat(batchFail(batch).<List<Integer>>path("results.status")).containsExactly(200);
    claimedNext(queue, "w1");

    assertThat(batchFail(batch).<List<Integer>>path("results.status")).containsExactly(200);
  }

  private static Response batchFail(Map<String, Object> body) {
    Response response = json().urlEncodingEnabled(false).body(body).post("/v1/items:fail");
    response.then().statusCode(200);
    return response;
  }
}
