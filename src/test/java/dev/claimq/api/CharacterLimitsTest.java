package dev.claimq.api;

import static dev.claimq.Api.claim;
import static dev.claimq.Api.complete;
import static dev.claimq.Api.enqueue;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.item;
import static dev.claimq.Api.json;
import static dev.claimq.Api.problem;
import static dev.claimq.Api.uniqueQueue;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.equalTo;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.claimq.AsAdmin;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A length limit counts characters (Unicode code points), as the document's maxLength and the
 * database's char_length do, not the UTF-16 units Java holds them in: an emoji is one character,
 * two units. A value at the limit is stored exactly as sent, one character over is a 400 naming its
 * field.
 */
@QuarkusTest
class CharacterLimitsTest extends AsAdmin {
  /** U+1F600: one character, two UTF-16 units, four bytes of UTF-8. */
  private static final String EMOJI = "\uD83D\uDE00";

  private static String characters(int count) {
    return EMOJI.repeat(count);
  }

  @Test
  void a_dedupe_key_of_200_characters_outside_the_bmp_is_stored_as_sent_and_201_are_refused() {
    String queue = uniqueQueue("chars-key");

    String id = enqueued(queue, characters(200), 1);
    Response batch = enqueueBatch(queue, "b" + characters(199));

    assertThat(item(id).jsonPath().getString("dedupeKey")).isEqualTo(characters(200));
    assertThat(batch.<List<Integer>>path("results.status")).containsExactly(201);
    assertThat(item(batch.path("results[0].item.id")).jsonPath().getString("dedupeKey"))
        .isEqualTo("b" + characters(199));
    refused(
        enqueue(queue, Map.of("dedupeKey", characters(201), "payload", 1)),
        "dedupeKey",
        "size must be between 1 and 200");
    refused(
        enqueueBatch(queue, "b" + characters(200)),
        "items[0].dedupeKey",
        "size must be between 1 and 200");
  }

  @Test
  void a_worker_name_of_200_characters_outside_the_bmp_is_stored_as_sent_and_201_are_refused() {
    String queue = uniqueQueue("chars-worker");
    String id = enqueued(queue, "k", 1);

    refused(
        claim(id, Map.of("worker", characters(201))), "worker", "size must be between 0 and 200");
    claim(id, Map.of("worker", characters(200))).then().statusCode(200);

    assertThat(item(id).jsonPath().getString("claimedBy")).isEqualTo(characters(200));
  }

  @Test
  void an_external_ref_of_500_characters_outside_the_bmp_is_stored_as_sent_and_501_are_refused() {
    String queue = uniqueQueue("chars-ref");
    String id = enqueued(queue, "k", 1);
    String token = claim(id, Map.of()).then().statusCode(200).extract().path("claimToken");

    refused(
        complete(id, Map.of("claimToken", token, "externalRef", characters(501))),
        "externalRef",
        "size must be between 0 and 500");
    complete(id, Map.of("claimToken", token, "externalRef", characters(500)))
        .then()
        .statusCode(200);

    assertThat(item(id).jsonPath().getString("state")).isEqualTo("done");
    assertThat(item(id).jsonPath().getString("externalRef")).isEqualTo(characters(500));
  }

  @Test
  void a_failure_reason_of_100000_characters_outside_the_bmp_is_taken_and_cut_to_2000()
      throws Exception {
    String queue = uniqueQueue("chars-error");
    String id = enqueued(queue, "k", 1);
    String token = claim(id, Map.of()).then().statusCode(200).extract().path("claimToken");

    // As UTF-8, 400 KB: within the 1 MiB body limit, which escaped surrogate pairs would pass.
    refused(
        failRaw(id, Map.of("claimToken", token, "error", characters(100_001))),
        "error",
        "size must be between 0 and 100000");
    failRaw(id, Map.of("claimToken", token, "error", characters(100_000))).then().statusCode(200);

    assertThat(item(id).jsonPath().getString("lastError")).isEqualTo(characters(1_999) + "…");
  }

  @Test
  void a_failure_reason_under_2000_characters_outside_the_bmp_is_kept_whole() throws Exception {
    String queue = uniqueQueue("chars-reason");
    String id = enqueued(queue, "k", 1);
    String token = claim(id, Map.of()).then().statusCode(200).extract().path("claimToken");

    failRaw(id, Map.of("claimToken", token, "error", characters(2_000))).then().statusCode(200);

    assertThat(item(id).jsonPath().getString("lastError")).isEqualTo(characters(2_000));
  }

  @Test
  void a_reason_to_look_for_of_500_characters_outside_the_bmp_is_taken_and_501_are_refused() {
    String queue = uniqueQueue("chars-filter");

    json()
        .body(Map.of("queue", queue, "reason", characters(500), "dryRun", true))
        .post("/v1/items:retry")
        .then()
        .statusCode(200)
        .body("items", equalTo(List.of()));
    // 500 percent-encoded emoji take 6,000 bytes of the request line.
    given()
        .urlEncodingEnabled(false)
        .get("/v1/items?queue=" + queue + "&reason=" + encoded(characters(500)))
        .then()
        .statusCode(200)
        .body("items", equalTo(List.of()));
    given()
        .urlEncodingEnabled(false)
        .get("/v1/items:search?q=" + encoded("x" + characters(499)))
        .then()
        .statusCode(200)
        .body("items", equalTo(List.of()));

    refused(
        json()
            .body(Map.of("queue", queue, "reason", characters(501), "dryRun", true))
            .post("/v1/items:retry"),
        "reason",
        "size must be between 1 and 500");
    refused(
        given()
            .urlEncodingEnabled(false)
            .get("/v1/items?queue=" + queue + "&reason=" + encoded(characters(501))),
        "reason",
        "reason must be 1 to 500 characters; got 501.");
  }

  private static Response enqueueBatch(String queue, String dedupeKey) {
    return json()
        .urlEncodingEnabled(false)
        .body(Map.of("items", List.of(Map.of("dedupeKey", dedupeKey, "payload", 1))))
        .post("/v1/queues/" + queue + "/items:batch");
  }

  /** A fail whose body has each character as itself (a String is written unescaped), in UTF-8. */
  private static Response failRaw(String id, Map<String, ?> body) throws Exception {
    return given()
        .contentType("application/json; charset=UTF-8")
        .body(new ObjectMapper().writeValueAsString(body))
        .post("/v1/items/{id}/fail", id);
  }

  private static String encoded(String text) {
    return URLEncoder.encode(text, StandardCharsets.UTF_8);
  }

  /** A 400 whose one field error names the field, in these words. */
  private static void refused(Response response, String field, String message) {
    problem(response, 400, "invalid-request")
        .body("errors.field", contains(field))
        .body("errors.message", contains(message));
  }
}
