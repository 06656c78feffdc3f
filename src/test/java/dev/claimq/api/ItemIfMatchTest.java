package dev.claimq.api;

import static dev.claimq.Api.claim;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.fail;
import static dev.claimq.Api.item;
import static dev.claimq.Api.problem;
import static dev.claimq.Api.uniqueQueue;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import dev.claimq.AsAdmin;
import dev.claimq.Race;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.restassured.response.Response;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * An operator's retry sent with If-Match: made only on the item as the operator read it. Without
 * it, a retry repeated (or made from a stale page) after the item was retried and failed again
 * retries it again, and the work is sent once more.
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

  /** An item that failed for good on its first attempt. */
  private static String failedItem(String queue) {
    String id = enqueued(queue, "k", 1);
    String token = claim(id, Map.of()).then().statusCode(200).extract().path("claimToken");
    fail(id, Map.of("claimToken", token, "error", "boom", "retryable", false))
        .then()
        .statusCode(200);
    item(id).then().body("state", equalTo("failed"));
    return id;
  }

  private static String tag(String id) {
    Response read = item(id);
    read.then().statusCode(200);
    return read.header("ETag");
  }

  private static Response retry(String id, String ifMatch) {
    return given().header("If-Match", ifMatch).post("/v1/items/{id}/retry", id);
  }
}
