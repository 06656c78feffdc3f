package dev.claimq.api;

import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.json;
import static dev.claimq.Api.problem;
import static dev.claimq.Api.queueEntry;
import static dev.claimq.Api.uniqueQueue;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import dev.claimq.AsAdmin;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** Batch enqueue, batch claim, batch complete and fail: the single calls' rules, per entry. */
@QuarkusTest
class BatchTest extends AsAdmin {

  @Test
  void a_batch_enqueue_answers_each_entry_as_a_single_enqueue_would() {
    String queue = uniqueQueue("batch");
    String existing = enqueued(queue, "old", Map.of("n", 0));
    List<Map<String, Object>> items =
        List.of(
            Map.of("dedupeKey", "a", "payload", Map.of("n", 1)),
            Map.of("dedupeKey", "b", "payload", Map.of("n", 2), "priority", 5),
            Map.of("dedupeKey", "a", "payload", Map.of("n", 1)),
            Map.of("dedupeKey", "b", "payload", Map.of("n", 99)),
            Map.of("dedupeKey", "old", "payload", Map.of("n", 0)),
            Map.of("dedupeKey", "old", "payload", Map.of("n", 7)));

    Response response = enqueueBatch(queue, items);

    response.then().statusCode(200);
    assertThat(response.<List<Integer>>path("results.status"))
        .containsExactly(201, 201, 200, 422, 200, 422);
    assertThat(response.<String>path("results[3].type"))
        .isEqualTo("https://claimq.dev/problems/dedupe-key-reused");
    assertThat(response.<String>path("results[2].item.id"))
        .isEqualTo(response.path("results[0].item.id"));
    assertThat(response.<String>path("results[4].item.id")).isEqualTo(existing);
    assertThat(response.<String>path("results[3].detail")).contains("different payload");
    assertThat(response.<Integer>path("results[1].item.priority")).isEqualTo(5);
    given().queryParam("queue", queue).get("/v1/items").then().body("items.size()", equalTo(3));
  }

  @Test
  void concurrent_identical_batches_create_each_item_once() throws Exception {
    String queue = uniqueQueue("batchrace");
    List<Map<String, Object>> items =
        IntStream.range(0, 100)
            .mapToObj(i -> Map.<String, Object>of("dedupeKey", "k" + i, "payload", i))
            .toList();
    int clients = 6;
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(clients);
    List<Integer> statuses = new ArrayList<>();
    try {
      List<Future<Response>> calls = new ArrayList<>();
      for (int c = 0; c < clients; c++) {
        calls.add(
            pool.submit(
                () -> {
                  start.await();
                  return enqueueBatch(queue, items);
                }));
      }
      start.countDown();
      for (Future<Response> call : calls) {
        Response response = call.get();
        assertThat(response.statusCode()).isEqualTo(200);
        statuses.addAll(response.path("results.status"));
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(statuses).filteredOn(s -> s == 201).hasSize(100);
    assertThat(statuses).filteredOn(s -> s == 200).hasSize(100 * (clients - 1));
    given()
        .queryParam("queue", queue)
        .queryParam("limit", 500)
        .get("/v1/items")
        .then()
        .body("items.size()", equalTo(100));
  }

  @Test
  void a_batchs_items_are_claimed_in_the_order_it_lists_them() {
    String queue = uniqueQueue("batchfifo");
    List<String> keys = List.of("z", "m", "a", "q");
    enqueueBatch(
            queue,
            keys.stream().map(k -> Map.<String, Object>of("dedupeKey", k, "payload", 1)).toList())
        .then()
        .statusCode(200);

    List<String> claimed =
        json()
            .body(Map.of("max", 4))
            .post("/v1/queues/{q}/claim:batch", queue)
            .path("items.dedupeKey");
    assertThat(claimed).isEqualTo(keys);
  }

  @Test
  void concurrent_batches_of_the_same_keys_in_other_orders_create_each_item_once()
      throws Exception {
    // Two agents proposing the same work in another order: each waits for the other's insert of
    // a key it also inserts. Taken in the batch's order, that is a deadlock, refused as an error.
    for (int round = 0; round < 10; round++) {
      String queue = uniqueQueue("batchorder");
      List<Map<String, Object>> items =
          IntStream.range(0, 100)
              .mapToObj(i -> Map.<String, Object>of("dedupeKey", "k" + i, "payload", i))
              .toList();
      List<Map<String, Object>> reversed = new ArrayList<>(items);
      java.util.Collections.reverse(reversed);

      List<Response> answers =
          dev.claimq.Race.of(2, client -> enqueueBatch(queue, client == 0 ? items : reversed));

      List<Integer> statuses = new ArrayList<>();
      for (Response answer : answers) {
        assertThat(answer.statusCode()).as(answer.asString()).isEqualTo(200);
        statuses.addAll(answer.path("results.status"));
      }
      assertThat(statuses).filteredOn(s -> s == 201).hasSize(100);
      assertThat(statuses).filteredOn(s -> s == 200).hasSize(100);
    }
  }

  @Test
  void concurrent_batch_finishes_of_the_same_claims_in_other_orders_finish_each_once()
      throws Exception {
    // A worker's batch sent again, reordered, while the first is still running, and a batch fail
    // of the same claims: each locks the items it finishes, and taken in the order sent, two of
    // them would each wait for the other (a deadlock).
    for (int round = 0; round < 10; round++) {
      String queue = uniqueQueue("finishorder");
      enqueueBatch(
              queue,
              IntStream.range(0, 50)
                  .mapToObj(i -> Map.<String, Object>of("dedupeKey", "k" + i, "payload", i))
                  .toList())
          .then()
          .statusCode(200);
      List<Map<String, Object>> claimed =
          json().body(Map.of("max", 50)).post("/v1/queues/{q}/claim:batch", queue).path("items");
      List<Map<String, Object>> completes = new ArrayList<>();
      List<Map<String, Object>> fails = new ArrayList<>();
      for (Map<String, Object> item : claimed) {
        completes.add(Map.of("id", item.get("id"), "claimToken", item.get("claimToken")));
        fails.add(Map.of("id", item.get("id"), "claimToken", item.get("claimToken"), "error", "x"));
      }
      List<Map<String, Object>> reversed = new ArrayList<>(completes);
      java.util.Collections.reverse(reversed);
      java.util.Collections.shuffle(fails, new java.util.Random(round));

      List<Response> answers =
          dev.claimq.Race.of(
              3,
              client ->
                  literal()
                      .body(Map.of("items", List.of(completes, reversed, fails).get(client)))
                      .post(client == 2 ? "/v1/items:fail" : "/v1/items:complete"));

      int finishedHere = 0;
      for (Response answer : answers) {
        assertThat(answer.statusCode()).as(answer.asString()).isEqualTo(200);
        finishedHere +=
            (int)
                answer.<List<Integer>>path("results.status").stream().filter(s -> s == 200).count();
      }
      // Each claim finished once; its repeats in the other batch of its kind answer 200 too.
      assertThat(finishedHere).isGreaterThanOrEqualTo(50);
      given()
          .queryParam("queue", queue)
          .queryParam("state", "sending")
          .get("/v1/items")
          .then()
          .body("items.size()", equalTo(0));
    }
  }

  @Test
  void concurrent_batch_completes_naming_each_others_claims_with_old_tokens_never_deadlock()
      throws Exception {
    // Two workers, each completing its own claims and, with an old token, claims the other now
    // holds: each batch changes its own items and reads the other's, so the reads wait for the
    // other batch's changes. Taken in the order sent, the two would each wait for the other.
    for (int round = 0; round < 10; round++) {
      String queue = uniqueQueue("crossorder");
      List<List<Map<String, Object>>> batches = List.of(new ArrayList<>(), new ArrayList<>());
      for (int i = 0; i < 40; i++) {
        String id = enqueued(queue, "k" + i, i);
        Object old = json().body(Map.of()).post("/v1/items/{id}/claim", id).path("claimToken");
        json()
            .body(Map.of("claimToken", old))
            .post("/v1/items/{id}/release", id)
            .then()
            .statusCode(200);
        Object current = json().body(Map.of()).post("/v1/items/{id}/claim", id).path("claimToken");
        // Items of even i are worker 0's now, of odd i worker 1's; each names the other's too.
        batches.get(i % 2).add(Map.of("id", id, "claimToken", current));
        batches.get(1 - i % 2).add(Map.of("id", id, "claimToken", old));
      }
      java.util.Collections.reverse(batches.get(1));

      List<Response> answers =
          dev.claimq.Race.of(
              2,
              worker ->
                  literal().body(Map.of("items", batches.get(worker))).post("/v1/items:complete"));

      for (Response answer : answers) {
        assertThat(answer.statusCode()).as(answer.asString()).isEqualTo(200);
        assertThat(answer.<List<Integer>>path("results.status"))
            .filteredOn(s -> s == 200)
            .hasSize(20);
      }
    }
  }

  @Test
  void claim_with_max_hands_out_distinct_items_in_claim_order_with_their_own_tokens() {
    String queue = uniqueQueue("claimmax");
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 25; i++) {
      ids.add(enqueued(queue, Map.of("dedupeKey", "k" + i, "payload", i, "priority", i % 3)));
    }

    Response first =
        json().body(Map.of("worker", "w", "max", 10)).post("/v1/queues/{q}/claim:batch", queue);
    first.then().statusCode(200);
    List<String> firstIds = first.path("items.id");
    List<Integer> priorities = first.path("items.priority");
    assertThat(firstIds).hasSize(10).doesNotHaveDuplicates();
    assertThat(priorities).isSortedAccordingTo((a, b) -> b - a).containsOnly(2, 1);
    assertThat(first.<List<String>>path("items.claimToken")).doesNotHaveDuplicates().hasSize(10);
    assertThat(first.<List<String>>path("items.state")).containsOnly("sending");

    Response rest = json().body(Map.of("max", 100)).post("/v1/queues/{q}/claim:batch", queue);
    List<String> restIds = rest.path("items.id");
    assertThat(restIds).hasSize(15);
    Set<String> all = new HashSet<>(firstIds);
    all.addAll(restIds);
    assertThat(all).containsExactlyInAnyOrderElementsOf(ids);
    json().body(Map.of("max", 5)).post("/v1/queues/{q}/claim:batch", queue).then().statusCode(204);
  }

  @Test
  void claim_next_with_max_the_older_form_of_a_batch_claim_still_answers_items() {
    String queue = uniqueQueue("claimmax-older");
    enqueued(queue, "a", 1);
    enqueued(queue, "b", 2);

    Response claimed = json().body(Map.of("max", 10)).post("/v1/queues/{q}/claim", queue);

    claimed.then().statusCode(200);
    assertThat(claimed.<List<String>>path("items.claimToken")).hasSize(2).doesNotHaveDuplicates();
  }

  @Test
  void a_batch_claim_needs_its_max() {
    problem(
        json().body(Map.of("worker", "w")).post("/v1/queues/{q}/claim:batch", "q"),
        400,
        "invalid-request");
  }

  @Test
  void eight_workers_claiming_in_batches_get_every_item_exactly_once() throws Exception {
    String queue = uniqueQueue("batchdrain");
    List<Map<String, Object>> items =
        IntStream.range(0, 500)
            .mapToObj(i -> Map.<String, Object>of("dedupeKey", "k" + i, "payload", i))
            .toList();
    enqueueBatch(queue, items).then().statusCode(200);

    Map<String, String> claimedBy = new ConcurrentHashMap<>();
    ConcurrentLinkedQueue<String> duplicates = new ConcurrentLinkedQueue<>();
    ConcurrentLinkedQueue<Integer> notCompleted = new ConcurrentLinkedQueue<>();
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<?>> workers = new ArrayList<>();
      for (int w = 0; w < 8; w++) {
        String worker = "w" + w;
        workers.add(
            pool.submit(
                () -> {
                  start.await();
                  for (int round = 0; round < 500; round++) {
                    Response claimed =
                        json()
                            .body(Map.of("worker", worker, "max", 10))
                            .post("/v1/queues/{q}/claim:batch", queue);
                    if (claimed.statusCode() == 204) {
                      return null;
                    }
                    List<Map<String, Object>> got = claimed.path("items");
                    List<Map<String, Object>> done = new ArrayList<>();
                    for (Map<String, Object> item : got) {
                      if (claimedBy.putIfAbsent((String) item.get("id"), worker) != null) {
                        duplicates.add((String) item.get("id"));
                      }
                      done.add(Map.of("id", item.get("id"), "claimToken", item.get("claimToken")));
                    }
                    Response completed =
                        literal().body(Map.of("items", done)).post("/v1/items:complete");
                    for (Integer status : completed.<List<Integer>>path("results.status")) {
                      if (status != 200) {
                        notCompleted.add(status);
                      }
                    }
                  }
                  return null;
                }));
      }
      start.countDown();
      for (Future<?> worker : workers) {
        worker.get();
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(duplicates).isEmpty();
    assertThat(notCompleted).isEmpty();
    assertThat(claimedBy).hasSize(500);
    Map<String, Object> entry = queueEntry(queue);
    assertThat(entry).isNotNull();
    assertThat(((Map<?, ?>) entry.get("counts")).get("sending")).isEqualTo(0);
    assertThat(entry.get("doneLastMinute")).isEqualTo(500);
  }

  @Test
  void a_batch_complete_answers_each_entry_as_a_single_complete_would() {
    String queue = uniqueQueue("batchdone");
    for (int i = 0; i < 3; i++) {
      enqueued(queue, "k" + i, i);
    }
    List<Map<String, Object>> claimed =
        json().body(Map.of("max", 3)).post("/v1/queues/{q}/claim:batch", queue).path("items");
    String a = (String) claimed.get(0).get("id");
    String b = (String) claimed.get(1).get("id");
    String c = (String) claimed.get(2).get("id");
    Object tokenA = claimed.get(0).get("claimToken");
    Object tokenB = claimed.get(1).get("claimToken");

    Response response =
        literal()
            .body(
                Map.of(
                    "items",
                    List.of(
                        Map.of("id", a, "claimToken", tokenA, "externalRef", "ref-a"),
                        Map.of("id", b, "claimToken", tokenB),
                        Map.of("id", c, "claimToken", "forged"),
                        Map.of("id", "999999999999", "claimToken", "x"),
                        Map.of("id", a, "claimToken", tokenA))))
            .post("/v1/items:complete");

    response.then().statusCode(200);
    // The last entry completes a's claim again without its externalRef: a different report.
    assertThat(response.<List<Integer>>path("results.status"))
        .containsExactly(200, 200, 409, 404, 409);
    // Each refusal names its problem type, as the single call's problem does: two kinds of 409.
    String problems = "https://claimq.dev/problems/";
    assertThat(response.<List<String>>path("results.type"))
        .containsExactly(
            null,
            null,
            problems + "stale-claim",
            problems + "item-not-found",
            problems + "different-report");
    assertThat(response.<String>path("results[4].detail")).contains("must carry the same");
    assertThat(response.<String>path("results[0].item.externalRef")).isEqualTo("ref-a");
    dev.claimq.Api.item(c).then().body("state", equalTo("sending"));
    given()
        .get("/v1/items/{id}/attempts", a)
        .then()
        .body("attempts.outcome", org.hamcrest.Matchers.contains("done"));
  }

  @Test
  void a_batch_fail_applies_each_entrys_own_retry_rules() {
    String queue = uniqueQueue("batchfail");
    enqueued(queue, Map.of("dedupeKey", "retry", "payload", 1, "priority", 2));
    enqueued(queue, Map.of("dedupeKey", "permanent", "payload", 1, "priority", 1));
    List<Map<String, Object>> claimed =
        json().body(Map.of("max", 2)).post("/v1/queues/{q}/claim:batch", queue).path("items");

    Response response =
        literal()
            .body(
                Map.of(
                    "items",
                    List.of(
                        Map.of(
                            "id",
                            claimed.get(0).get("id"),
                            "claimToken",
                            claimed.get(0).get("claimToken"),
                            "error",
                            "SMTP 451 password=hunter2",
                            "retryAfterSeconds",
                            0),
                        Map.of(
                            "id",
                            claimed.get(1).get("id"),
                            "claimToken",
                            claimed.get(1).get("claimToken"),
                            "error",
                            "bad address",
                            "retryable",
                            false),
                        Map.of(
                            "id", claimed.get(1).get("id"), "claimToken", "stale", "error", "x"))))
            .post("/v1/items:fail");

    response.then().statusCode(200);
    assertThat(response.<List<Integer>>path("results.status")).containsExactly(200, 200, 409);
    assertThat(response.<String>path("results[0].item.state")).isEqualTo("pending");
    assertThat(response.<String>path("results[0].item.lastError")).doesNotContain("hunter2");
    assertThat(response.<String>path("results[1].item.state")).isEqualTo("failed");
  }

  @Test
  void a_percent_encoded_colon_reaches_the_batch_paths_too() {
    String queue = uniqueQueue("encoded");

    literal()
        .body(Map.of("items", List.of(Map.of("dedupeKey", "k", "payload", 1))))
        .post("/v1/queues/" + queue + "/items%3Abatch")
        .then()
        .statusCode(200)
        .body("results[0].status", equalTo(201));
    Map<String, Object> claimed =
        json().body(Map.of("max", 1)).post("/v1/queues/{q}/claim:batch", queue).path("items[0]");
    literal()
        .body(
            Map.of(
                "items",
                List.of(Map.of("id", claimed.get("id"), "claimToken", claimed.get("claimToken")))))
        .post("/v1/items%3acomplete")
        .then()
        .statusCode(200)
        .body("results[0].status", equalTo(200));

    dev.claimq.Api.item((String) claimed.get("id")).then().body("state", equalTo("done"));
  }

  @Test
  void batches_outside_their_bounds_are_400() {
    String queue = uniqueQueue("batchbounds");
    dev.claimq.Api.problem(enqueueBatch(queue, List.of()), 400, "invalid-request");
    List<Map<String, Object>> tooMany =
        IntStream.range(0, 501)
            .mapToObj(i -> Map.<String, Object>of("dedupeKey", "k" + i, "payload", i))
            .toList();
    dev.claimq.Api.problem(enqueueBatch(queue, tooMany), 400, "invalid-request");
    dev.claimq.Api.problem(
        json().body(Map.of("max", 101)).post("/v1/queues/{q}/claim:batch", queue),
        400,
        "invalid-request");
    dev.claimq.Api.problem(
        literal().body(Map.of("items", List.of())).post("/v1/items:complete"),
        400,
        "invalid-request");
    dev.claimq.Api.problem(
        enqueueBatch(queue, List.of(Map.of("dedupeKey", "ok", "payload", 1), Map.of("payload", 1))),
        400,
        "invalid-request");
    given().queryParam("queue", queue).get("/v1/items").then().body("items.size()", equalTo(0));
  }

  @Test
  void an_invalid_batch_entry_is_named_by_its_index_and_field_in_errors_and_detail() {
    String queue = uniqueQueue("batchnames");
    String ok = "{\"dedupeKey\":\"a\",\"payload\":1}";
    String enqueue = "/v1/queues/" + queue + "/items:batch";
    String finish = "{\"id\":\"1\",\"claimToken\":\"t\",\"error\":\"e\"}";
    // Path, the second entry, and the field the answer must name.
    String[][] cases = {
      {enqueue, "{\"dedupeKey\":\"b\",\"payload\":1,\"priority\":40000}", "items[1].priority"},
      {enqueue, "null", "items[1]"},
      {enqueue, "{\"dedupeKey\":\"\\u0000\",\"payload\":1}", "items[1].dedupeKey"},
      {enqueue, "{\"dedupeKey\":\"b\",\"payload\":1,\"runAt\":\"soon\"}", "items[1].runAt"},
      {enqueue, "{\"dedupeKey\":\"b\",\"payload\":1,\"priority\":\"1\"}", "items[1].priority"},
      {enqueue, "{\"dedupeKey\":\"b\",\"payload\":{\"to\":\"\\u0000\"}}", "items[1].payload.to"},
      {enqueue, "{\"dedupeKey\":\"b\",\"payload\":1,\"priority\":null}", "items[1].priority"},
      {enqueue, "{\"dedupeKey\":\"b\",\"payload\":{\"to\":1,\"to\":2}}", "items[1].payload.to"},
      {"/v1/items:complete", "{\"id\":\"1\",\"claimToken\":\"\"}", "items[1].claimToken"},
      {"/v1/items:complete", "null", "items[1]"},
      {"/v1/items:complete", "{\"id\":\"1\",\"claimToken\":\"t\",\"id\":\"2\"}", "items[1].id"},
      {"/v1/items:fail", "{\"id\":\"1\",\"claimToken\":\"t\",\"error\":\" \"}", "items[1].error"},
      {
        "/v1/items:fail",
        "{\"id\":\"1\",\"claimToken\":\"t\",\"error\":\"e\",\"sent\":\"y\"}",
        "items[1].sent"
      },
    };
    for (String[] c : cases) {
      String first =
          c[0].equals(enqueue)
              ? ok
              : c[0].endsWith("fail") ? finish : finish.replace(",\"error\":\"e\"", "");
      Response answer = literal().body("{\"items\":[" + first + "," + c[1] + "]}").post(c[0]);

      answer
          .then()
          .statusCode(400)
          .contentType("application/problem+json")
          .body("errors[0].field", equalTo(c[2]));
      assertThat(answer.<String>path("detail")).as(c[1]).contains(c[2]);
    }
    // Past the payload limit as stored (300 numbers of 1,000 digits): a 413 that says which entry.
    String huge = String.join(",", java.util.Collections.nCopies(300, "1e999"));
    Response tooLarge =
        literal()
            .body("{\"items\":[" + ok + ",{\"dedupeKey\":\"b\",\"payload\":[" + huge + "]}]}")
            .post(enqueue);
    problem(tooLarge, 413, "too-large");
    assertThat(tooLarge.<String>path("detail")).startsWith("The payload of items[1] is ");
    given().queryParam("queue", queue).get("/v1/items").then().body("items.size()", equalTo(0));
  }

  private static Response enqueueBatch(String queue, List<Map<String, Object>> items) {
    return literal().body(Map.of("items", items)).post("/v1/queues/" + queue + "/items:batch");
  }

  /** Sends the path as written: a literal ':' stays one (and %3A stays %3A). */
  private static io.restassured.specification.RequestSpecification literal() {
    return json().urlEncodingEnabled(false);
  }
}
