package dev.claimq.api;

import static dev.claimq.Api.claim;
import static dev.claimq.Api.claimNext;
import static dev.claimq.Api.claimedNext;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.item;
import static dev.claimq.Api.leaseOf;
import static dev.claimq.Api.problem;
import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.emptyString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.notNullValue;
import static org.hamcrest.Matchers.nullValue;

import dev.claimq.AsAdmin;
import dev.claimq.Race;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

@QuarkusTest
class ClaimTest extends AsAdmin {

  @Test
  void claim_next_moves_the_item_to_sending_with_a_token_and_a_lease() {
    String queue = uniqueQueue("claim");
    String id = enqueued(queue, "k", Map.of("n", 1));

    Response claimed = claimNext(queue, Map.of("worker", "w1", "leaseSeconds", 30));

    claimed
        .then()
        .statusCode(200)
        .body("id", equalTo(id))
        .body("state", equalTo("sending"))
        .body("attempts", equalTo(1))
        .body("claimedBy", equalTo("w1"))
        .body("claimToken", notNullValue())
        .body("payload.n", equalTo(1));
    String token = claimed.path("claimToken");
    assertThat(token).hasSizeGreaterThanOrEqualTo(22); // at least 128 bits, base64
    Duration lease = leaseOf(claimed);
    assertThat(lease).isEqualTo(Duration.ofSeconds(30));
    // The token is shown to the claimer only.
    item(id).then().body("claimToken", nullValue()).body("state", equalTo("sending"));
  }

  @Test
  void claim_next_without_a_body_uses_the_default_lease() {
    String queue = uniqueQueue("nobody");
    enqueued(queue, "k", 1);
    Response claimed = dev.claimq.Api.json().post("/v1/queues/{q}/claim", queue);
    claimed.then().statusCode(200);
    Duration lease = leaseOf(claimed);
    assertThat(lease).isEqualTo(Duration.ofSeconds(60));
  }

  @io.quarkus.test.common.http.TestHTTPResource("/")
  java.net.URI base;

  @Test
  void a_bare_post_with_no_body_and_no_content_type_claims_too() throws Exception {
    String queue = uniqueQueue("bare");
    String id = enqueued(queue, "k", 1);
    var http = java.net.http.HttpClient.newHttpClient();
    var request =
        java.net.http.HttpRequest.newBuilder(base.resolve("/v1/queues/" + queue + "/claim"))
            .header("Authorization", "Bearer dev-worker-key")
            .POST(java.net.http.HttpRequest.BodyPublishers.noBody())
            .build();
    var response = http.send(request, java.net.http.HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.body()).contains("\"id\":\"" + id + "\"");
  }

  @Test
  void claim_next_answers_204_with_an_empty_body_when_nothing_is_due() {
    String queue = uniqueQueue("empty");
    claimNext(queue, Map.of()).then().statusCode(204).body(emptyString());

    enqueued(queue, Map.of("dedupeKey", "later", "payload", 1, "runAt", "2099-01-01T00:00:00Z"));
    claimNext(queue, Map.of()).then().statusCode(204);
  }

  @Test
  void claim_next_takes_highest_priority_then_oldest_runAt_then_oldest_item() {
    String queue = uniqueQueue("order");
    String low = enqueued(queue, Map.of("dedupeKey", "low", "payload", 1, "priority", -5));
    String newer = enqueued(queue, Map.of("dedupeKey", "newer", "payload", 1));
    String older =
        enqueued(
            queue, Map.of("dedupeKey", "older", "payload", 1, "runAt", "2020-01-01T00:00:00Z"));
    String urgent = enqueued(queue, Map.of("dedupeKey", "urgent", "payload", 1, "priority", 10));
    String sameRunAtFirst =
        enqueued(queue, Map.of("dedupeKey", "s1", "payload", 1, "runAt", "2021-01-01T00:00:00Z"));
    String sameRunAtSecond =
        enqueued(queue, Map.of("dedupeKey", "s2", "payload", 1, "runAt", "2021-01-01T00:00:00Z"));

    List<String> order = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      order.add(claimedNext(queue, "w").path("id"));
    }
    assertThat(order).containsExactly(urgent, older, sameRunAtFirst, sameRunAtSecond, newer, low);
    claimNext(queue, Map.of()).then().statusCode(204);
  }

  @Test
  void claim_next_only_takes_items_of_its_own_queue() {
    String mine = uniqueQueue("mine");
    String theirs = uniqueQueue("theirs");
    enqueued(theirs, "k", 1);
    claimNext(mine, Map.of()).then().statusCode(204);
  }

  @Test
  void claim_by_id_answers_200_once_then_204() {
    String id = enqueued(uniqueQueue("byid"), "k", 1);

    claim(id, Map.of("worker", "w1"))
        .then()
        .statusCode(200)
        .body("state", equalTo("sending"))
        .body("claimToken", notNullValue());
    claim(id, Map.of("worker", "w2")).then().statusCode(204).body(emptyString());
    item(id).then().body("claimedBy", equalTo("w1")).body("attempts", equalTo(1));
  }

  @Test
  void claim_by_id_of_an_item_not_due_yet_is_204() {
    String id =
        enqueued(
            uniqueQueue("notdue"),
            Map.of("dedupeKey", "k", "payload", 1, "runAt", "2099-01-01T00:00:00Z"));
    claim(id, Map.of()).then().statusCode(204);
  }

  @Test
  void claim_by_id_of_an_unknown_item_is_404() {
    problem(claim("999999999999", Map.of()), 404, "item-not-found");
    problem(claim("not-an-id", Map.of()), 404, "item-not-found");
  }

  @Test
  void claim_rejects_invalid_bodies() {
    String queue = uniqueQueue("badclaim");
    problem(claimNext(queue, Map.of("leaseSeconds", 0)), 400, "invalid-request")
        .body("errors[0].field", equalTo("leaseSeconds"));
    problem(claimNext(queue, Map.of("leaseSeconds", 43201)), 400, "invalid-request");
    problem(claimNext(queue, Map.of("worker", "w".repeat(201))), 400, "invalid-request");
    problem(claimNext(queue, Map.of("wrker", "w")), 400, "malformed-request");
    problem(claimNext("Bad Queue", Map.of()), 400, "invalid-request");
    problem(claimNext(queue, Map.of("waitSeconds", 21)), 400, "invalid-request")
        .body("errors[0].field", equalTo("waitSeconds"));
    problem(claimNext(queue, Map.of("waitSeconds", -1)), 400, "invalid-request");
    // Waiting is for claim-next only: a named item is claimable or not.
    problem(dev.claimq.Api.claim("1", Map.of("waitSeconds", 5)), 400, "malformed-request");
  }

  @Test
  void sixteen_threads_claiming_one_item_get_exactly_one_200_and_fifteen_204s() throws Exception {
    String id = enqueued(uniqueQueue("race"), "contended", 1);
    List<Response> answers = Race.of(16, i -> claim(id, Map.of("worker", "w" + i)));

    List<Integer> statuses = answers.stream().map(Response::statusCode).toList();
    String winner =
        answers.stream()
            .filter(r -> r.statusCode() == 200)
            .map(r -> r.<String>path("claimedBy"))
            .findFirst()
            .orElse(null);
    assertThat(statuses).filteredOn(s -> s == 200).hasSize(1);
    assertThat(statuses).filteredOn(s -> s == 204).hasSize(15);
    item(id).then().body("attempts", equalTo(1)).body("claimedBy", equalTo(winner));
    io.restassured.RestAssured.given()
        .get("/v1/items/{id}/attempts", id)
        .then()
        .body("attempts.size()", equalTo(1));
  }

  @Test
  void each_claim_issues_a_fresh_token() {
    String queue = uniqueQueue("tokens");
    Set<String> tokens = new HashSet<>();
    for (int i = 0; i < 20; i++) {
      enqueued(queue, "k" + i, i);
      tokens.add(claimedNext(queue, "w").path("claimToken"));
    }
    assertThat(tokens).hasSize(20);
  }
}
