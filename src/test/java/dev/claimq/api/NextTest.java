package dev.claimq.api;

import static dev.claimq.Api.claim;
import static dev.claimq.Api.claimedNext;
import static dev.claimq.Api.complete;
import static dev.claimq.Api.enqueue;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.fail;
import static dev.claimq.Api.json;
import static dev.claimq.Api.problem;
import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.notNullValue;
import static org.hamcrest.Matchers.nullValue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.claimq.AsAdmin;
import dev.claimq.Race;
import dev.claimq.longpoll.ParkedClaims;
import dev.claimq.store.Item;
import dev.claimq.store.ItemRepository;
import dev.claimq.store.ItemState;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** complete and fail with next: the finished item and the queue's next claim in one call. */
@QuarkusTest
class NextTest extends AsAdmin {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Inject ParkedClaims waiters;
  @Inject javax.sql.DataSource dataSource;
  @Inject ItemRepository items;

  @Test
  void complete_with_next_answers_the_done_item_and_claims_the_next_one() throws Exception {
    String queue = uniqueQueue("next");
    String first = enqueued(queue, "a", 1);
    String second = enqueued(queue, "b", 2);
    String token = claimedNext(queue, "w").path("claimToken");
    Map<String, Object> body =
        Map.of(
            "claimToken",
            token,
            "externalRef",
            "msg_1",
            "next",
            Map.of("worker", "w2", "leaseSeconds", 120));

    Response response = complete(first, body);

    response
        .then()
        .statusCode(200)
        .body("id", equalTo(first))
        .body("state", equalTo("done"))
        .body("externalRef", equalTo("msg_1"))
        .body("claimToken", nullValue())
        .body("next.id", equalTo(second))
        .body("next.state", equalTo("sending"))
        .body("next.claimedBy", equalTo("w2"))
        .body("next.claimToken", notNullValue());
    JsonNode answer = JSON.readTree(response.asString());
    // The finished item exactly as a complete without next shows it, then next, last; and next
    // exactly as claim-next shows an item.
    ObjectNode done = answer.deepCopy();
    done.remove("next");
    assertThat(done).isEqualTo(JSON.readTree(RestAssured.get("/v1/items/{id}", first).asString()));
    assertThat(fieldNames(answer)).last().isEqualTo("next");
    assertThat(fieldNames(answer).subList(0, fieldNames(answer).size() - 1))
        .isEqualTo(fieldNames(JSON.readTree(RestAssured.get("/v1/items/{id}", first).asString())));
    JsonNode next = answer.path("next");
    assertThat(fieldNames(next)).last().isEqualTo("claimToken");
    assertThat(next.path("possiblySent").asBoolean()).isFalse();
    assertThat(next.path("priorAttempts").size()).isZero();
    // The lease asked for: 120 s from the claim, on the database clock.
    long lease =
        java.time.Duration.between(
                java.time.Instant.parse(next.path("updatedAt").asText()),
                java.time.Instant.parse(next.path("leaseExpiresAt").asText()))
            .toSeconds();
    assertThat(lease).isEqualTo(120);

    // The claim is a real one: its token completes the second item.
    complete(second, Map.of("claimToken", next.path("claimToken").asText()))
        .then()
        .statusCode(200)
        .body("state", equalTo("done"))
        .body("$", org.hamcrest.Matchers.not(org.hamcrest.Matchers.hasKey("next")));
  }

  @Test
  void the_finish_and_the_claim_of_next_commit_as_one_transaction() throws Exception {
    for (String finish : List.of("complete", "fail")) {
      String queue = uniqueQueue("next-one-tx");
      String first = enqueued(queue, "a", 1);
      String second = enqueued(queue, "b", 2);
      String third = enqueued(queue, "c", 3);
      String token = claimedNext(queue, "w").path("claimToken");
      Map<String, Object> body =
          finish.equals("complete")
              ? Map.of("claimToken", token, "next", Map.of())
              : Map.of(
                  "claimToken", token, "error", "bounced", "retryable", false, "next", Map.of());

      String nextToken =
          (finish.equals("complete") ? complete(first, body) : fail(first, body))
              .then()
              .statusCode(200)
              .body("next.id", equalTo(second))
              .extract()
              .path("next.claimToken");

      // A row carries the id of the transaction that last wrote it (xmin): the same id means one
      // commit, so the claim is never kept without the finish, nor the finish without the claim.
      assertThat(writtenBy(second)).as(finish + " with next").isEqualTo(writtenBy(first));
      // Without next, the finish and a claim after it are two transactions, and the check says so.
      complete(second, Map.of("claimToken", nextToken)).then().statusCode(200);
      claimedNext(queue, "w").then().body("id", equalTo(third));
      assertThat(writtenBy(third)).as("a finish, then a claim").isNotEqualTo(writtenBy(second));
    }
  }

  /** The id of the transaction that last wrote the item's row. */
  private long writtenBy(String id) throws Exception {
    try (java.sql.Connection connection = dataSource.getConnection();
        java.sql.PreparedStatement read =
            connection.prepareStatement("SELECT xmin::text::bigint FROM item WHERE id = ?")) {
      read.setLong(1, Long.parseLong(id));
      try (java.sql.ResultSet row = read.executeQuery()) {
        assertThat(row.next()).as("item " + id).isTrue();
        return row.getLong(1);
      }
    }
  }

  @Test
  void the_next_claim_carries_its_earlier_attempts_as_claim_next_shows_them() {
    String queue = uniqueQueue("next-history");
    String first = enqueued(queue, "a", 1);
    String second = enqueued(queue, "b", 2);
    // The second item's first claim is handed back: a released attempt, and due again now.
    String released = claim(second, Map.of("worker", "w0")).then().extract().path("claimToken");
    json()
        .body(Map.of("claimToken", released))
        .post("/v1/items/{id}/release", second)
        .then()
        .statusCode(200)
        .body("state", equalTo("pending"));
    String token = claimedNext(queue, "w1").path("claimToken");

    complete(first, Map.of("claimToken", token, "next", Map.of("worker", "w2")))
        .then()
        .statusCode(200)
        .body("state", equalTo("done"))
        .body("next.id", equalTo(second))
        .body("next.attempts", equalTo(1))
        .body("next.possiblySent", equalTo(false))
        .body("next.priorAttempts.size()", equalTo(1))
        .body("next.priorAttempts[0].worker", equalTo("w0"))
        .body("next.priorAttempts[0].outcome", equalTo("released"));
  }

  @Test
  void the_holders_complete_and_the_next_claim_are_one_statement_that_claims_only_after_a_finish() {
    String queue = uniqueQueue("next-statement");
    long first = Long.parseLong(enqueued(queue, "a", 1));
    long second = Long.parseLong(enqueued(queue, "b", 2));
    String token = claimedNext(queue, "w").path("claimToken");

    // Not this claim's to finish: nothing finished, nothing claimed.
    assertThat(items.completeHeldAndClaimNext(first, "not-it", "r", "a", "t-1", "n", null))
        .isEmpty();
    assertThat(items.completeHeldAndClaimNext(second, token, "r", "a", "t-2", "n", 60)).isEmpty();
    assertThat(sending(queue)).as("only the first claim").isEqualTo(1);

    ItemRepository.HeldAndNext done =
        items.completeHeldAndClaimNext(first, token, "msg_1", "a", "t-3", "n", 60).orElseThrow();

    assertThat(done.finished().changed()).isTrue();
    assertThat(done.finished().item().id).isEqualTo(first);
    assertThat(done.finished().item().state).isEqualTo(ItemState.DONE);
    assertThat(done.finished().item().externalRef).isEqualTo("msg_1");
    assertThat(done.finished().item().heldSince).as("when its claim began").isNotNull();
    Item next = done.next().orElseThrow();
    assertThat(next.id).isEqualTo(second);
    assertThat(next.state).isEqualTo(ItemState.SENDING);
    assertThat(next.claimToken).isEqualTo("t-3");
    assertThat(next.claimedBy).isEqualTo("n");
    assertThat(next.priorAttempts).isEmpty();

    // Its repeat finishes nothing, so it claims nothing.
    assertThat(items.completeHeldAndClaimNext(first, token, "msg_1", "a", "t-4", "n", 60))
        .isEmpty();
    ItemRepository.HeldAndNext last =
        items.completeHeldAndClaimNext(second, "t-3", "msg_2", "a", "t-5", "n", 60).orElseThrow();
    assertThat(last.next()).as("nothing left to claim").isEmpty();
    assertThat(sending(queue)).isZero();
  }

  @Test
  void a_finish_without_next_answers_exactly_the_item_as_before() {
    String queue = uniqueQueue("next-none");
    String id = enqueued(queue, "a", 1);
    enqueued(queue, "b", 2);
    String token = claimedNext(queue, "w").path("claimToken");

    String answer =
        complete(id, Map.of("claimToken", token)).then().statusCode(200).extract().asString();

    assertThat(answer).isEqualTo(RestAssured.get("/v1/items/{id}", id).asString());
    assertThat(sending(queue)).as("nothing claimed").isZero();
  }

  @Test
  void fail_with_next_answers_the_failed_item_and_claims_the_next_one() {
    String queue = uniqueQueue("next-fail");
    String first = enqueued(queue, "a", 1);
    String second = enqueued(queue, "b", 2);
    String token = claimedNext(queue, "w").path("claimToken");

    fail(
            first,
            Map.of("claimToken", token, "error", "bounced", "retryable", false, "next", Map.of()))
        .then()
        .statusCode(200)
        .body("id", equalTo(first))
        .body("state", equalTo("failed"))
        .body("lastError", equalTo("bounced"))
        .body("next.id", equalTo(second))
        .body("next.claimedBy", nullValue())
        .body("next.claimToken", notNullValue());
  }

  @Test
  void next_is_null_when_the_queue_has_nothing_due() {
    String queue = uniqueQueue("next-empty");
    String id = enqueued(queue, "a", 1);
    enqueue(queue, Map.of("dedupeKey", "later", "payload", 2, "runAt", "2999-01-01T00:00:00Z"))
        .then()
        .statusCode(201);
    String token = claimedNext(queue, "w").path("claimToken");

    String answer =
        complete(id, Map.of("claimToken", token, "next", Map.of()))
            .then()
            .statusCode(200)
            .body("state", equalTo("done"))
            .extract()
            .asString();

    assertThat(answer).endsWith(",\"next\":null}");
    assertThat(sending(queue)).isZero();
  }

  @Test
  void next_wait_seconds_long_polls_and_wakes_on_an_enqueue() throws Exception {
    String queue = uniqueQueue("next-poll");
    String id = enqueued(queue, "a", 1);
    String token = claimedNext(queue, "w").path("claimToken");
    int before = waiters.parked();

    CompletableFuture<Response> answer =
        CompletableFuture.supplyAsync(
            () -> complete(id, Map.of("claimToken", token, "next", Map.of("waitSeconds", 15))));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (waiters.parked() <= before && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertThat(waiters.parked()).as("the next claim is parked").isGreaterThan(before);
    // The finish is recorded before the wait, not after it.
    RestAssured.get("/v1/items/{id}", id).then().body("state", equalTo("done"));
    long enqueuedAt = System.nanoTime();
    String second = enqueued(queue, "b", 2);

    Response response = answer.get(30, TimeUnit.SECONDS);

    long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - enqueuedAt);
    response.then().statusCode(200).body("state", equalTo("done")).body("next.id", equalTo(second));
    assertThat(waitedMillis).as("woken by the enqueue, not by the timeout").isLessThan(10_000);
  }

  @Test
  void a_repeated_complete_with_next_answers_next_null_and_claims_nothing() {
    String queue = uniqueQueue("next-replay");
    String id = enqueued(queue, "a", 1);
    enqueued(queue, "b", 2);
    enqueued(queue, "c", 3);
    String token = claimedNext(queue, "w").path("claimToken");
    Map<String, Object> body =
        Map.of("claimToken", token, "externalRef", "msg_1", "next", Map.of());
    complete(id, body).then().statusCode(200).body("next.claimToken", notNullValue());
    assertThat(sending(queue)).isEqualTo(1);

    complete(id, body)
        .then()
        .statusCode(200)
        .body("state", equalTo("done"))
        .body("externalRef", equalTo("msg_1"))
        .body("$", org.hamcrest.Matchers.hasKey("next"))
        .body("next", nullValue());

    assertThat(sending(queue)).as("the repeat claimed nothing").isEqualTo(1);
  }

  @Test
  void a_repeated_fail_with_next_answers_next_null_and_claims_nothing() {
    String queue = uniqueQueue("next-refail");
    String id = enqueued(queue, "a", 1);
    enqueued(queue, "b", 2);
    enqueued(queue, "c", 3);
    String token = claimedNext(queue, "w").path("claimToken");
    Map<String, Object> body =
        Map.of("claimToken", token, "error", "x", "retryable", false, "next", Map.of());
    fail(id, body).then().statusCode(200).body("next.claimToken", notNullValue());

    fail(id, body)
        .then()
        .statusCode(200)
        .body("state", equalTo("failed"))
        .body("next", nullValue());

    assertThat(sending(queue)).isEqualTo(1);
  }

  @Test
  void a_stale_complete_or_fail_with_next_answers_409_as_before_and_claims_nothing() {
    String queue = uniqueQueue("next-stale");
    String id = enqueued(queue, "a", 1);
    enqueued(queue, "b", 2);
    claimedNext(queue, "w");

    String withNext =
        problem(
                complete(id, Map.of("claimToken", "not-the-token", "next", Map.of())),
                409,
                "stale-claim")
            .extract()
            .asString();
    String without =
        complete(id, Map.of("claimToken", "not-the-token"))
            .then()
            .statusCode(409)
            .extract()
            .asString();
    assertThat(withNext).isEqualTo(without);
    problem(
        fail(id, Map.of("claimToken", "not-the-token", "error", "x", "next", Map.of())),
        409,
        "stale-claim");
    problem(
        complete("999999999", Map.of("claimToken", "t", "next", Map.of())), 404, "item-not-found");

    assertThat(sending(queue)).as("only the first claim").isEqualTo(1);
  }

  @Test
  void next_is_null_while_the_queue_is_paused() {
    String queue = uniqueQueue("next-paused");
    String id = enqueued(queue, "a", 1);
    enqueued(queue, "b", 2);
    String token = claimedNext(queue, "w").path("claimToken");
    RestAssured.post("/v1/queues/{queue}/pause", queue).then().statusCode(200);

    complete(id, Map.of("claimToken", token, "next", Map.of()))
        .then()
        .statusCode(200)
        .body("state", equalTo("done"))
        .body("next", nullValue());

    assertThat(sending(queue)).isZero();
  }

  @Test
  void a_held_item_is_never_claimed_as_next() {
    String queue = uniqueQueue("next-held");
    String id = enqueued(queue, "a", 1);
    String token = claimedNext(queue, "w").path("claimToken");
    json()
        .body(Map.of("requireApproval", true))
        .put("/v1/queues/{queue}/policy", queue)
        .then()
        .statusCode(200);
    enqueue(queue, Map.of("dedupeKey", "held", "payload", 2))
        .then()
        .statusCode(201)
        .body("state", equalTo("held"));

    complete(id, Map.of("claimToken", token, "next", Map.of()))
        .then()
        .statusCode(200)
        .body("next", nullValue());

    assertThat(sending(queue)).isZero();
  }

  @Test
  void invalid_next_fields_are_400_naming_them() {
    String queue = uniqueQueue("next-invalid");
    String id = enqueued(queue, "a", 1);
    String token = claimedNext(queue, "w").path("claimToken");
    Map<String, Object> invalid = new HashMap<>();
    invalid.put("waitSeconds", 21);
    invalid.put("leaseSeconds", 0);
    invalid.put("worker", "w".repeat(201));
    for (Map.Entry<String, Object> field : invalid.entrySet()) {
      Map<String, Object> next = Map.of(field.getKey(), field.getValue());
      problem(complete(id, Map.of("claimToken", token, "next", next)), 400, "invalid-request")
          .body("errors[0].field", equalTo("next." + field.getKey()));
      problem(
              fail(id, Map.of("claimToken", token, "error", "x", "next", next)),
              400,
              "invalid-request")
          .body("errors[0].field", equalTo("next." + field.getKey()));
    }
    problem(
        complete(id, Map.of("claimToken", token, "next", Map.of("waitSecs", 1))),
        400,
        "malformed-request");
    problem(complete(id, Map.of("claimToken", token, "next", 5)), 400, "malformed-request");

    // Nothing was finished or claimed by any of them.
    RestAssured.get("/v1/items/{id}", id).then().body("state", equalTo("sending"));
  }

  @Test
  void workers_completing_with_next_claim_each_pending_item_exactly_once() throws Exception {
    int workers = 8;
    int pending = 5;
    String queue = uniqueQueue("next-race");
    List<String> held = new ArrayList<>();
    List<String> tokens = new ArrayList<>();
    for (int i = 0; i < workers; i++) {
      held.add(enqueued(queue, "held-" + i, i));
      Response claim = claimedNext(queue, "w" + i);
      tokens.add(claim.path("claimToken"));
    }
    Set<String> waiting = new HashSet<>();
    for (int i = 0; i < pending; i++) {
      waiting.add(enqueued(queue, "pending-" + i, i));
    }

    List<Response> answers =
        Race.of(
            workers,
            thread ->
                complete(
                    held.get(thread),
                    Map.of("claimToken", tokens.get(thread), "next", Map.of("worker", "n"))));

    List<String> claimed = new ArrayList<>();
    for (Response answer : answers) {
      answer.then().statusCode(200).body("state", equalTo("done"));
      String next = answer.path("next.id");
      if (next != null) {
        claimed.add(next);
      }
    }
    assertThat(claimed).as("no item claimed twice").doesNotHaveDuplicates();
    assertThat(claimed)
        .as("exactly the pending items")
        .containsExactlyInAnyOrderElementsOf(waiting);
    assertThat(sending(queue)).isEqualTo(pending);
  }

  /** How many of the queue's items are in sending. */
  private static int sending(String queue) {
    return RestAssured.given()
        .queryParam("queue", queue)
        .queryParam("state", "sending")
        .get("/v1/items")
        .then()
        .statusCode(200)
        .extract()
        .path("items.size()");
  }

  private static List<String> fieldNames(JsonNode node) {
    List<String> names = new ArrayList<>();
    for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
      names.add(it.next());
    }
    return names;
  }
}
