package dev.claimq;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.notNullValue;
import static org.hamcrest.Matchers.nullValue;

import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.restassured.response.ValidatableResponse;
import io.restassured.specification.RequestSpecification;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/** The HTTP calls the tests make, spelled once. Every call goes over real HTTP. */
public final class Api {
  private Api() {}

  /** A queue no other test (or earlier run) uses, so tests never see each other's items. */
  public static String uniqueQueue(String prefix) {
    return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  /**
   * Every entry of GET /v1/queues, page after page: the queues other tests leave make more than one
   * page, so a test looking for its own (or for its absence) reads them all.
   */
  public static List<Map<String, Object>> allQueues() {
    List<Map<String, Object>> all = new ArrayList<>();
    String cursor = null;
    do {
      RequestSpecification request = given().queryParam("limit", 500);
      if (cursor != null) {
        request.queryParam("cursor", cursor);
      }
      var page = request.get("/v1/queues").then().statusCode(200).extract().jsonPath();
      all.addAll(page.getList("queues"));
      cursor = page.getString("nextCursor");
    } while (cursor != null);
    return all;
  }

  /** The queue's entry of GET /v1/queues (found on whichever page has it), or null. */
  public static Map<String, Object> queueEntry(String queue) {
    return allQueues().stream().filter(q -> queue.equals(q.get("queue"))).findFirst().orElse(null);
  }

  public static RequestSpecification json() {
    return given().contentType(ContentType.JSON);
  }

  public static Response enqueue(String queue, Object body) {
    return json().body(body).post("/v1/queues/{queue}/items", queue);
  }

  /** Enqueues new work and returns its id. */
  public static String enqueued(String queue, String dedupeKey, Object payload) {
    return enqueued(queue, Map.of("dedupeKey", dedupeKey, "payload", payload));
  }

  public static String enqueued(String queue, Map<String, ?> body) {
    return enqueue(queue, body).then().statusCode(201).extract().path("id");
  }

  public static Response claimNext(String queue, Object body) {
    return json().body(body).post("/v1/queues/{queue}/claim", queue);
  }

  public static Response claim(String id, Object body) {
    return json().body(body).post("/v1/items/{id}/claim", id);
  }

  /** Claims the next item of the queue, which must exist; returns the claim response. */
  public static Response claimedNext(String queue, String worker) {
    Response response = claimNext(queue, Map.of("worker", worker));
    response.then().statusCode(200).body("claimToken", notNullValue());
    return response;
  }

  public static Response complete(String id, Object body) {
    return json().body(body).post("/v1/items/{id}/complete", id);
  }

  public static Response fail(String id, Object body) {
    return json().body(body).post("/v1/items/{id}/fail", id);
  }

  public static Response release(String id, Object body) {
    return json().body(body).post("/v1/items/{id}/release", id);
  }

  public static Response heartbeat(String id, Object body) {
    return json().body(body).post("/v1/items/{id}/heartbeat", id);
  }

  /** Waits up to 6 s for the item to reach the state (the reaper runs every second in tests). */
  public static void awaitState(String id, String state) throws InterruptedException {
    java.time.Instant deadline = java.time.Instant.now().plusSeconds(6);
    while (!state.equals(item(id).path("state")) && java.time.Instant.now().isBefore(deadline)) {
      Thread.sleep(100);
    }
    item(id).then().body("state", equalTo(state));
  }

  public static Response item(String id) {
    return given().get("/v1/items/{id}", id);
  }

  public static Response retry(String id) {
    return given().post("/v1/items/{id}/retry", id);
  }

  public static Response cancel(String id) {
    return given().post("/v1/items/{id}/cancel", id);
  }

  /** The kinds of the operators' actions on the item, oldest first. */
  public static java.util.List<String> actionsOn(String id) {
    return given()
        .get("/v1/items/{id}/actions", id)
        .then()
        .statusCode(200)
        .extract()
        .path("actions.action");
  }

  /** Claims the item and fails it for good: failed, with its one attempt used. */
  public static void failedForGood(String id) {
    String token = claim(id, Map.of()).then().statusCode(200).extract().path("claimToken");
    fail(id, Map.of("claimToken", token, "error", "boom", "retryable", false))
        .then()
        .statusCode(200)
        .body("state", equalTo("failed"));
  }

  /** How long the claim in this answer lasts: from its updatedAt to its leaseExpiresAt. */
  public static java.time.Duration leaseOf(Response response) {
    return java.time.Duration.between(
        java.time.Instant.parse(response.path("updatedAt")),
        java.time.Instant.parse(response.path("leaseExpiresAt")));
  }

  /** Asserts an RFC 9457 problem with this status and type suffix. */
  public static ValidatableResponse problem(Response response, int status, String type) {
    return response
        .then()
        .statusCode(status)
        .contentType("application/problem+json")
        .body("status", equalTo(status))
        .body(
            "type",
            equalTo(type.startsWith("about:") ? type : "https://claimq.dev/problems/" + type))
        .body("title", notNullValue())
        .body("detail", notNullValue())
        // Only a 503 asks the client to wait: a refusal of the request itself would only repeat.
        .header("Retry-After", status == 503 ? equalTo("1") : nullValue());
  }
}
