package dev.claimq.maintenance;

import static dev.claimq.Api.claim;
import static dev.claimq.Api.complete;
import static dev.claimq.Api.enqueue;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.item;
import static dev.claimq.Api.uniqueQueue;
import static org.hamcrest.Matchers.equalTo;

import dev.claimq.AsAdmin;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import java.util.Map;
import org.junit.jupiter.api.Test;

@QuarkusTest
class RetentionTest extends AsAdmin {
  @Inject Retention retention;
  @Inject EntityManager entityManager;

  @Test
  void finished_items_past_their_keep_time_are_pruned_and_live_ones_kept() {
    String queue = uniqueQueue("retention");
    String oldDone = enqueued(queue, "old-done", 1);
    complete(oldDone, Map.of("claimToken", claim(oldDone, Map.of()).path("claimToken")))
        .then()
        .statusCode(200);
    String oldCancelled = enqueued(queue, "old-cancelled", 1);
    dev.claimq.Api.cancel(oldCancelled).then().statusCode(200);
    String oldPending = enqueued(queue, "old-pending", 1);
    String recentDone = enqueued(queue, "recent-done", 1);
    complete(recentDone, Map.of("claimToken", claim(recentDone, Map.of()).path("claimToken")))
        .then()
        .statusCode(200);
    age(queue, "old-", 8);

    retention.prune();

    // Tombstones: the final state stays, the payload and the history go.
    item(oldDone)
        .then()
        .statusCode(200)
        .body("state", equalTo("done"))
        .body("pruned", equalTo(true))
        .body("payload", org.hamcrest.Matchers.nullValue());
    io.restassured.RestAssured.get("/v1/items/{id}/attempts", oldDone)
        .then()
        .body("attempts.size()", equalTo(0));
    item(oldCancelled).then().body("state", equalTo("cancelled")).body("pruned", equalTo(true));
    item(oldPending).then().statusCode(200).body("state", equalTo("pending"));
    item(recentDone).then().statusCode(200).body("pruned", equalTo(false));
    // A pruned item's dedupe key still names it: the same work again is a replay, not new work.
    enqueue(queue, Map.of("dedupeKey", "old-done", "payload", 1))
        .then()
        .statusCode(200)
        .header("Idempotent-Replayed", "true")
        .body("pruned", equalTo(true));
    enqueue(queue, Map.of("dedupeKey", "old-done", "payload", 2)).then().statusCode(422);
  }

  /** Moves the updated_at of the queue's items whose key starts with the prefix into the past. */
  private void age(String queue, String keyPrefix, int days) {
    QuarkusTransaction.requiringNew()
        .run(
            () ->
                entityManager
                    .createNativeQuery(
                        "UPDATE item SET updated_at = now() - :days * interval '1 day'"
                            + " WHERE queue = :queue AND dedupe_key LIKE :prefix")
                    .setParameter("days", days)
                    .setParameter("queue", queue)
                    .setParameter("prefix", keyPrefix + "%")
                    .executeUpdate());
  }
}
