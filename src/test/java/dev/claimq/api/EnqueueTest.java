package dev.claimq.api;

import static dev.claimq.Api.claim;
import static dev.claimq.Api.enqueue;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.fail;
import static dev.claimq.Api.item;
import static dev.claimq.Api.json;
import static dev.claimq.Api.problem;
import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.endsWith;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.notNullValue;
import static org.hamcrest.Matchers.nullValue;

import dev.claimq.AsAdmin;
import dev.claimq.Race;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

@QuarkusTest
class EnqueueTest extends AsAdmin {
  @Inject DataSource dataSource;

  @Test
  void enqueue_creates_a_pending_item_and_answers_201_with_its_location() {
    String queue = uniqueQueue("emails");
    Response response =
        enqueue(
            queue,
            Map.of(
                "dedupeKey",
                "welcome/42",
                "payload",
                Map.of("to", "ada@example.com"),
                "maxAttempts",
                3,
                "priority",
                7));

    response
        .then()
        .statusCode(201)
        .header("Location", endsWith("/v1/items/" + response.path("id")))
        .body("queue", equalTo(queue))
        .body("dedupeKey", equalTo("welcome/42"))
        .body("state", equalTo("pending"))
        .body("payload.to", equalTo("ada@example.com"))
        .body("priority", equalTo(7))
        .body("attempts", equalTo(0))
        .body("maxAttempts", equalTo(3))
        .body("idempotencyKey", notNullValue())
        .body("runAt", notNullValue())
        .body("claimToken", nullValue());
    item(response.path("id")).then().statusCode(200).body("state", equalTo("pending"));
  }

  @Test
  void enqueue_applies_defaults_for_attempts_and_priority() {
    enqueue(uniqueQueue("defaults"), Map.of("dedupeKey", "k", "payload", "just a string"))
        .then()
        .statusCode(201)
        .body("maxAttempts", equalTo(5))
        .body("priority", equalTo(0))
        .body("payload", equalTo("just a string"));
  }

  @Test
  void enqueue_of_the_same_work_again_answers_200_with_the_existing_item() {
    String queue = uniqueQueue("replay");
    Map<String, Object> body = Map.of("dedupeKey", "k1", "payload", Map.of("a", 1, "b", 2));
    String id = enqueue(queue, body).then().statusCode(201).extract().path("id");

    // The same JSON value written differently (key order, 1.0 for 1) is the same payload.
    enqueue(queue, "{\"payload\": {\"b\": 2, \"a\": 1.0}, \"dedupeKey\": \"k1\"}")
        .then()
        .statusCode(200)
        .header("Idempotent-Replayed", "true")
        .body("id", equalTo(id));
  }

  @Test
  void enqueue_of_a_reused_key_with_a_different_payload_is_422() {
    String queue = uniqueQueue("conflict");
    String id =
        enqueue(queue, Map.of("dedupeKey", "k1", "payload", Map.of("to", "ada")))
            .then()
            .statusCode(201)
            .extract()
            .path("id");

    problem(
            enqueue(queue, Map.of("dedupeKey", "k1", "payload", Map.of("to", "bob"))),
            422,
            "dedupe-key-reused")
        .body("detail", org.hamcrest.Matchers.containsString(id));
    item(id).then().body("payload.to", equalTo("ada"));
  }

  @Test
  void a_replay_that_gives_priority_maxAttempts_or_runAt_must_match_the_item() {
    String queue = uniqueQueue("terms");
    Map<String, Object> payload = Map.of("to", "ada");
    Map<String, Object> first =
        new java.util.HashMap<>(Map.of("dedupeKey", "k", "payload", payload));
    first.putAll(Map.of("priority", 7, "maxAttempts", 3, "runAt", "2030-01-01T10:00:00+01:00"));
    String id = enqueue(queue, first).then().statusCode(201).extract().path("id");

    // The same terms (runAt as the same instant, written in another offset) and the payload alone
    // are the same work.
    Map<String, Object> same = new java.util.HashMap<>(first);
    same.put("runAt", "2030-01-01T09:00:00Z");
    enqueue(queue, same)
        .then()
        .statusCode(200)
        .header("Idempotent-Replayed", "true")
        .body("id", equalTo(id));
    enqueue(queue, Map.of("dedupeKey", "k", "payload", payload)).then().statusCode(200);

    problem(
            enqueue(queue, Map.of("dedupeKey", "k", "payload", payload, "priority", 8)),
            422,
            "dedupe-key-reused")
        .body("detail", containsString("item " + id))
        .body("detail", containsString("priority 7"));
    problem(
            enqueue(queue, Map.of("dedupeKey", "k", "payload", payload, "maxAttempts", 4)),
            422,
            "dedupe-key-reused")
        .body("detail", containsString("maxAttempts 3"));
    problem(
            enqueue(
                queue,
                Map.of("dedupeKey", "k", "payload", payload, "runAt", "2030-01-01T10:00:00Z")),
            422,
            "dedupe-key-reused")
        .body("detail", containsString("runAt 2030-01-01T09:00:00Z"));
    // The payload is compared first.
    problem(
            enqueue(queue, Map.of("dedupeKey", "k", "payload", Map.of("to", "bob"), "priority", 8)),
            422,
            "dedupe-key-reused")
        .body("detail", containsString("a different payload"));

    item(id)
        .then()
        .body("priority", equalTo(7))
        .body("maxAttempts", equalTo(3))
        .body("runAt", equalTo("2030-01-01T09:00:00Z"));
  }

  @Test
  void a_replay_is_compared_with_the_terms_the_enqueue_gave_not_the_runAt_a_retry_moved() {
    String queue = uniqueQueue("moved");
    Response created = enqueue(queue, Map.of("dedupeKey", "k", "payload", 1));
    String id = created.then().statusCode(201).extract().path("id");
    String enqueuedRunAt = created.path("runAt");
    String token = claim(id, Map.of()).then().statusCode(200).extract().path("claimToken");
    fail(id, Map.of("claimToken", token, "error", "timeout", "retryAfterSeconds", 3600))
        .then()
        .statusCode(200);
    String movedRunAt = item(id).path("runAt");
    assertThat(movedRunAt).isNotEqualTo(enqueuedRunAt);

    // Left out, maxAttempts took the default (5): a replay that names it names 5.
    enqueue(queue, Map.of("dedupeKey", "k", "payload", 1, "runAt", enqueuedRunAt, "maxAttempts", 5))
        .then()
        .statusCode(200)
        .body("id", equalTo(id));
    problem(
            enqueue(queue, Map.of("dedupeKey", "k", "payload", 1, "runAt", movedRunAt)),
            422,
            "dedupe-key-reused")
        .body("detail", containsString("runAt " + enqueuedRunAt));
    problem(
            enqueue(queue, Map.of("dedupeKey", "k", "payload", 1, "maxAttempts", 6)),
            422,
            "dedupe-key-reused")
        .body("detail", containsString("maxAttempts 5"));
  }

  @Test
  void an_item_enqueued_before_claimq_kept_its_runAt_is_not_compared_on_it() throws Exception {
    String queue = uniqueQueue("legacy");
    String id = enqueued(queue, Map.of("dedupeKey", "k", "payload", 1));
    try (Connection c = dataSource.getConnection();
        PreparedStatement s =
            c.prepareStatement("UPDATE item SET enqueued_run_at = NULL WHERE id = ?")) {
      s.setLong(1, Long.parseLong(id));
      assertThat(s.executeUpdate()).isEqualTo(1);
    }

    enqueue(queue, Map.of("dedupeKey", "k", "payload", 1, "runAt", "2030-01-01T00:00:00Z"))
        .then()
        .statusCode(200)
        .body("id", equalTo(id));
    problem(
        enqueue(queue, Map.of("dedupeKey", "k", "payload", 1, "priority", 1)),
        422,
        "dedupe-key-reused");
  }

  @Test
  void a_batch_compares_each_entry_with_the_item_of_its_key() {
    String queue = uniqueQueue("batch-terms");
    enqueued(queue, Map.of("dedupeKey", "old", "payload", 1, "priority", 2));

    json()
        .body(
            Map.of(
                "items",
                List.of(
                    Map.of("dedupeKey", "old", "payload", 1, "priority", 2),
                    Map.of("dedupeKey", "old", "payload", 1, "priority", 3),
                    Map.of("dedupeKey", "new", "payload", 1, "maxAttempts", 2),
                    Map.of("dedupeKey", "new", "payload", 1),
                    Map.of("dedupeKey", "new", "payload", 1, "maxAttempts", 3))))
        .post("/v1/queues/{q}/items:batch", queue)
        .then()
        .statusCode(200)
        .body("results.status", equalTo(List.of(200, 422, 201, 200, 422)))
        .body("results[1].detail", containsString("priority 2"))
        .body("results[4].detail", containsString("maxAttempts 2"));
  }

  @Test
  void concurrent_enqueues_of_one_key_with_two_priorities_make_one_item_and_refuse_the_other()
      throws Exception {
    String queue = uniqueQueue("terms-race");
    List<Response> answers =
        Race.of(
            50, i -> enqueue(queue, Map.of("dedupeKey", "once", "payload", 1, "priority", i % 2)));

    List<Response> created = answers.stream().filter(r -> r.statusCode() == 201).toList();
    assertThat(created).hasSize(1);
    int winner = created.get(0).path("priority");
    for (int i = 0; i < answers.size(); i++) {
      int status = answers.get(i).statusCode();
      if (i % 2 == winner) {
        assertThat(status).as("entry %d", i).isIn(200, 201);
      } else {
        assertThat(status).as("entry %d", i).isEqualTo(422);
      }
    }
    json()
        .queryParam("queue", queue)
        .get("/v1/items")
        .then()
        .statusCode(200)
        .body("items.size()", equalTo(1));
  }

  @Test
  void the_same_dedupe_key_in_two_queues_is_two_items() {
    Map<String, Object> body = Map.of("dedupeKey", "shared", "payload", 1);
    String first = enqueue(uniqueQueue("a"), body).then().statusCode(201).extract().path("id");
    String second = enqueue(uniqueQueue("b"), body).then().statusCode(201).extract().path("id");
    assertThat(first).isNotEqualTo(second);
  }

  @Test
  void fifty_concurrent_identical_enqueues_make_one_item_one_201_and_49_200s() throws Exception {
    String queue = uniqueQueue("storm");
    Map<String, Object> body = Map.of("dedupeKey", "once", "payload", Map.of("n", 1));
    List<Response> answers = Race.of(50, i -> enqueue(queue, body));

    List<Integer> statuses = answers.stream().map(Response::statusCode).toList();
    List<String> ids = answers.stream().map(r -> r.<String>path("id")).toList();
    assertThat(statuses).filteredOn(s -> s == 201).hasSize(1);
    assertThat(statuses).filteredOn(s -> s == 200).hasSize(49);
    assertThat(ids).containsOnly(ids.get(0));
    Response listed =
        io.restassured.RestAssured.given().queryParam("queue", queue).get("/v1/items");
    listed.then().statusCode(200).body("items.size()", equalTo(1));
  }

  @Test
  void enqueue_with_a_future_runAt_keeps_it_and_accepts_offsets() {
    enqueue(
            uniqueQueue("later"),
            Map.of("dedupeKey", "k", "payload", 1, "runAt", "2030-01-01T10:00:00+01:00"))
        .then()
        .statusCode(201)
        .body("runAt", equalTo("2030-01-01T09:00:00Z"));
  }

  @Test
  void invalid_queue_names_are_400() {
    Map<String, Object> body = Map.of("dedupeKey", "k", "payload", 1);
    for (String bad : List.of("Emails", "-lead", "spa ce", "a".repeat(65), "émails", "x%2Fy")) {
      problem(enqueue(bad, body), 400, "invalid-request").body("errors[0].field", equalTo("queue"));
    }
    enqueue("a".repeat(64), body).then().statusCode(org.hamcrest.Matchers.oneOf(200, 201));
  }

  @Test
  void invalid_bodies_are_400_problems_naming_the_field() {
    String queue = uniqueQueue("invalid");
    problem(enqueue(queue, Map.of("payload", 1)), 400, "invalid-request")
        .body("errors[0].field", equalTo("dedupeKey"));
    problem(enqueue(queue, Map.of("dedupeKey", "", "payload", 1)), 400, "invalid-request")
        .body("errors[0].field", equalTo("dedupeKey"));
    problem(
            enqueue(queue, Map.of("dedupeKey", "k".repeat(201), "payload", 1)),
            400,
            "invalid-request")
        .body("errors[0].field", equalTo("dedupeKey"));
    problem(enqueue(queue, Map.of("dedupeKey", "k")), 400, "invalid-request")
        .body("errors[0].field", equalTo("payload"));
    problem(enqueue(queue, "{\"dedupeKey\": \"k\", \"payload\": null}"), 400, "invalid-request")
        .body("errors[0].field", equalTo("payload"));
    problem(
            enqueue(queue, Map.of("dedupeKey", "k", "payload", 1, "maxAttempts", 0)),
            400,
            "invalid-request")
        .body("errors[0].field", equalTo("maxAttempts"));
    problem(
            enqueue(queue, Map.of("dedupeKey", "k", "payload", 1, "maxAttempts", 101)),
            400,
            "invalid-request")
        .body("errors[0].field", equalTo("maxAttempts"));
    problem(
            enqueue(queue, Map.of("dedupeKey", "k", "payload", 1, "runAt", "tomorrow")),
            400,
            "invalid-request")
        .body("errors[0].field", equalTo("runAt"));
    // ISO 8601 forms that RFC 3339 does not have: stored, they would be times another reader of
    // the same request refuses (the offset with seconds moved the item by 30 s).
    for (String notRfc3339 :
        List.of(
            "2030-01-01T09:00Z",
            "2030-01-01T09:00:00+01",
            "2030-01-01T09:00:00+01:00:30",
            "2030-01-01T09:00:00+0100",
            "2030-01-01 09:00:00Z")) {
      problem(
              enqueue(queue, Map.of("dedupeKey", "k", "payload", 1, "runAt", notRfc3339)),
              400,
              "invalid-request")
          .body("errors[0].field", equalTo("runAt"))
          .body("detail", containsString("RFC 3339"));
    }
    // A space for the T is said to be the fault, and ten fraction digits, which RFC 3339 allows,
    // are refused for their precision, not said to be something other than RFC 3339, as they were.
    problem(
            enqueue(queue, Map.of("dedupeKey", "k", "payload", 1, "runAt", "2030-01-01 09:00:00Z")),
            400,
            "invalid-request")
        .body("detail", containsString("'T' between the date and the time"));
    problem(
            enqueue(
                queue,
                Map.of("dedupeKey", "k", "payload", 1, "runAt", "2030-01-01T09:00:00.1234567891Z")),
            400,
            "invalid-request")
        .body("errors[0].field", equalTo("runAt"))
        .body("detail", containsString("more precision than the microseconds that are stored"));
    // Ten digits of microseconds and zeros are no finer a time, and a bad date is no fraction.
    problem(
            enqueue(
                queue,
                Map.of("dedupeKey", "k", "payload", 1, "runAt", "2030-01-01T09:00:00.1234560000Z")),
            400,
            "invalid-request")
        .body("detail", containsString("more than nine fraction digits"));
    problem(
            enqueue(
                queue,
                Map.of("dedupeKey", "k", "payload", 1, "runAt", "2030-13-01T09:00:00.1234567891Z")),
            400,
            "invalid-request")
        .body("detail", containsString("must be an RFC 3339 timestamp"));
    // A leap second is RFC 3339: refused all the same (Java's time has none), but not said to be
    // something other than RFC 3339, as it was.
    problem(
            enqueue(queue, Map.of("dedupeKey", "k", "payload", 1, "runAt", "2016-12-31T23:59:60Z")),
            400,
            "invalid-request")
        .body("errors[0].field", equalTo("runAt"))
        .body("detail", containsString("leap second"))
        .body("detail", not(containsString("must be an RFC 3339 timestamp")));
    // So is an offset past ±18:00, which RFC 3339 has (up to ±23:59) and Java's time does not.
    for (String far : List.of("2030-01-01T09:00:00+18:01", "2030-01-01T09:00:00-23:59")) {
      problem(
              enqueue(queue, Map.of("dedupeKey", "k", "payload", 1, "runAt", far)),
              400,
              "invalid-request")
          .body("errors[0].field", equalTo("runAt"))
          .body("detail", containsString("has an offset past 18 hours"))
          .body("detail", not(containsString("must be an RFC 3339 timestamp")));
    }
    // Past RFC 3339's own range it is not RFC 3339.
    problem(
            enqueue(
                queue,
                Map.of("dedupeKey", "k", "payload", 1, "runAt", "2030-01-01T09:00:00+24:00")),
            400,
            "invalid-request")
        .body("detail", containsString("must be an RFC 3339 timestamp"));
    io.restassured.RestAssured.given()
        .queryParam("queue", queue)
        .get("/v1/items")
        .then()
        .body("items.size()", equalTo(0));
    // RFC 3339 lets T and Z be lower case, and -00:00 say "UTC, local offset unknown".
    enqueue(queue, Map.of("dedupeKey", "k", "payload", 1, "runAt", "2030-01-01t09:00:00.5z"))
        .then()
        .statusCode(201)
        .body("runAt", equalTo("2030-01-01T09:00:00.500Z"));
    enqueue(queue, Map.of("dedupeKey", "k2", "payload", 1, "runAt", "2030-01-01T09:00:00-00:00"))
        .then()
        .statusCode(201)
        .body("runAt", equalTo("2030-01-01T09:00:00Z"));
  }

  @Test
  void an_explicit_null_for_a_field_with_a_default_is_a_400_naming_it_not_the_default() {
    String queue = uniqueQueue("nulls");
    for (String field : List.of("maxAttempts", "priority", "runAt")) {
      problem(
              enqueue(queue, "{\"dedupeKey\": \"u1\", \"payload\": 1, \"" + field + "\": null}"),
              400,
              "invalid-request")
          .body("errors[0].field", equalTo(field))
          .body(
              "detail",
              equalTo(
                  "The value of '"
                      + field
                      + "' must not be null: leave it out to take its default."));
    }
    io.restassured.RestAssured.given()
        .queryParam("queue", queue)
        .get("/v1/items")
        .then()
        .body("items.size()", equalTo(0));

    String id = dev.claimq.Api.enqueued(queue, "k", 1);
    problem(dev.claimq.Api.claimNext(queue, "{\"waitSeconds\": null}"), 400, "invalid-request")
        .body("errors[0].field", equalTo("waitSeconds"));
    problem(dev.claimq.Api.claim(id, "{\"leaseSeconds\": null}"), 400, "invalid-request")
        .body("errors[0].field", equalTo("leaseSeconds"));
    String token = dev.claimq.Api.claim(id, Map.of()).path("claimToken");
    problem(
            dev.claimq.Api.heartbeat(
                id, "{\"claimToken\": \"" + token + "\", \"leaseSeconds\": null}"),
            400,
            "invalid-request")
        .body("errors[0].field", equalTo("leaseSeconds"));
    problem(
            dev.claimq.Api.fail(
                id,
                "{\"claimToken\": \""
                    + token
                    + "\", \"error\": \"x\", \"next\": {\"waitSeconds\": null}}"),
            400,
            "invalid-request")
        .body("errors[0].field", equalTo("next.waitSeconds"));
    problem(
            dev.claimq.Api.fail(
                id, "{\"claimToken\": \"" + token + "\", \"error\": \"x\", \"retryable\": null}"),
            400,
            "invalid-request")
        .body("errors[0].field", equalTo("retryable"));
    item(id).then().body("state", equalTo("sending"));
    problem(
            dev.claimq.Api.json().body("{\"dryRun\": null}").post("/v1/items:retry"),
            400,
            "invalid-request")
        .body("errors[0].field", equalTo("dryRun"));
    // A policy's settings are documented to take null as the default.
    dev.claimq.Api.json()
        .body("{\"maxAttempts\": null}")
        .put("/v1/queues/{q}/policy", queue)
        .then()
        .statusCode(200);
  }

  @Test
  void an_explicit_null_for_an_optional_field_without_a_default_means_none() {
    String queue = uniqueQueue("optional-nulls");
    String id = dev.claimq.Api.enqueued(queue, "k", 1);
    String token =
        dev.claimq.Api.claim(id, "{\"worker\": null}")
            .then()
            .statusCode(200)
            .extract()
            .path("claimToken");
    item(id).then().body("claimedBy", equalTo(null));
    dev.claimq.Api.complete(
            id, "{\"claimToken\": \"" + token + "\", \"externalRef\": null, \"next\": null}")
        .then()
        .statusCode(200)
        .body("state", equalTo("done"))
        .body("externalRef", equalTo(null))
        .body("next", equalTo(null));
  }

  @Test
  void malformed_bodies_are_400_problems_and_store_nothing() {
    String queue = uniqueQueue("malformed");
    List<String> bodies =
        List.of(
            "{\"dedupeKey\": \"k\", \"payload\": ",
            "not json",
            "[]",
            "42",
            "{\"dedupeKey\": \"k\", \"payload\": 1, \"maxAttempt\": 3}",
            "{\"dedupeKey\": 5, \"payload\": 1}",
            "{\"dedupeKey\": \"k\", \"payload\": 1, \"maxAttempts\": \"3\"}",
            "{\"dedupeKey\": \"k\", \"payload\": 1, \"maxAttempts\": 1.5}",
            "{\"dedupeKey\": \"k\", \"payload\": 1, \"priority\": 99999999999}",
            "{\"dedupeKey\": \"k\", \"payload\": 1, \"runAt\": 12345}");
    for (String body : bodies) {
      problem(enqueue(queue, body), 400, "malformed-request");
    }
    problem(enqueue(queue, ""), 400, "invalid-request");
    io.restassured.RestAssured.given()
        .queryParam("queue", queue)
        .get("/v1/items")
        .then()
        .body("items.size()", equalTo(0));
  }
}
