package dev.claimq.api;

import static dev.claimq.Api.claimedNext;
import static dev.claimq.Api.complete;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.item;
import static dev.claimq.Api.json;
import static dev.claimq.Api.problem;
import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import dev.claimq.AsAdmin;
import dev.claimq.Locks;
import dev.claimq.LogCapture;
import dev.claimq.store.ItemRepository;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * A request's statement has a short bound (4 s, cancelled by the server) so that every request
 * answers within 10 s; a batch of over 100 entries has a longer one of its own. A lock held by
 * another transaction makes a statement as slow as we like, on the real database.
 */
@QuarkusTest
class StatementBoundsTest extends AsAdmin {
  @Inject DataSource dataSource;

  @Test
  void a_complete_stuck_behind_a_lock_past_its_bound_answers_503_and_changes_nothing()
      throws Exception {
    String queue = uniqueQueue("bound");
    String id = enqueued(queue, "k", 1);
    String token = claimedNext(queue, "w").path("claimToken");
    expect503AtTheBound(id, () -> complete(id, Map.of("claimToken", token)));
    complete(id, Map.of("claimToken", token)).then().statusCode(200);
  }

  @Test
  void a_batch_of_over_100_entries_may_wait_past_a_single_calls_bound_within_its_own()
      throws Exception {
    String queue = uniqueQueue("bound");
    String id = enqueued(queue, "k", 1);
    String token = claimedNext(queue, "w").path("claimToken");
    Connection holder = lockItem(id);
    // Released after 6 s: past a single statement's 4 s, well within a batch's 15 s.
    CompletableFuture<Void> release =
        CompletableFuture.runAsync(
            () -> {
              try (holder) {
                holder.rollback();
              } catch (java.sql.SQLException e) {
                throw new IllegalStateException(e);
              }
            },
            CompletableFuture.delayedExecutor(6, TimeUnit.SECONDS));
    long start = System.nanoTime();
    Response done = completeBatch(id, token, ItemRepository.POOL_BOUNDED_ENTRIES + 1);
    long millis = (System.nanoTime() - start) / 1_000_000;
    release.get(10, TimeUnit.SECONDS);
    done.then().statusCode(200);
    assertThat(done.<Integer>path("results[0].status")).isEqualTo(200);
    assertThat(done.<List<Integer>>path("results.status"))
        .hasSize(ItemRepository.POOL_BOUNDED_ENTRIES + 1);
    assertThat(millis).as("ms the batch waited for the lock").isGreaterThan(5_500L);
  }

  @Test
  void a_batch_of_up_to_100_entries_has_a_single_calls_bound() throws Exception {
    String queue = uniqueQueue("bound");
    String id = enqueued(queue, "k", 1);
    String token = claimedNext(queue, "w").path("claimToken");
    expect503AtTheBound(id, () -> completeBatch(id, token, ItemRepository.POOL_BOUNDED_ENTRIES));
  }

  @Test
  void a_request_the_database_rolls_back_to_break_a_deadlock_answers_503_not_500()
      throws Exception {
    String queue = uniqueQueue("deadlock");
    enqueued(queue, "a", 1);
    enqueued(queue, "b", 2);
    List<Map<String, Object>> claimed =
        json().body(Map.of("max", 2)).post("/v1/queues/{q}/claim:batch", queue).path("items");
    List<Map<String, Object>> entries = new ArrayList<>();
    for (Map<String, Object> item : claimed) {
      entries.add(Map.of("id", item.get("id"), "claimToken", item.get("claimToken")));
    }
    long first = Math.min(id(claimed.get(0)), id(claimed.get(1)));
    long second = Math.max(id(claimed.get(0)), id(claimed.get(1)));
    Response answer;
    try (LogCapture log = LogCapture.start(Level.SEVERE);
        Connection holder = lockItem(String.valueOf(second))) {
      // The batch locks in id order: the first item, then it waits for the second, held here.
      CompletableFuture<Response> batch =
          CompletableFuture.supplyAsync(
              () ->
                  json()
                      .urlEncodingEnabled(false)
                      .body(Map.of("items", entries))
                      .post("/v1/items:complete"));
      Locks.awaitBlockedBy(dataSource, Locks.pidOf(holder));
      // Waiting for the first closes the cycle; the batch, which waited longer, is rolled back.
      try (PreparedStatement lock =
          holder.prepareStatement("SELECT 1 FROM item WHERE id = ? FOR UPDATE")) {
        lock.setLong(1, first);
        lock.executeQuery().close();
      }
      answer = batch.get(30, TimeUnit.SECONDS);
      holder.rollback();
      assertThat(log.records()).as("ERROR lines").isEmpty();
    }
    problem(answer, 503, "database-unavailable").body("detail", containsString("deadlock"));
    item(String.valueOf(first)).then().body("state", equalTo("sending"));
    // Nothing stood; the same batch again completes both.
    json()
        .urlEncodingEnabled(false)
        .body(Map.of("items", entries))
        .post("/v1/items:complete")
        .then()
        .statusCode(200)
        .body("results.status", org.hamcrest.Matchers.contains(200, 200));
  }

  private static long id(Map<String, Object> item) {
    return Long.parseLong((String) item.get("id"));
  }

  /**
   * The call, made while the item's row is locked, answers 503 at a single statement's 4 s bound
   * and leaves the item sending.
   */
  private void expect503AtTheBound(String id, java.util.function.Supplier<Response> call)
      throws Exception {
    Response stuck;
    long millis;
    try (Connection holder = lockItem(id)) {
      long start = System.nanoTime();
      stuck = call.get();
      millis = (System.nanoTime() - start) / 1_000_000;
      holder.rollback();
    }
    problem(stuck, 503, "database-unavailable").body("detail", containsString("time bound"));
    assertThat(millis).as("ms until the 503").isBetween(3_500L, 9_000L);
    item(id).then().body("state", equalTo("sending"));
  }

  /** A batch complete of {@code entries}: the item's own entry first, then ids nobody has. */
  private static Response completeBatch(String id, String token, int entries) {
    List<Map<String, Object>> batch = new ArrayList<>();
    batch.add(Map.of("id", id, "claimToken", token));
    for (int i = 1; i < entries; i++) {
      batch.add(Map.of("id", String.valueOf(900_000_000_000L + i), "claimToken", "none"));
    }
    return json().urlEncodingEnabled(false).body(Map.of("items", batch)).post("/v1/items:complete");
  }

  /** A transaction of the test's own that holds the item's row lock until rolled back. */
  private Connection lockItem(String id) throws Exception {
    Connection holder = dataSource.getConnection();
    holder.setAutoCommit(false);
    try (PreparedStatement lock =
        holder.prepareStatement("SELECT 1 FROM item WHERE id = ? FOR UPDATE")) {
      lock.setLong(1, Long.parseLong(id));
      lock.executeQuery().close();
    }
    return holder;
  }
}
