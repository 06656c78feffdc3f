package dev.claimq.api;

import static dev.claimq.Api.awaitState;
import static dev.claimq.Api.claim;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.fail;
import static dev.claimq.Api.item;
import static dev.claimq.Api.json;
import static dev.claimq.Api.problem;
import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;
import static org.hamcrest.Matchers.startsWith;

import dev.claimq.AsAdmin;
import dev.claimq.Locks;
import dev.claimq.LogCapture;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.Map;
import java.util.logging.Level;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * A provider forgets idempotency keys after a while (Stripe: 24 h): no automatic retry is scheduled
 * past the queue's providerKeyTtl, a policy that cannot fit in it is refused, and an operator's
 * retry past it must be forced. Items are aged by moving createdAt back, not by waiting.
 */
@QuarkusTest
class IdempotencyHorizonTest extends AsAdmin {
  @Inject DataSource dataSource;

  @Test
  void a_policy_whose_worst_case_schedule_does_not_fit_its_horizon_is_a_422_that_shows_it() {
    String queue = uniqueQueue("horizon-policy");
    // 5 attempts of 60 s leases and backoffs of 10, 20, 40 and 80 s: 450 s at worst.
    problem(
            json().body(Map.of("providerKeyTtl", "PT5M")).put("/v1/queues/{q}/policy", queue),
            422,
            "policy-does-not-fit")
        .body("detail", containsString("take 450 s, past providerKeyTtl PT5M (300 s)"));
    RestAssured.get("/v1/queues/{q}/policy", queue).then().body("providerKeyTtl", nullValue());

    json()
        .body(Map.of("providerKeyTtl", "PT24H"))
        .put("/v1/queues/{q}/policy", queue)
        .then()
        .statusCode(200)
        .body("providerKeyTtl", equalTo("PT24H"));
    problem(
            json().body(Map.of("providerKeyTtl", "a day")).put("/v1/queues/{q}/policy", queue),
            400,
            "invalid-request")
        .body("errors[0].field", equalTo("providerKeyTtl"));
  }

  @Test
  void a_retry_that_would_come_due_past_the_horizon_is_not_scheduled() {
    String queue = uniqueQueue("horizon-fail");
    // 2 attempts of 1 s and one 10 s backoff fit in 15 s; a retry 20 s away does not.
    json()
        .body(Map.of("maxAttempts", 2, "leaseSeconds", 1, "providerKeyTtl", "PT15S"))
        .put("/v1/queues/{q}/policy", queue)
        .then()
        .statusCode(200);
    String soon = enqueued(queue, "soon", 1);
    String token = claim(soon, Map.of()).path("claimToken");
    fail(soon, Map.of("claimToken", token, "error", "busy", "retryAfterSeconds", 0))
        .then()
        .body("state", equalTo("pending"));

    String late = enqueued(queue, "late", 1);
    String lateToken = claim(late, Map.of()).path("claimToken");
    fail(late, Map.of("claimToken", lateToken, "error", "busy", "retryAfterSeconds", 20))
        .then()
        .statusCode(200)
        .body("state", equalTo("failed"))
        .body("lastError", equalTo("idempotency horizon passed: busy"));
  }

  @Test
  void a_fail_that_waited_for_a_heartbeat_judges_the_horizon_by_the_lease_it_set()
      throws Exception {
    String queue = uniqueQueue("horizon-heartbeat");
    // A 30 s horizon less the 5 s lease leaves 25 s: a retry 20 s away fits. Less a 15 s lease it
    // leaves 15 s, and the retry does not.
    json()
        .body(Map.of("maxAttempts", 2, "leaseSeconds", 5, "providerKeyTtl", "PT30S"))
        .put("/v1/queues/{q}/policy", queue)
        .then()
        .statusCode(200);
    String id = enqueued(queue, "k", 1);
    String token = claim(id, Map.of()).path("claimToken");

    try (Connection heartbeat = dataSource.getConnection()) {
      // The heartbeat's own change (a 15 s lease), held uncommitted while the fail arrives.
      heartbeat.setAutoCommit(false);
      try (PreparedStatement extend =
          heartbeat.prepareStatement(
              "UPDATE item SET lease_seconds = 15, lease_expires_at = now() + interval '15 s'"
                  + " WHERE id = ?")) {
        extend.setLong(1, Long.parseLong(id));
        assertThat(extend.executeUpdate()).isEqualTo(1);
      }

      Locks.sentWhileHeld(
              dataSource,
              heartbeat,
              () -> fail(id, Map.of("claimToken", token, "error", "busy", "retryAfterSeconds", 20)))
          .then()
          .statusCode(200)
          .body("state", equalTo("failed"))
          .body("lastError", equalTo("idempotency horizon passed: busy"));
    }
  }

  @Test
  void an_expired_lease_past_the_horizon_fails_the_item_and_an_operator_retry_must_be_forced()
      throws Exception {
    String queue = uniqueQueue("horizon-reap");
    json()
        .body(Map.of("providerKeyTtl", "PT1H"))
        .put("/v1/queues/{q}/policy", queue)
        .then()
        .statusCode(200);
    String id = enqueued(queue, "k", 1);
    age(id, "2 hours");
    claim(id, Map.of("leaseSeconds", 1)).then().statusCode(200);

    awaitState(id, "failed");
    item(id).then().body("lastError", startsWith("idempotency horizon passed: lease expired"));

    problem(RestAssured.post("/v1/items/{id}/retry", id), 409, "idempotency-horizon-passed");
    problem(
        RestAssured.given().queryParam("force", "yes").post("/v1/items/{id}/retry", id),
        400,
        "invalid-request");
    RestAssured.given()
        .queryParam("force", "true")
        .post("/v1/items/{id}/retry", id)
        .then()
        .statusCode(200)
        .header("Idempotency-Horizon-Passed", "true")
        .body("state", equalTo("pending"));
    // The audit says the retry was forced; the refused ones left no entry.
    RestAssured.get("/v1/items/{id}/actions", id)
        .then()
        .statusCode(200)
        .body("actions.action", contains("retry"))
        .body("actions[0].note", equalTo("forced past the provider's idempotency horizon"));
  }

  @Test
  void a_retry_within_the_horizon_needs_no_force_and_carries_no_warning() {
    String queue = uniqueQueue("horizon-ok");
    json()
        .body(Map.of("providerKeyTtl", "PT24H"))
        .put("/v1/queues/{q}/policy", queue)
        .then()
        .statusCode(200);
    String id = enqueued(queue, "k", 1);
    String token = claim(id, Map.of()).path("claimToken");
    fail(id, Map.of("claimToken", token, "error", "no", "retryable", false));

    RestAssured.post("/v1/items/{id}/retry", id)
        .then()
        .statusCode(200)
        .header("Idempotency-Horizon-Passed", nullValue());
    RestAssured.get("/v1/items/{id}/actions", id)
        .then()
        .body("actions.action", contains("retry"))
        .body("actions[0].note", nullValue());
  }

  @Test
  void a_horizon_longer_than_3650_days_is_refused_and_the_stored_policy_is_kept() {
    String queue = uniqueQueue("horizon-bound");
    json()
        .body(Map.of("providerKeyTtl", "PT24H"))
        .put("/v1/queues/{q}/policy", queue)
        .then()
        .statusCode(200);
    // Long.MAX_VALUE seconds: the interval the statements computed from it overflowed.
    for (String tooLong : new String[] {"PT9223372036854775807S", "PT87600H1S"}) {
      problem(
              json().body(Map.of("providerKeyTtl", tooLong)).put("/v1/queues/{q}/policy", queue),
              400,
              "invalid-request")
          .body("errors[0].field", equalTo("providerKeyTtl"))
          .body("detail", containsString("at most PT87600H"));
    }
    RestAssured.get("/v1/queues/{q}/policy", queue).then().body("providerKeyTtl", equalTo("PT24H"));
  }

  @Test
  void a_horizon_is_taken_only_in_the_spelling_it_is_answered_in() {
    String queue = uniqueQueue("horizon-spelling");
    json()
        .body(Map.of("providerKeyTtl", "PT1H30M"))
        .put("/v1/queues/{q}/policy", queue)
        .then()
        .statusCode(200)
        .body("providerKeyTtl", equalTo("PT1H30M"));
    for (String other :
        new String[] {
          "-PT-24H",
          "pt24h",
          "+PT24H",
          "P0DT24H",
          "PT86400S",
          "PT24H0M",
          "P1DT0.0S",
          "P1D",
          "PT1440M"
        }) {
      problem(
              json().body(Map.of("providerKeyTtl", other)).put("/v1/queues/{q}/policy", queue),
              400,
              "invalid-request")
          .body("errors[0].field", equalTo("providerKeyTtl"))
          .body("detail", containsString("must be written as PT24H, not '" + other + "'"));
    }
    RestAssured.get("/v1/queues/{q}/policy", queue)
        .then()
        .body("providerKeyTtl", equalTo("PT1H30M"));
  }

  @Test
  void the_longest_horizon_goes_through_a_fail_a_retry_and_the_reaper_without_an_error()
      throws Exception {
    String queue = uniqueQueue("horizon-longest");
    problem(
        json().body(Map.of("providerKeyTtl", "PT87601H")).put("/v1/queues/{q}/policy", queue),
        400,
        "invalid-request");
    try (LogCapture log = LogCapture.start(Level.SEVERE)) {
      json()
          .body(Map.of("providerKeyTtl", "PT87600H"))
          .put("/v1/queues/{q}/policy", queue)
          .then()
          .statusCode(200)
          .body("providerKeyTtl", equalTo("PT87600H"));

      String failed = enqueued(queue, "failed", 1);
      String token = claim(failed, Map.of()).path("claimToken");
      fail(failed, Map.of("claimToken", token, "error", "busy"))
          .then()
          .statusCode(200)
          .body("state", equalTo("pending"));
      String permanent = enqueued(queue, "permanent", 1);
      String permanentToken = claim(permanent, Map.of()).path("claimToken");
      fail(permanent, Map.of("claimToken", permanentToken, "error", "no", "retryable", false))
          .then()
          .statusCode(200)
          .body("state", equalTo("failed"));
      json()
          .body(Map.of("queue", queue, "dryRun", true))
          .post("/v1/items:retry")
          .then()
          .statusCode(200)
          .body("items.size()", equalTo(1));
      RestAssured.post("/v1/items/{id}/retry", permanent).then().statusCode(200);

      String expiring = enqueued(queue, "expiring", 1);
      claim(expiring, Map.of("leaseSeconds", 1)).then().statusCode(200);
      awaitState(expiring, "pending");
      assertThat(log.errors()).isEmpty();
    }
  }

  /** Makes the item look created that long ago, as if the service had run that long. */
  private void age(String id, String interval) throws Exception {
    try (Connection connection = dataSource.getConnection();
        PreparedStatement statement =
            connection.prepareStatement(
                "UPDATE item SET created_at = now() - CAST(? AS interval) WHERE id = ?")) {
      statement.setString(1, interval);
      statement.setLong(2, Long.parseLong(id));
      statement.executeUpdate();
    }
  }
}
