package dev.claimq.observability;

import static dev.claimq.Api.claim;
import static dev.claimq.Api.claimNext;
import static dev.claimq.Api.claimedNext;
import static dev.claimq.Api.complete;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.fail;
import static dev.claimq.Api.item;
import static dev.claimq.Api.json;
import static dev.claimq.Api.retry;

import io.restassured.RestAssured;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/**
 * Real traffic on one queue, over HTTP, that makes every claimq counter count at least once: a
 * counter registered only at its first event must still be in the scrape that follows. Needs the
 * admin key (AsAdmin). Takes a few seconds: one 1 s lease has to run out.
 */
final class Traffic {
  private Traffic() {}

  static void run(String queue) throws InterruptedException {
    // Won, completed: queue wait and processing are observed.
    String done = enqueued(queue, "done", 1);
    String doneToken = claimedNext(queue, "w").path("claimToken");
    complete(done, Map.of("claimToken", doneToken, "externalRef", "msg_done"))
        .then()
        .statusCode(200);
    // Empty: nothing is due. Lost: claim by id of an item that is finished.
    claimNext(queue, Map.of()).then().statusCode(204);
    claim(done, Map.of()).then().statusCode(204);
    // A long-poll that waits its second out.
    claimNext(queue, Map.of("waitSeconds", 1)).then().statusCode(204);

    // Failed and retried, then failed for good, then resolved by an operator.
    String failing =
        enqueued(queue, Map.of("dedupeKey", "failing", "payload", 2, "maxAttempts", 2));
    String first = claimedNext(queue, "w").path("claimToken");
    fail(failing, Map.of("claimToken", first, "error", "SMTP 451", "retryAfterSeconds", 0))
        .then()
        .statusCode(200);
    String second = claimedNext(queue, "w").path("claimToken");
    fail(failing, Map.of("claimToken", second, "error", "SMTP 550", "retryable", false))
        .then()
        .statusCode(200);
    // A stale report: the first claim's token is long gone.
    fail(failing, Map.of("claimToken", first, "error", "late")).then().statusCode(409);
    retry(failing).then().statusCode(200);
    String third = claimedNext(queue, "w").path("claimToken");
    fail(failing, Map.of("claimToken", third, "error", "SMTP 550", "retryable", false))
        .then()
        .statusCode(200);
    json()
        .body(Map.of("note", "sent by hand"))
        .post("/v1/items/{id}/resolve", failing)
        .then()
        .statusCode(200);

    // Released unused, then cancelled.
    String released = enqueued(queue, "released", 3);
    String releaseToken = claimedNext(queue, "w").path("claimToken");
    json()
        .body(Map.of("claimToken", releaseToken))
        .post("/v1/items/{id}/release", released)
        .then()
        .statusCode(200);
    RestAssured.post("/v1/items/{id}/cancel", released).then().statusCode(200);

    // A lease the reaper ends; the next claim completes; the first claim's late complete is then
    // a late success on a done item: a duplicate send.
    String expired = enqueued(queue, "expired", 4);
    String stale = claim(expired, Map.of("worker", "slow", "leaseSeconds", 1)).path("claimToken");
    awaitState(expired, "pending");
    String fresh = claim(expired, Map.of("worker", "w")).path("claimToken");
    complete(expired, Map.of("claimToken", fresh, "externalRef", "msg_new")).then().statusCode(200);
    complete(expired, Map.of("claimToken", stale, "externalRef", "msg_old")).then().statusCode(409);

    // Queue-level operator actions.
    RestAssured.post("/v1/queues/{queue}/pause", queue).then().statusCode(200);
    RestAssured.post("/v1/queues/{queue}/resume", queue).then().statusCode(200);
    json()
        .body(Map.of("maxAttempts", 3))
        .put("/v1/queues/{queue}/policy", queue)
        .then()
        .statusCode(200);
  }

  /** Waits (a 1 s lease, a reaper every second) for the item to reach the state. */
  private static void awaitState(String id, String state) throws InterruptedException {
    Instant deadline = Instant.now().plus(Duration.ofSeconds(6));
    while (!state.equals(item(id).path("state")) && Instant.now().isBefore(deadline)) {
      Thread.sleep(100);
    }
    item(id).then().statusCode(200);
    if (!state.equals(item(id).path("state"))) {
      throw new AssertionError("item " + id + " never became " + state);
    }
  }
}
