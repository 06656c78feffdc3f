package dev.claimq.maintenance;

import static dev.claimq.Api.cancel;
import static dev.claimq.Api.claim;
import static dev.claimq.Api.complete;
import static dev.claimq.Api.enqueue;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.item;
import static dev.claimq.Api.json;
import static dev.claimq.Api.problem;
import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import dev.claimq.Api;
import dev.claimq.AsAdmin;
import dev.claimq.Locks;
import dev.claimq.Race;
import dev.claimq.store.Sql;
import dev.claimq.store.SqlFile;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * Dedupe keys outlive pruning: a finished item becomes a tombstone that keeps its key, so an agent
 * retrying an enqueue long after gets a replay, not a second send; tombstones go after keep-keys.
 * Items are aged by moving their times back, not by waiting.
 */
@QuarkusTest
class TombstoneTest extends AsAdmin {
  @Inject Retention retention;
  @Inject dev.claimq.store.ItemRepository items;
  @Inject DataSource dataSource;

  @Test
  void the_same_work_after_pruning_is_a_replay_of_the_tombstone_and_other_work_a_422()
      throws Exception {
    String queue = uniqueQueue("tombstone");
    String id = done(queue, "k", Map.of("to", "ada", "n", 1), "msg_9");
    pruned(id);

    // Equal as jsonb: other key order and white space are the same work.
    json()
        .body("{\"dedupeKey\": \"k\", \"payload\": {\"n\": 1,  \"to\": \"ada\"}}")
        .post("/v1/queues/{q}/items", queue)
        .then()
        .statusCode(200)
        .header("Idempotent-Replayed", "true")
        .body("id", equalTo(id))
        .body("state", equalTo("done"))
        .body("externalRef", equalTo("msg_9"))
        .body("pruned", equalTo(true));
    problem(
        enqueue(queue, Map.of("dedupeKey", "k", "payload", Map.of("to", "bob"))),
        422,
        "dedupe-key-reused");
    // The tombstone keeps its terms: a replay that gives another priority is other work too.
    problem(
            enqueue(
                queue,
                Map.of("dedupeKey", "k", "payload", Map.of("to", "ada", "n", 1), "priority", 1)),
            422,
            "dedupe-key-reused")
        .body("detail", containsString("priority 0"));
    json()
        .body(
            Map.of(
                "items", List.of(Map.of("dedupeKey", "k", "payload", Map.of("to", "ada", "n", 1)))))
        .post("/v1/queues/{q}/items:batch", queue)
        .then()
        .statusCode(200)
        .body("results[0].status", equalTo(200))
        .body("results[0].item.pruned", equalTo(true));
  }

  @Test
  void fifty_concurrent_enqueues_of_a_pruned_key_make_no_new_item() throws Exception {
    String queue = uniqueQueue("tombstone-race");
    String id = done(queue, "k", 1, "msg_1");
    pruned(id);

    List<Integer> statuses =
        Race.of(50, thread -> enqueue(queue, Map.of("dedupeKey", "k", "payload", 1)).statusCode());

    assertThat(statuses).hasSize(50).containsOnly(200);
    assertThat(count("SELECT count(*) FROM item WHERE queue = ?", queue)).isEqualTo(1);
  }

  @Test
  void a_tombstone_cannot_be_retried_and_is_forgotten_after_keep_keys() throws Exception {
    String queue = uniqueQueue("tombstone-old");
    String id = enqueued(queue, "k", 1);
    cancel(id).then().statusCode(200);
    pruned(id);

    problem(RestAssured.post("/v1/items/{id}/retry", id), 409, "state-conflict")
        .body("detail", containsString("tombstone"));

    execute("UPDATE item SET pruned_at = now() - interval '401 days' WHERE id = ?", id);
    retention.prune();

    item(id).then().statusCode(404);
    enqueue(queue, Map.of("dedupeKey", "k", "payload", 1)).then().statusCode(201);
  }

  @Test
  void enqueues_of_a_key_whose_tombstone_is_being_forgotten_all_answer_the_one_new_item()
      throws Exception {
    // The enqueues begin while retention's delete of the tombstone is uncommitted, and wait for
    // it at the key's unique index; then one inserts and the others find the key taken. Their
    // statements began before the delete committed, so a plain read of the key's holder still
    // finds the tombstone there: new work would be refused as a reuse of the key (or answered as a
    // replay of an item that is gone) beside the 201 of the same work.
    String forgetKeys = SqlFile.load("db/item.sql").blocks().get("forget-keys").sql();
    Map<String, Object> work = Map.of("dedupeKey", "k", "payload", Map.of("v", "new"));
    for (int round = 0; round < 8; round++) {
      String queue = uniqueQueue("forget-vs-enqueue");
      String tombstone = done(queue, "k", Map.of("v", "old"), "msg_old");
      pruned(tombstone);
      execute("UPDATE item SET pruned_at = now() - interval '401 days' WHERE id = ?", tombstone);
      List<Response> answers;
      try (Connection retention = dataSource.getConnection()) {
        retention.setAutoCommit(false);
        assertThat(
                Sql.of(forgetKeys)
                    .on(retention)
                    .set("keepKeysSeconds", java.time.Duration.ofDays(400).toSeconds())
                    .set("batchSize", 1000)
                    .update())
            .isPositive();
        // Two enqueue the key alone, two in a batch after a key of their own.
        CompletableFuture<List<Response>> racing =
            CompletableFuture.supplyAsync(
                () -> {
                  try {
                    return Race.of(
                        4,
                        thread ->
                            thread < 2
                                ? enqueue(queue, work)
                                : json()
                                    .body(
                                        Map.of(
                                            "items",
                                            List.of(
                                                Map.of("dedupeKey", "own" + thread, "payload", 1),
                                                work)))
                                    .post("/v1/queues/{q}/items:batch", queue));
                  } catch (Exception e) {
                    throw new IllegalStateException(e);
                  }
                });
        Locks.awaitBlockedBy(dataSource, Locks.pidOf(retention), 4);
        retention.commit();
        answers = racing.get(30, TimeUnit.SECONDS);
      }
      List<Integer> statuses = new ArrayList<>();
      List<String> ids = new ArrayList<>();
      for (Response answer : answers) {
        boolean batch = answer.path("results") != null;
        if (batch) {
          answer.then().statusCode(200);
        }
        statuses.add(batch ? answer.path("results[1].status") : answer.statusCode());
        ids.add(batch ? answer.path("results[1].item.id") : answer.path("id"));
      }
      assertThat(statuses).as("round %d", round).containsOnlyOnce(201).containsOnly(201, 200);
      assertThat(new HashSet<>(ids)).as("round %d", round).hasSize(1);
      assertThat(ids.get(0)).as("round %d", round).isNotEqualTo(tombstone);
      item(tombstone).then().statusCode(404);
      item(ids.get(0))
          .then()
          .body("state", equalTo("pending"))
          .body("pruned", equalTo(false))
          .body("payload.v", equalTo("new"));
      assertThat(count("SELECT count(*) FROM item WHERE queue = ? AND dedupe_key = 'k'", queue))
          .isEqualTo(1);
    }
  }

  @Test
  void retries_racing_retention_send_an_item_whole_or_leave_a_tombstone_never_both()
      throws Exception {
    // Retention slims the row in place: a retry that won after it (or that it pruned after) would
    // hand a worker a pending item whose payload is gone.
    int rounds = 4;
    int count = 10;
    Map<String, Integer> outcomes = new java.util.TreeMap<>();
    for (int round = 0; round < rounds; round++) {
      String queue = uniqueQueue("retry-vs-prune");
      List<String> ids = new java.util.ArrayList<>();
      for (int i = 0; i < count; i++) {
        String id = enqueued(queue, "k" + i, Map.of("n", i));
        cancel(id).then().statusCode(200);
        execute("UPDATE item SET updated_at = now() - interval '8 days' WHERE id = ?", id);
        ids.add(id);
      }
      Map<String, List<Response>> answers =
          racingRetention(ids, id -> RestAssured.post("/v1/items/{id}/retry", id));
      for (int i = 0; i < count; i++) {
        String id = ids.get(i);
        List<Response> retries = answers.get(id);
        List<Integer> statuses = retries.stream().map(Response::statusCode).toList();
        Response now = item(id);
        if (statuses.contains(200)) {
          // Retried before retention got to it: whole, and retention steps past it from then on.
          outcomes.merge("retried", 1, Integer::sum);
          assertThat(statuses).as("item %s's retries", id).containsExactlyInAnyOrder(200, 409);
          problem(retries.get(1 - statuses.indexOf(200)), 409, "state-conflict");
          now.then()
              .body("state", equalTo("pending"))
              .body("pruned", equalTo(false))
              .body("payload.n", equalTo(i))
              .body("attempts", equalTo(0));
          assertThat(actions(id)).as("item %s's actions", id).containsExactly("cancel", "retry");
        } else {
          // Pruned first: a tombstone, which no retry sends again.
          outcomes.merge("pruned", 1, Integer::sum);
          for (Response retry : retries) {
            problem(retry, 409, "state-conflict").body("detail", containsString("tombstone"));
          }
          now.then()
              .body("state", equalTo("cancelled"))
              .body("pruned", equalTo(true))
              .body("payload", org.hamcrest.Matchers.nullValue());
          assertThat(actions(id)).as("item %s's actions", id).isEmpty();
        }
      }
      assertThat(
              count(
                  "SELECT count(*) FROM item WHERE queue = ? AND state = 'pending'"
                      + " AND pruned_at IS NOT NULL",
                  queue))
          .isZero();
    }
    System.out.printf("retries racing retention: %s%n", outcomes);
  }

  @Test
  void retention_on_three_instances_at_once_makes_each_item_a_tombstone_once() throws Exception {
    // Instances prune side by side, stepping past each other's rows. An item slimmed a second
    // time would have the first's emptied payload hashed: its tombstone would then refuse the
    // very work it stands for, and the count of tombstones made would be off.
    int count = 24;
    long keepSeconds = java.time.Duration.ofDays(7).toSeconds();
    for (int round = 0; round < 4; round++) {
      String queue = uniqueQueue("prune-vs-prune");
      List<String> ids = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        String id = enqueued(queue, "k" + i, Map.of("n", i));
        cancel(id).then().statusCode(200);
        ids.add(id);
      }
      // Whatever else is due for retention goes first, so that the race prunes only these.
      retention.prune();
      for (String id : ids) {
        execute("UPDATE item SET updated_at = now() - interval '8 days' WHERE id = ?", id);
      }

      List<Integer> pruned =
          Race.of(
              3,
              thread -> {
                int mine = 0;
                for (int batch = 1; batch > 0; mine += batch) {
                  batch = items.pruneFinished(keepSeconds, 4);
                }
                return mine;
              });

      assertThat(pruned.stream().mapToInt(Integer::intValue).sum())
          .as("round %d: tombstones made, by instance %s", round, pruned)
          .isEqualTo(count);
      for (int i = 0; i < count; i++) {
        enqueue(queue, Map.of("dedupeKey", "k" + i, "payload", Map.of("n", i)))
            .then()
            .statusCode(200)
            .body("id", equalTo(ids.get(i)))
            .body("pruned", equalTo(true));
      }
    }
  }

  @Test
  void late_completes_racing_retention_are_recorded_on_a_whole_item_or_find_a_tombstone()
      throws Exception {
    // A late success on a done item is a second send, counted, and it keeps the item from
    // retention for another keep time. Retention that slimmed the item after it anyway would
    // delete the attempt the worker was just told its report was recorded on.
    int rounds = 4;
    int count = 10;
    Map<String, Integer> outcomes = new java.util.TreeMap<>();
    for (int round = 0; round < rounds; round++) {
      String queue = uniqueQueue("late-vs-prune");
      List<String> ids = new ArrayList<>();
      Map<String, String> firstTokens = new java.util.HashMap<>();
      for (int i = 0; i < count; i++) {
        String id = enqueued(queue, "k" + i, Map.of("n", i));
        String first = claim(id, Map.of("worker", "slow")).path("claimToken");
        // The first worker timed out and said so; the second sent and completed.
        Api.fail(id, Map.of("claimToken", first, "error", "timeout", "retryAfterSeconds", 0))
            .then()
            .statusCode(200);
        String second = claim(id, Map.of("worker", "fast")).path("claimToken");
        complete(id, Map.of("claimToken", second, "externalRef", "second")).then().statusCode(200);
        execute("UPDATE item SET updated_at = now() - interval '8 days' WHERE id = ?", id);
        ids.add(id);
        firstTokens.put(id, first);
      }
      // Both threads report the first worker's send, as a retried request would.
      Map<String, List<Response>> answers =
          racingRetention(
              ids,
              id ->
                  complete(id, Map.of("claimToken", firstTokens.get(id), "externalRef", "first")));
      for (String id : ids) {
        List<Response> lates = answers.get(id);
        for (Response late : lates) {
          problem(late, 409, "stale-claim");
        }
        long recorded =
            lates.stream()
                .filter(late -> late.<String>path("detail").contains("recorded as a late success"))
                .count();
        Response now = item(id);
        now.then().body("state", equalTo("done")).body("externalRef", equalTo("second"));
        if (recorded > 0) {
          // Recorded before retention got to it: once, on the first attempt, and the item whole.
          outcomes.merge("recorded", 1, Integer::sum);
          assertThat(recorded).as("item %s's late reports recorded", id).isEqualTo(1);
          now.then()
              .body("pruned", equalTo(false))
              .body("payload.n", equalTo(ids.indexOf(id)))
              .body("duplicateSends", equalTo(1));
          List<Map<String, Object>> tries =
              json()
                  .get("/v1/items/{id}/attempts", id)
                  .then()
                  .statusCode(200)
                  .extract()
                  .jsonPath()
                  .getList("attempts");
          assertThat(tries).as("item %s's attempts", id).hasSize(2);
          assertThat(tries.get(0)).containsEntry("outcome", "retry");
          assertThat(tries.get(0).get("lateSuccess")).as("item %s", id).isNotNull();
          assertThat(tries.get(1)).containsEntry("outcome", "done");
        } else {
          // Pruned first: the attempts are gone, so nothing is recorded, or counted.
          outcomes.merge("pruned", 1, Integer::sum);
          now.then().body("pruned", equalTo(true)).body("duplicateSends", equalTo(0));
        }
      }
      assertThat(
              count(
                  "SELECT count(*) FROM item WHERE queue = ? AND pruned_at IS NOT NULL"
                      + " AND duplicate_sends > 0",
                  queue))
          .isZero();
    }
    System.out.printf("late completes racing retention: %s%n", outcomes);
  }

  /**
   * Retention, one item a statement, racing two threads that each call every item, from either end;
   * what the two answered, by item. Retention's statements are quicker than the requests: it starts
   * once the first call has been answered, so that the two interleave.
   */
  private Map<String, List<Response>> racingRetention(
      List<String> ids, java.util.function.Function<String, Response> call) throws Exception {
    long keepSeconds = java.time.Duration.ofDays(7).toSeconds();
    java.util.concurrent.CountDownLatch calling = new java.util.concurrent.CountDownLatch(1);
    List<Map<String, Response>> answers =
        Race.of(
            3,
            thread -> {
              Map<String, Response> mine = new java.util.HashMap<>();
              if (thread == 0) {
                try {
                  calling.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                  throw new IllegalStateException(e);
                }
                for (int batch = 1; batch == 1; ) {
                  batch = items.pruneFinished(keepSeconds, 1);
                }
                return mine;
              }
              for (int n = 0; n < ids.size(); n++) {
                String id = ids.get(thread == 1 ? n : ids.size() - 1 - n);
                mine.put(id, call.apply(id));
                calling.countDown();
              }
              return mine;
            });
    Map<String, List<Response>> byItem = new java.util.HashMap<>();
    for (String id : ids) {
      byItem.put(id, List.of(answers.get(1).get(id), answers.get(2).get(id)));
    }
    return byItem;
  }

  private static List<String> actions(String id) {
    return json()
        .get("/v1/items/{id}/actions", id)
        .then()
        .statusCode(200)
        .extract()
        .jsonPath()
        .getList("actions.action");
  }

  private String done(String queue, String key, Object payload, String ref) {
    String id = enqueued(queue, Map.of("dedupeKey", key, "payload", payload));
    String token = claim(id, Map.of()).path("claimToken");
    complete(id, Map.of("claimToken", token, "externalRef", ref)).then().statusCode(200);
    return id;
  }

  /** Ages the finished item past the keep time and runs retention: it is a tombstone. */
  private void pruned(String id) throws Exception {
    execute("UPDATE item SET updated_at = now() - interval '8 days' WHERE id = ?", id);
    retention.prune();
    Response item = item(id);
    item.then().body("pruned", equalTo(true));
  }

  private void execute(String sql, String id) throws Exception {
    try (Connection c = dataSource.getConnection();
        PreparedStatement s = c.prepareStatement(sql)) {
      s.setLong(1, Long.parseLong(id));
      s.executeUpdate();
    }
  }

  private long count(String sql, String queue) throws Exception {
    try (Connection c = dataSource.getConnection();
        PreparedStatement s = c.prepareStatement(sql)) {
      s.setString(1, queue);
      try (ResultSet r = s.executeQuery()) {
        r.next();
        return r.getLong(1);
      }
    }
  }
}
