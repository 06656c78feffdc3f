package dev.claimq.api;

import static dev.claimq.Api.actionsOn;
import static dev.claimq.Api.claim;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.fail;
import static dev.claimq.Api.failedForGood;
import static dev.claimq.Api.item;
import static dev.claimq.Api.problem;
import static dev.claimq.Api.uniqueQueue;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.not;

import dev.claimq.AsAdmin;
import dev.claimq.Race;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * An operator's change of one item sent with If-Match: made only on the item as the operator read
 * it. Without it, a retry repeated (or made from a stale page) after the item was retried and
 * failed again retries it again, and the work is sent once more; a cancel from a page shown before
 * a retry cancels the retry; a resolve marks done a send that failed again; an approval approves a
 * proposal that was rejected and put back since.
 */
@QuarkusTest
class ItemIfMatchTest extends AsAdmin {

  @Test
  void every_change_of_an_item_gives_it_another_etag() {
    String id = enqueued(uniqueQueue("etag"), "k", 1);
    String enqueuedTag = tag(id);
    assertThat(enqueuedTag).matches("\"[0-9]+\"");
    assertThat(tag(id)).isEqualTo(enqueuedTag); // a read changes nothing
    String token = claim(id, Map.of()).then().statusCode(200).extract().path("claimToken");
    String claimedTag = tag(id);
    assertThat(claimedTag).isNotEqualTo(enqueuedTag);
    fail(id, Map.of("claimToken", token, "error", "boom", "retryable", false))
        .then()
        .statusCode(200);
    assertThat(tag(id)).isNotIn(enqueuedTag, claimedTag);
  }

  @Test
  void a_retry_from_the_current_read_is_made_and_answers_the_new_etag() {
    String id = failedItem(uniqueQueue("etag"));
    String read = tag(id);
    Response retried = retry(id, read);
    retried.then().statusCode(200).body("state", equalTo("pending"));
    assertThat(retried.header("ETag")).isNotEqualTo(read).isEqualTo(tag(id));
  }

  @Test
  void a_retry_from_a_read_before_the_item_failed_again_is_a_412_and_sends_nothing_more() {
    String id = failedItem(uniqueQueue("etag"));
    String read = tag(id); // the page an operator acts on
    retry(id, read).then().statusCode(200); // its answer is lost
    // A worker claims it and it fails again.
    String token = claim(id, Map.of()).then().statusCode(200).extract().path("claimToken");
    fail(id, Map.of("claimToken", token, "error", "boom again", "retryable", false))
        .then()
        .statusCode(200);

    // The operator repeats the retry: without If-Match it would go ahead, a third send.
    problem(retry(id, read), 412, "item-changed")
        .body("detail", containsString("(it is now failed, last changed at "))
        .body("detail", containsString("Nothing was done."));
    item(id).then().body("state", equalTo("failed")).body("attempts", equalTo(1));
    List<Object> actions =
        RestAssured.get("/v1/items/{id}/actions", id).then().extract().path("actions");
    assertThat(actions).hasSize(1);
  }

  @Test
  void of_operators_retrying_from_the_same_read_exactly_one_retries() throws Exception {
    String id = failedItem(uniqueQueue("etag"));
    String read = tag(id);
    List<Integer> statuses = Race.of(8, i -> retry(id, read).statusCode());
    assertThat(Collections.frequency(statuses, 200)).as(statuses.toString()).isEqualTo(1);
    assertThat(Collections.frequency(statuses, 412)).as(statuses.toString()).isEqualTo(7);
    List<Object> actions =
        RestAssured.get("/v1/items/{id}/actions", id).then().extract().path("actions");
    assertThat(actions).hasSize(1);
  }

  @Test
  void a_read_with_if_match_answers_only_the_version_it_names() {
    String id = enqueued(uniqueQueue("etag"), "k", 1);
    String read = tag(id);
    given().header("If-Match", read).get("/v1/items/{id}", id).then().statusCode(200);
    claim(id, Map.of()).then().statusCode(200);
    problem(given().header("If-Match", read).get("/v1/items/{id}", id), 412, "item-changed");
  }

  @Test
  void a_cancel_from_a_read_before_the_item_was_retried_is_a_412_and_the_retry_stands() {
    String id = failedItem(uniqueQueue("etag"));
    String read = tag(id); // the page an operator decides to cancel on
    retry(id, null).then().statusCode(200); // another operator retries it meanwhile

    problem(change(id, "cancel", read, null), 412, "item-changed")
        .body("detail", containsString("(it is now pending, last changed at "));
    item(id).then().body("state", equalTo("pending"));
    assertThat(actionsOn(id)).containsExactly("retry");

    Response cancelled = change(id, "cancel", tag(id), null);
    cancelled.then().statusCode(200).body("state", equalTo("cancelled"));
    assertThat(cancelled.header("ETag")).isEqualTo(tag(id));
    assertThat(actionsOn(id)).containsExactly("retry", "cancel");
  }

  @Test
  void a_resolve_from_a_read_before_the_item_failed_again_is_a_412_and_it_stays_failed() {
    String id = failedItem(uniqueQueue("etag"));
    String read = tag(id); // the operator checks the first failure with the provider
    retry(id, null).then().statusCode(200);
    String token = claim(id, Map.of()).then().statusCode(200).extract().path("claimToken");
    fail(id, Map.of("claimToken", token, "error", "a different failure", "retryable", false))
        .then()
        .statusCode(200);

    // Failed as before, but not the failure the operator checked: not marked done on that word.
    Map<String, String> word = Map.of("externalRef", "ref-1", "note", "provider says sent");
    problem(change(id, "resolve", read, word), 412, "item-changed");
    item(id)
        .then()
        .body("state", equalTo("failed"))
        .body("lastError", equalTo("a different failure"));
    assertThat(actionsOn(id)).containsExactly("retry");

    change(id, "resolve", tag(id), word).then().statusCode(200).body("state", equalTo("done"));
  }

  @Test
  void an_approval_or_rejection_from_a_read_before_the_proposal_was_put_back_is_a_412() {
    String queue = ApprovalGateTest.gated("etag");
    String id = enqueued(queue, "k", 1);
    String read = tag(id); // one operator looks at the proposal
    // Another rejects it, and a third puts it back for approval: held, as it was read, but not
    // the same decision any more.
    change(id, "reject", null, Map.of("reason", "not this week")).then().statusCode(200);
    retry(id, null).then().statusCode(200).body("state", equalTo("held"));

    problem(change(id, "approve", read, Map.of()), 412, "item-changed");
    problem(change(id, "reject", read, Map.of("reason", "no")), 412, "item-changed");
    item(id).then().body("state", equalTo("held"));
    assertThat(actionsOn(id)).containsExactly("reject", "retry");

    Response approved = change(id, "approve", tag(id), Map.of());
    approved.then().statusCode(200).body("state", equalTo("pending"));
    assertThat(approved.header("ETag")).isEqualTo(tag(id));
  }

  @Test
  void of_operators_deciding_one_proposal_from_the_same_read_exactly_one_decides()
      throws Exception {
    String id = enqueued(ApprovalGateTest.gated("etag"), "k", 1);
    String read = tag(id);
    List<Integer> statuses =
        Race.of(
            8,
            i ->
                (i % 2 == 0
                        ? change(id, "approve", read, Map.of())
                        : change(id, "reject", read, Map.of("reason", "no")))
                    .statusCode());
    assertThat(Collections.frequency(statuses, 200)).as(statuses.toString()).isEqualTo(1);
    assertThat(Collections.frequency(statuses, 412)).as(statuses.toString()).isEqualTo(7);
    assertThat(actionsOn(id)).hasSize(1);
  }

  @Test
  void a_change_repeated_with_its_if_match_because_its_answer_was_lost_is_a_412() {
    String queue = uniqueQueue("etag");
    repeatedOnce(failedItem(queue), "cancel", null);
    repeatedOnce(failedItem(queue + "-resolve"), "resolve", Map.of("externalRef", "ref-1"));
  }

  /** The action with If-Match goes ahead; sent again exactly so, it is a 412 and adds nothing. */
  private static void repeatedOnce(String id, String action, Object body) {
    String read = tag(id);
    change(id, action, read, body).then().statusCode(200);
    problem(change(id, action, read, body), 412, "item-changed");
    assertThat(actionsOn(id)).as(action).containsExactly(action);
  }

  @Test
  void a_change_whose_state_is_wrong_but_whose_etag_is_current_is_still_a_409() {
    String id = enqueued(uniqueQueue("etag"), "k", 1);
    // Not failed, so not resolvable; the ETag is right, so it is not a 412.
    problem(change(id, "resolve", tag(id), Map.of()), 409, "state-conflict");
    problem(change(id, "approve", tag(id), Map.of()), 409, "state-conflict");
    item(id).then().body("state", equalTo("pending"));
  }

  @Test
  void a_weak_tag_matches_no_version_and_the_refusal_says_so_not_that_it_changed() {
    String id = failedItem(uniqueQueue("etag-weak"));
    String weak = "W/" + tag(id);
    for (String action : List.of("retry", "cancel")) {
      problem(change(id, action, weak, null), 412, "precondition-failed")
          .body("detail", containsString("only weak entity tags (" + weak + ")"))
          .body("detail", not(containsString("changed since")));
    }
    problem(given().header("If-Match", weak).get("/v1/items/{id}", id), 412, "precondition-failed");
    item(id).then().body("state", equalTo("failed"));
    assertThat(actionsOn(id)).isEmpty();
    // Beside a strong tag of its version, a weak one is passed over: the change is made.
    change(id, "retry", weak + ", " + tag(id), null).then().statusCode(200);
  }

  @Test
  void a_malformed_if_match_on_a_change_is_a_400_naming_it_and_changes_nothing() {
    String id = failedItem(uniqueQueue("etag"));
    problem(change(id, "cancel", "7", null), 400, "invalid-request")
        .body("errors[0].field", equalTo("If-Match"))
        .body("detail", containsString("such as \"7\" (the ETag a read answered)"));
    item(id).then().body("state", equalTo("failed"));
    assertThat(actionsOn(id)).isEmpty();
  }

  @Test
  void a_read_with_if_none_match_naming_its_version_is_a_304_without_a_body() {
    String id = failedItem(uniqueQueue("etag-none"));
    String read = tag(id);
    String weak = "W/" + read;
    for (String current : List.of(read, weak, "\"1\", " + read, "*")) {
      given()
          .header("If-None-Match", current)
          .get("/v1/items/{id}", id)
          .then()
          .statusCode(304)
          .header("ETag", equalTo(read))
          .body(equalTo(""));
    }
    given()
        .header("If-None-Match", "\"1\"")
        .get("/v1/items/{id}", id)
        .then()
        .statusCode(200)
        .body("state", equalTo("failed"));
    problem(given().header("If-None-Match", "1").get("/v1/items/{id}", id), 400, "invalid-request")
        .body("errors[0].field", equalTo("If-None-Match"));
  }

  @Test
  void if_none_match_star_on_any_read_is_a_304_and_tags_on_a_read_without_an_etag_are_met() {
    // * was dropped on the reads without an ETag (200): it names any current representation,
    // and every read here has one.
    String queue = uniqueQueue("etag-none-star");
    String id = failedItem(queue);
    List<String> reads =
        List.of(
            "/v1/queues",
            "/v1/me",
            "/v1/items?queue=" + queue,
            "/v1/items/" + id,
            "/v1/items/" + id + "/attempts",
            "/v1/items/" + id + "/actions",
            "/v1/items:search?q=" + id,
            "/v1/queues/" + queue + "/actions",
            "/v1/queues/" + queue + "/policy");
    for (String read : reads) {
      Response got = given().header("If-None-Match", "*").get(read);
      assertThat(got.statusCode()).as("GET " + read).isEqualTo(304);
      assertThat(got.body().asString()).as("GET " + read).isEmpty();
      assertThat(given().header("If-None-Match", "*").head(read).statusCode())
          .as("HEAD " + read)
          .isEqualTo(304);
    }
    // Entity tags cannot name a read that has none: it is answered.
    for (String read : reads.subList(0, 3)) {
      assertThat(given().header("If-None-Match", "\"1\"").get(read).statusCode())
          .as("GET " + read)
          .isEqualTo(200);
    }
    // A read that is not answered 2xx is not made a 304.
    problem(
        given().header("If-None-Match", "*").get("/v1/items/{id}", "999999999999"),
        404,
        "item-not-found");
  }

  @Test
  void if_none_match_on_a_change_is_evaluated_not_dropped_and_changes_nothing() {
    // It was dropped: a retry sent with If-None-Match naming the version read went ahead, and
    // so did a cancel with If-None-Match: *, which asks that the item not exist.
    String id = failedItem(uniqueQueue("etag-none"));
    String read = tag(id);
    problem(
            given().header("If-None-Match", read).post("/v1/items/{id}/retry", id),
            400,
            "invalid-request")
        .body("errors[0].field", equalTo("If-None-Match"))
        .body("detail", containsString("If-Match"));
    problem(
        given().header("If-None-Match", "*").post("/v1/items/{id}/cancel", id),
        412,
        "precondition-failed");
    item(id).then().body("state", equalTo("failed"));
    assertThat(actionsOn(id)).isEmpty();
    // A call without an ETag: no tag can name its answer, so the condition holds and it acts.
    String queue = uniqueQueue("etag-none-enqueue");
    given()
        .contentType(ContentType.JSON)
        .header("If-None-Match", "\"7\"")
        .body(Map.of("dedupeKey", "k", "payload", 1))
        .post("/v1/queues/{queue}/items", queue)
        .then()
        .statusCode(201);
    problem(
        given()
            .contentType(ContentType.JSON)
            .header("If-None-Match", "*")
            .body(Map.of("dedupeKey", "k2", "payload", 1))
            .post("/v1/queues/{queue}/items", queue),
        412,
        "precondition-failed");
    RestAssured.given()
        .queryParam("queue", queue)
        .get("/v1/items")
        .then()
        .body("items.dedupeKey", org.hamcrest.Matchers.contains("k"));
  }

  /** An item that failed for good on its first attempt. */
  private static String failedItem(String queue) {
    String id = enqueued(queue, "k", 1);
    failedForGood(id);
    return id;
  }

  private static String tag(String id) {
    Response read = item(id);
    read.then().statusCode(200);
    return read.header("ETag");
  }

  private static Response retry(String id, String ifMatch) {
    return change(id, "retry", ifMatch, null);
  }

  /** An operator's POST of the action on the item, with If-Match unless null. */
  private static Response change(String id, String action, String ifMatch, Object body) {
    RequestSpecification request = given();
    if (ifMatch != null) {
      request.header("If-Match", ifMatch);
    }
    if (body != null) {
      request.contentType(ContentType.JSON).body(body);
    }
    return request.post("/v1/items/{id}/" + action, id);
  }
}
