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

import dev.claimq.AsAdmin;
import dev.claimq.Race;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.List;
import java.util.Map;
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
