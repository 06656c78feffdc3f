package dev.claimq.api;

import static dev.claimq.Api.cancel;
import static dev.claimq.Api.claim;
import static dev.claimq.Api.claimedNext;
import static dev.claimq.Api.complete;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.fail;
import static dev.claimq.Api.item;
import static dev.claimq.Api.problem;
import static dev.claimq.Api.queueEntry;
import static dev.claimq.Api.retry;
import static dev.claimq.Api.uniqueQueue;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.nullValue;
import static org.hamcrest.Matchers.startsWith;

import dev.claimq.AsAdmin;
import dev.claimq.Race;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

@QuarkusTest
class OperatorTest extends AsAdmin {

  @Test
  void a_cursor_spelled_otherwise_than_it_was_issued_is_a_400() {
    String queue = uniqueQueue("spelled");
    enqueued(queue, "a", 1);
    enqueued(queue, "b", 2);
    String issued = firstPageCursor(queue);
    String page = "/v1/items?queue=" + queue + "&cursor=";
    given().urlEncodingEnabled(false).get(page + issued).then().statusCode(200);

    problem(given().urlEncodingEnabled(false).get(page + issued + "%3D"), 400, "invalid-request")
        .body("errors[0].field", equalTo("cursor"));
  }

  /** The cursor after the first item of the queue's listing. */
  private static String firstPageCursor(String queue) {
    return given()
        .queryParam("queue", queue)
        .queryParam("limit", 1)
        .get("/v1/items")
        .then()
        .statusCode(200)
        .extract()
        .path("nextCursor");
  }

  @Test
  void a_cursor_sent_with_other_filters_is_a_400_not_a_page_of_another_listing() {
    String queue = uniqueQueue("relisted");
    for (String key : List.of("a", "b", "c")) {
      enqueued(queue, key, 1);
    }
    String cursor = firstPageCursor(queue);
    // Read below the newest item of the queue, "state=done" found none, and said so silently.
    for (Map<String, String> other :
        List.of(
            Map.of("queue", queue, "state", "done"),
            Map.of("queue", queue, "reason", "x"),
            Map.<String, String>of())) {
      problem(
              given().queryParams(other).queryParam("cursor", cursor).get("/v1/items"),
              400,
              "invalid-request")
          .body("errors[0].field", equalTo("cursor"))
          .body("detail", startsWith("cursor was issued for another listing"));
    }
    given()
        .queryParam("queue", queue)
        .queryParam("cursor", cursor)
        .get("/v1/items")
        .then()
        .statusCode(200)
        .body("items.size()", equalTo(2));
    // One issued before cursors named their listing ("before:N"): said so, once, at an upgrade.
    String earlier =
        java.util.Base64.getUrlEncoder()
            .withoutPadding()
            .encodeToString("before:5".getBytes(java.nio.charset.StandardCharsets.UTF_8));
    problem(
            given().queryParam("queue", queue).queryParam("cursor", earlier).get("/v1/items"),
            400,
            "invalid-request")
        .body("detail", startsWith("cursor was issued by an earlier version of claimq"));
  }

  @Test
  void list_pages_through_a_queue_newest_first_with_a_cursor() {
    String queue = uniqueQueue("pages");
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      ids.add(enqueued(queue, "k" + i, i));
    }

    List<String> seen = new ArrayList<>();
    String cursor = null;
    int pages = 0;
    do {
      var request = given().queryParam("queue", queue).queryParam("limit", 3);
      if (cursor != null) {
        request.queryParam("cursor", cursor);
      }
      Response page = request.get("/v1/items");
      page.then().statusCode(200);
      seen.addAll(page.path("items.id"));
      cursor = page.path("nextCursor");
      pages++;
    } while (cursor != null);

    assertThat(pages).isEqualTo(3);
    Collections.reverse(ids);
    assertThat(seen).containsExactlyElementsOf(ids);
  }

  @Test
  void list_filters_by_state() {
    String queue = uniqueQueue("bystate");
    String done = enqueued(queue, "done", 1);
    String pending = enqueued(queue, "pending", 1);
    complete(done, Map.of("claimToken", claimedNext(queue, "w").path("claimToken")))
        .then()
        .statusCode(200);

    given()
        .queryParam("queue", queue)
        .queryParam("state", "pending")
        .get("/v1/items")
        .then()
        .body("items.id", org.hamcrest.Matchers.contains(pending))
        .body("nextCursor", nullValue());
    given()
        .queryParam("queue", queue)
        .queryParam("state", "done")
        .get("/v1/items")
        .then()
        .body("items.id", org.hamcrest.Matchers.contains(done));
  }

  @Test
  void list_without_filters_answers_the_default_page() {
    enqueued(uniqueQueue("any"), "k", 1);
    given().get("/v1/items").then().statusCode(200).body("items.size()", greaterThanOrEqualTo(1));
  }

  @Test
  void list_rejects_invalid_parameters_with_400() {
    problem(given().queryParam("limit", 0).get("/v1/items"), 400, "invalid-request");
    problem(given().queryParam("limit", 501).get("/v1/items"), 400, "invalid-request");
    problem(given().queryParam("limit", "ten").get("/v1/items"), 400, "invalid-request");
    problem(given().queryParam("state", "lost").get("/v1/items"), 400, "invalid-request")
        .body("errors[0].field", equalTo("state"));
    problem(given().queryParam("cursor", "bm9wZQ").get("/v1/items"), 400, "invalid-request")
        .body("errors[0].field", equalTo("cursor"));
    problem(given().queryParam("cursor", "%%%").get("/v1/items"), 400, "invalid-request");
    problem(given().queryParam("queue", "NO").get("/v1/items"), 400, "invalid-request");
  }

  @Test
  void a_query_parameter_without_a_value_is_a_400_naming_it_not_a_filter_dropped() {
    enqueued(uniqueQueue("valueless"), "k", 1);
    for (String name :
        List.of("limit", "queue", "state", "cursor", "updatedAfter", "updatedBefore", "reason")) {
      for (String query : List.of(name + "=", name, "limit=1&" + name + "=")) {
        problem(given().urlEncodingEnabled(false).get("/v1/items?" + query), 400, "invalid-request")
            .body("errors[0].field", equalTo(name))
            .body(
                "detail",
                equalTo(
                    "The query parameter '"
                        + name
                        + "' has no value: give it one, or leave it out."));
      }
    }
    problem(given().urlEncodingEnabled(false).get("/v1/items:search?q="), 400, "invalid-request")
        .body("errors[0].field", equalTo("q"));
  }

  @Test
  void a_query_parameter_the_call_does_not_take_is_a_400_naming_it_not_a_filter_dropped() {
    // A misspelt filter must not widen a listing to every item.
    problem(given().queryParam("stat", "failed").get("/v1/items"), 400, "invalid-request")
        .body("errors[0].field", equalTo("stat"))
        .body(
            "detail",
            equalTo(
                "The query parameter 'stat' is not one this call takes (it takes queue, state,"
                    + " limit, cursor, reason, updatedAfter, updatedBefore): check its spelling."));
    problem(given().queryParam("Force", "true").post("/v1/items/1/retry"), 400, "invalid-request")
        .body("detail", containsString("(it takes force)"));
    problem(given().queryParam("verbose", "1").get("/v1/me"), 400, "invalid-request")
        .body("detail", containsString("(it takes none)"));
    problem(
            given().queryParam("limit", 1).queryParam("q", "x").get("/v1/items"),
            400,
            "invalid-request")
        .body("errors[0].field", equalTo("q"));
    given().queryParam("q", "x").get("/v1/items:search").then().statusCode(200);
  }

  @Test
  void a_body_sent_to_a_call_that_reads_none_is_a_400_and_changes_nothing() {
    String queue = uniqueQueue("no-body");
    String id = enqueued(queue, "k", 1);

    // The reason would be dropped, and the item cancelled without it.
    problem(
            given()
                .contentType("application/json")
                .body("{\"reason\": \"wrong\"}")
                .post("/v1/items/{id}/cancel", id),
            400,
            "invalid-request")
        .body("errors[0].field", equalTo("body"))
        .body(
            "detail",
            equalTo("This call takes no body: send it without one (Content-Length: 0, or none)."));
    item(id).then().body("state", equalTo("pending"));
    problem(
        given().contentType("application/json").body("{}").post("/v1/queues/{q}/pause", queue),
        400,
        "invalid-request");
    given()
        .get("/v1/queues/{q}/policy", queue)
        .then()
        .statusCode(200)
        .body("paused", equalTo(false));
    problem(
        given().contentType("application/json").body("{}").get("/v1/items/{id}", id),
        400,
        "invalid-request");

    // No body, or an empty one, is what these calls take.
    given()
        .contentType("application/json")
        .body("")
        .post("/v1/items/{id}/cancel", id)
        .then()
        .statusCode(200)
        .body("state", equalTo("cancelled"));
    given()
        .post("/v1/queues/{q}/pause", queue)
        .then()
        .statusCode(200)
        .body("paused", equalTo(true));
  }

  @Test
  void a_percent_encoded_parameter_name_is_the_parameter_it_spells() {
    String queue = uniqueQueue("encoded-name");
    String id = enqueued(queue, queue, 1); // a dedupe key no other item has, to search for
    fail(id, Map.of("claimToken", claim(id, Map.of()).path("claimToken"), "error", "nomatchabc"));
    given()
        .urlEncodingEnabled(false)
        .get("/v1/items?queue=" + queue + "&re%61son=nomatchxyz")
        .then()
        .statusCode(200)
        .body("items.size()", equalTo(0));
    given()
        .urlEncodingEnabled(false)
        .get("/v1/items?queue=" + queue + "&%72eason=nomatchabc")
        .then()
        .statusCode(200)
        .body("items.size()", equalTo(1));
    given()
        .urlEncodingEnabled(false)
        .get("/v1/items:search?%71=" + queue)
        .then()
        .statusCode(200)
        .body("items.id", equalTo(List.of(id)));
    problem(
            given().urlEncodingEnabled(false).get("/v1/items?reason=a&re%61son=b"),
            400,
            "invalid-request")
        .body("errors[0].field", equalTo("reason"));
  }

  @Test
  void a_limit_is_ascii_digits_only() {
    enqueued(uniqueQueue("digits"), "k", 1);
    given().urlEncodingEnabled(false).get("/v1/items?limit=1").then().statusCode(200);
    // Arabic-Indic, fullwidth and Devanagari 5, a plus sign, a minus zero, spaces.
    for (String limit : List.of("%D9%A5", "%EF%BC%95", "%E0%A5%AB", "%2B5", "-0", "+5", "%205")) {
      problem(
              given().urlEncodingEnabled(false).get("/v1/items?limit=" + limit),
              400,
              "invalid-request")
          .body("errors[0].field", equalTo("limit"));
    }
  }

  @Test
  void get_of_an_unknown_item_is_404() {
    problem(item("424242424242"), 404, "item-not-found");
    problem(item("abc"), 404, "item-not-found");
    problem(item("99999999999999999999999"), 404, "item-not-found");
    problem(given().get("/v1/items/{id}/attempts", "424242424242"), 404, "item-not-found");
  }

  @Test
  void retry_is_409_unless_the_item_is_failed_or_cancelled() {
    String queue = uniqueQueue("retry409");
    String id = enqueued(queue, "k", 1);
    problem(retry(id), 409, "state-conflict");
    String token = claimedNext(queue, "w").path("claimToken");
    problem(retry(id), 409, "state-conflict");
    complete(id, Map.of("claimToken", token)).then().statusCode(200);
    problem(retry(id), 409, "state-conflict");
    problem(retry("424242424242"), 404, "item-not-found");
    item(id).then().body("state", equalTo("done"));
  }

  @Test
  void cancel_takes_pending_and_failed_items_and_retry_brings_them_back() {
    String queue = uniqueQueue("cancel");
    String pending = enqueued(queue, "pending", 1);
    cancel(pending).then().statusCode(200).body("state", equalTo("cancelled"));
    dev.claimq.Api.json().post("/v1/queues/{q}/claim", queue).then().statusCode(204);
    problem(cancel(pending), 409, "state-conflict");
    retry(pending).then().statusCode(200).body("state", equalTo("pending"));

    String failed = enqueued(queue, Map.of("dedupeKey", "failed", "payload", 1, "priority", 9));
    String token = claimedNext(queue, "w").path("claimToken");
    fail(failed, Map.of("claimToken", token, "error", "no", "retryable", false))
        .then()
        .statusCode(200);
    cancel(failed).then().statusCode(200).body("state", equalTo("cancelled"));
  }

  @Test
  void cancel_is_409_while_sending_or_done() {
    String queue = uniqueQueue("cancel409");
    String id = enqueued(queue, "k", 1);
    String token = claimedNext(queue, "w").path("claimToken");
    problem(cancel(id), 409, "state-conflict");
    complete(id, Map.of("claimToken", token)).then().statusCode(200);
    problem(cancel(id), 409, "state-conflict");
    problem(cancel("424242424242"), 404, "item-not-found");
  }

  @Test
  void cancels_racing_a_claim_let_exactly_one_win_and_refuse_with_the_state_after_it()
      throws Exception {
    String queue = uniqueQueue("cancel-race");
    for (int round = 0; round < 10; round++) {
      String id = enqueued(queue, "k" + round, round);

      // Thread 0 claims, the others cancel, all at once.
      List<Response> answers =
          Race.of(8, thread -> thread == 0 ? claim(id, Map.of("worker", "w")) : cancel(id));

      List<Integer> statuses = answers.stream().map(Response::statusCode).toList();
      assertThat(statuses.stream().filter(status -> status == 200))
          .as("round %d: %s", round, statuses)
          .hasSize(1);
      String state = item(id).path("state");
      assertThat(state).isIn("sending", "cancelled");
      for (Response refused : answers.subList(1, answers.size())) {
        if (refused.statusCode() == 409) {
          // A cancel that waited for the winner's lock says what the item became, not what it was.
          assertThat(refused.<String>path("detail")).contains("is " + state + ":");
        }
      }
    }
  }

  @Test
  void queues_counts_live_items_by_state_and_ages_the_oldest_due_item() {
    String queue = uniqueQueue("stats");
    enqueued(queue, Map.of("dedupeKey", "old", "payload", 1, "runAt", "2020-01-01T00:00:00Z"));
    enqueued(queue, "due", 1);
    enqueued(queue, Map.of("dedupeKey", "later", "payload", 1, "runAt", "2099-01-01T00:00:00Z"));
    String soon =
        java.time.Instant.now()
            .plusSeconds(30)
            .truncatedTo(java.time.temporal.ChronoUnit.SECONDS)
            .toString();
    enqueued(queue, Map.of("dedupeKey", "soon", "payload", 1, "runAt", soon));
    String done = enqueued(queue, "done", 1);
    Response claimed = claim(done, Map.of());
    complete(done, Map.of("claimToken", claimed.path("claimToken"))).then().statusCode(200);
    String sending = enqueued(queue, Map.of("dedupeKey", "x", "payload", 1, "priority", 5));
    claimedNext(queue, "w").then().body("id", equalTo(sending));

    Map<String, Object> entry = queueEntry(queue);
    assertThat(entry).isNotNull();
    assertThat((Map<String, Object>) entry.get("counts"))
        .containsExactlyInAnyOrderEntriesOf(
            Map.of("held", 0, "pending", 4, "sending", 1, "failed", 0));
    assertThat(entry.get("dueNextMinute")).isEqualTo(1);
    // The item due since 2020 has waited since its enqueue, seconds ago, not since 2020.
    float age = (Float) entry.get("oldestDuePendingAgeSeconds");
    assertThat(age).isGreaterThan(0).isLessThan(60);
  }
}
