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
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * A request's statement has a short bound (4 s, cancelled by the server) so that every request
 * answers within 10 s; a batch's has a longer one of its own. A lock held by another transaction
 * makes a statement as slow as we like, on the real database.
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
    Response stuck;
    long millis;
    try (Connection holder = lockItem(id)) {
      long start = System.nanoTime();
      stuck = complete(id, Map.of("claimToken", token));
      millis = (System.nanoTime() - start) / 1_000_000;
      holder.rollback();
    }
    problem(stuck, 503, "database-unavailable").body("detail", containsString("time bound"));
    assertThat(millis).as("ms until the 503").isBetween(3_500L, 9_000L);
    item(id).then().body("state", equalTo("sending"));
    complete(id, Map.of("claimToken", token)).then().statusCode(200);
  }

  @Test
  void a_batch_complete_may_wait_past_a_single_calls_bound_within_its_own() throws Exception {
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
    Response done =
        json()
            .urlEncodingEnabled(false)
            .body(Map.of("items", List.of(Map.of("id", id, "claimToken", token))))
            .post("/v1/items:complete");
    long millis = (System.nanoTime() - start) / 1_000_000;
    release.get(10, TimeUnit.SECONDS);
    done.then().statusCode(200);
    assertThat(done.<List<Integer>>path("results.status")).containsExactly(200);
    assertThat(millis).as("ms the batch waited for the lock").isGreaterThan(5_500L);
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
