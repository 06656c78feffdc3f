package dev.claimq.console;

import static io.restassured.RestAssured.given;

import dev.claimq.Api;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/** Data for the console tests, made through the real API with the documented dev keys. */
final class Seed {
  static final String AGENT = "dev-agent-key";
  static final String WORKER = "dev-worker-key";
  static final String OPERATOR = "dev-operator-key";

  private Seed() {}

  static RequestSpecification as(String key) {
    return given().header("Authorization", "Bearer " + key);
  }

  static String enqueue(String queue, String dedupeKey, String payloadJson, int maxAttempts) {
    return as(AGENT)
        .contentType(ContentType.JSON)
        .body(
            "{\"dedupeKey\": \""
                + dedupeKey
                + "\", \"maxAttempts\": "
                + maxAttempts
                + ", \"payload\": "
                + payloadJson
                + "}")
        .post("/v1/queues/{queue}/items", queue)
        .then()
        .statusCode(201)
        .extract()
        .path("id");
  }

  /** A new queue whose policy requires approval: every item enqueued in it is held. */
  static String gated(String prefix) {
    String queue = dev.claimq.Api.uniqueQueue("gate-" + prefix);
    as(OPERATOR)
        .contentType(ContentType.JSON)
        .body(Map.of("requireApproval", true))
        .put("/v1/queues/{queue}/policy", queue)
        .then()
        .statusCode(200)
        .body("requireApproval", org.hamcrest.Matchers.equalTo(true));
    return queue;
  }

  /** An item that one attempt by this worker failed for good, with this reason. */
  static String failed(String queue, String dedupeKey, String worker, String reason) {
    String id = enqueue(queue, dedupeKey, "{\"to\": \"ada@example.com\"}", 1);
    String token =
        as(WORKER)
            .contentType(ContentType.JSON)
            .body(Map.of("worker", worker))
            .post("/v1/items/{id}/claim", id)
            .then()
            .statusCode(200)
            .extract()
            .path("claimToken");
    as(WORKER)
        .contentType(ContentType.JSON)
        .body(Map.of("claimToken", token, "error", reason, "retryable", false))
        .post("/v1/items/{id}/fail", id)
        .then()
        .statusCode(200);
    return id;
  }

  /**
   * A failed item, in a new queue named from {@code prefix}, whose retry would now come due past
   * its provider's idempotency horizon.
   */
  static String pastTheHorizon(String prefix) throws InterruptedException {
    String queue = Api.uniqueQueue(prefix);
    as(OPERATOR)
        .contentType(ContentType.JSON)
        .body(Map.of("maxAttempts", 1, "leaseSeconds", 1, "providerKeyTtl", "PT3S"))
        .put("/v1/queues/{queue}/policy", queue)
        .then()
        .statusCode(200);
    Instant made = Instant.now();
    String id = failed(queue, "h/1", "mailer-1", "mailbox full");
    // A retry now would come due past createdAt + 3 s - the 1 s lease.
    Thread.sleep(Math.max(0, Duration.between(Instant.now(), made.plusSeconds(3)).toMillis()));
    return id;
  }

  /** Claims the item as worker mailer-1 for this long; answers the claim token. */
  static String claim(String id, int leaseSeconds) {
    return as(WORKER)
        .contentType(ContentType.JSON)
        .body(Map.of("worker", "mailer-1", "leaseSeconds", leaseSeconds))
        .post("/v1/items/{id}/claim", id)
        .then()
        .statusCode(200)
        .extract()
        .path("claimToken");
  }

  static Response complete(String id, String token, String externalRef) {
    return as(WORKER)
        .contentType(ContentType.JSON)
        .body(Map.of("claimToken", token, "externalRef", externalRef))
        .post("/v1/items/{id}/complete", id);
  }

  static String state(String id) {
    return as(OPERATOR).get("/v1/items/{id}", id).then().statusCode(200).extract().path("state");
  }
}
