package dev.claimq.api;

import static dev.claimq.Api.allQueues;
import static dev.claimq.Api.json;
import static dev.claimq.Api.problem;
import static dev.claimq.Api.uniqueQueue;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.not;

import dev.claimq.AsAdmin;
import dev.claimq.Race;
import dev.claimq.telemetry.MetricValues;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.restassured.response.Response;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A policy change sent with If-Match: made only on the version its read had, so that an operator
 * working from a stale page cannot overwrite another's change; and every answer's ETag.
 */
@QuarkusTest
class PolicyIfMatchTest extends AsAdmin {

  @Test
  void every_answer_carries_the_version_and_every_change_counts_it_up() {
    String queue = uniqueQueue("etag");
    assertThat(read(queue).header("ETag")).isEqualTo("\"0\""); // never set: no row

    Response set = put(queue, Map.of("maxAttempts", 3), null);
    set.then().statusCode(200).header("ETag", "\"1\"");
    assertThat(read(queue).header("ETag")).isEqualTo("\"1\"");

    RestAssured.post("/v1/queues/{queue}/pause", queue)
        .then()
        .statusCode(200)
        .header("ETag", "\"2\"");
    RestAssured.post("/v1/queues/{queue}/resume", queue)
        .then()
        .statusCode(200)
        .header("ETag", "\"3\"");
    // Changes of nothing (a repeat whose answer was lost) keep the version.
    RestAssured.post("/v1/queues/{queue}/resume", queue)
        .then()
        .statusCode(200)
        .header("ETag", "\"3\"");
    put(queue, Map.of("maxAttempts", 3), null).then().statusCode(200).header("ETag", "\"3\"");
    assertThat(read(queue).header("ETag")).isEqualTo("\"3\"");
  }

  @Test
  void a_change_from_the_current_version_is_made() {
    String queue = uniqueQueue("etag");
    put(queue, Map.of("maxAttempts", 3), "\"0\"").then().statusCode(200).header("ETag", "\"1\"");
    put(queue, Map.of("maxAttempts", 4), "\"1\"")
        .then()
        .statusCode(200)
        .header("ETag", "\"2\"")
        .body("maxAttempts", equalTo(4));
    // A list matches when any of its tags does; * always.
    put(queue, Map.of("maxAttempts", 5), "\"9\", \"2\"").then().statusCode(200);
    put(queue, Map.of("maxAttempts", 6), "*").then().statusCode(200).header("ETag", "\"4\"");
    assertThat(actions(queue)).hasSize(4);
  }

  @Test
  void a_change_from_a_stale_read_is_a_412_that_says_who_changed_it_and_changes_nothing() {
    String queue = uniqueQueue("etag");
    put(queue, Map.of("maxAttempts", 3), null).then().statusCode(200); // version 1
    put(queue, Map.of("maxAttempts", 4), "\"1\"").then().statusCode(200); // version 2
    MetricValues before = MetricValues.scrape();

    // An operator who read version 1 saves other settings: someone changed it since.
    problem(put(queue, Map.of("leaseSeconds", 30), "\"1\""), 412, "policy-changed")
        .body("detail", containsString("is at \"2\", changed by dev-admin at "))
        .body("detail", containsString("Nothing was changed."));

    // A read is refused too, and says so as a read: it was told nothing had been changed.
    problem(
            given().header("If-Match", "\"1\"").get("/v1/queues/{q}/policy", queue),
            412,
            "policy-changed")
        .body("detail", containsString("Read it without If-Match"))
        .body("detail", not(containsString("Nothing was changed")));
    read(queue)
        .then()
        .header("ETag", "\"2\"")
        .body("maxAttempts", equalTo(4))
        .body("leaseSeconds", equalTo(null));
    assertThat(actions(queue)).hasSize(2);
    assertThat(
            MetricValues.scrape()
                    .value("claimq_operator_actions_total", "queue", queue, "action", "policy")
                - before.value("claimq_operator_actions_total", "queue", queue, "action", "policy"))
        .isZero();
  }

  @Test
  void a_weak_tag_or_one_that_is_no_version_matches_nothing() {
    String queue = uniqueQueue("etag");
    put(queue, Map.of("maxAttempts", 3), null).then().statusCode(200); // version 1
    // Not "it changed": a weak tag is never compared, and the detail says why it might be weak.
    problem(put(queue, Map.of("maxAttempts", 4), "W/\"1\""), 412, "precondition-failed")
        .body("detail", containsString("weak"))
        .body("detail", containsString("proxy that compresses"));
    problem(put(queue, Map.of("maxAttempts", 4), "\"one\""), 412, "policy-changed");
    problem(put(queue, Map.of("maxAttempts", 4), "\"01\""), 412, "policy-changed");
    read(queue).then().header("ETag", "\"1\"").body("maxAttempts", equalTo(3));
  }

  @Test
  void a_first_policy_is_made_only_from_version_0() {
    String queue = uniqueQueue("etag");
    problem(put(queue, Map.of("maxAttempts", 3), "\"1\""), 412, "policy-changed")
        .body("detail", containsString("is at \"0\", not at a version If-Match names"));
    assertThat(read(queue).header("ETag")).isEqualTo("\"0\"");
    assertThat(actions(queue)).isEmpty();
  }

  @Test
  void the_defaults_put_on_a_queue_never_set_change_nothing_whatever_the_if_match_names() {
    String queue = uniqueQueue("etag");
    MetricValues before = MetricValues.scrape();
    // A queue never set has every setting null already: as a resume of a running queue does,
    // the PUT answers it as it is, version 0, with or without an If-Match.
    for (String ifMatch : Arrays.asList(null, "\"0\"", "\"5\"", "*")) {
      put(queue, Map.of(), ifMatch)
          .then()
          .statusCode(200)
          .header("ETag", "\"0\"")
          .body("maxAttempts", equalTo(null))
          .body("paused", equalTo(false));
    }
    assertThat(read(queue).header("ETag")).isEqualTo("\"0\"");
    assertThat(actions(queue)).isEmpty();
    assertThat(
            MetricValues.scrape()
                    .value("claimq_operator_actions_total", "queue", queue, "action", "policy")
                - before.value("claimq_operator_actions_total", "queue", queue, "action", "policy"))
        .isZero();
    List<Map<String, Object>> queues = allQueues();
    assertThat(queues).noneMatch(q -> queue.equals(q.get("queue")));
    // Other settings from another version are still not made.
    problem(put(queue, Map.of("maxAttempts", 3), "\"5\""), 412, "policy-changed");
    put(queue, Map.of("maxAttempts", 3), "\"0\"").then().statusCode(200).header("ETag", "\"1\"");
  }

  @Test
  void a_repeat_whose_answer_was_lost_is_a_200_though_its_version_is_gone() {
    String queue = uniqueQueue("etag");
    put(queue, Map.of("maxAttempts", 3), null).then().statusCode(200); // version 1
    put(queue, Map.of("maxAttempts", 4), "\"1\"").then().statusCode(200); // answer lost
    // RFC 9110, 13.1.1: the change is already made, so the repeat succeeds, changing nothing.
    put(queue, Map.of("maxAttempts", 4), "\"1\"")
        .then()
        .statusCode(200)
        .header("ETag", "\"2\"")
        .body("maxAttempts", equalTo(4));
    assertThat(actions(queue)).hasSize(2);
  }

  @Test
  void an_if_match_that_is_no_list_of_entity_tags_is_a_400_that_names_it() {
    String queue = uniqueQueue("etag");
    put(queue, Map.of("maxAttempts", 3), null).then().statusCode(200); // version 1
    for (String value : List.of("1", "\"1", "\"1\" \"2\"", "\"1\";", "*, \"1\"", ",", "W/1")) {
      problem(put(queue, Map.of("maxAttempts", 4), value), 400, "invalid-request")
          .body("errors[0].field", equalTo("If-Match"))
          .body("detail", containsString("'If-Match' "));
    }
    read(queue).then().header("ETag", "\"1\"").body("maxAttempts", equalTo(3));
    assertThat(actions(queue)).hasSize(1);
  }

  @Test
  void of_operators_saving_from_the_same_read_exactly_one_wins() throws Exception {
    String queue = uniqueQueue("etag");
    put(queue, Map.of("maxAttempts", 3), null).then().statusCode(200); // version 1
    List<Integer> statuses =
        Race.of(8, i -> put(queue, Map.of("maxAttempts", 10 + i), "\"1\"").statusCode());
    assertThat(Collections.frequency(statuses, 200)).as(statuses.toString()).isEqualTo(1);
    assertThat(Collections.frequency(statuses, 412)).as(statuses.toString()).isEqualTo(7);
    assertThat(read(queue).header("ETag")).isEqualTo("\"2\"");
    assertThat(actions(queue)).hasSize(2);
    // The winner's settings are the ones in force.
    int winner = statuses.indexOf(200);
    read(queue).then().body("maxAttempts", equalTo(10 + winner));
  }

  @Test
  void of_operators_making_the_first_policy_from_version_0_exactly_one_wins() throws Exception {
    String queue = uniqueQueue("etag");
    List<Integer> statuses =
        Race.of(8, i -> put(queue, Map.of("maxAttempts", 10 + i), "\"0\"").statusCode());
    assertThat(Collections.frequency(statuses, 200)).as(statuses.toString()).isEqualTo(1);
    assertThat(Collections.frequency(statuses, 412)).as(statuses.toString()).isEqualTo(7);
    assertThat(read(queue).header("ETag")).isEqualTo("\"1\"");
    assertThat(actions(queue)).hasSize(1);
    read(queue).then().body("maxAttempts", equalTo(10 + statuses.indexOf(200)));
  }

  @Test
  void a_pause_or_resume_from_a_stale_read_is_a_412_unless_the_queue_is_already_so() {
    String queue = uniqueQueue("etag");
    put(queue, Map.of("maxAttempts", 3), null).then().statusCode(200); // version 1
    pause(queue, "\"1\"").then().statusCode(200).header("ETag", "\"2\"");
    // Read at version 1, before the pause: a resume from it would undo a change unseen.
    problem(resume(queue, "\"1\""), 412, "policy-changed");
    read(queue).then().header("ETag", "\"2\"").body("paused", equalTo(true));
    // The same pause again, from the old read: already paused, so it is done (200, unchanged).
    pause(queue, "\"1\"").then().statusCode(200).header("ETag", "\"2\"");
    resume(queue, "\"2\"").then().statusCode(200).header("ETag", "\"3\"");
    assertThat(actions(queue)).hasSize(3);
    // A queue never set: version 0, running; a pause from another version is not made.
    String fresh = uniqueQueue("etag");
    problem(pause(fresh, "\"3\""), 412, "policy-changed");
    assertThat(read(fresh).header("ETag")).isEqualTo("\"0\"");
    resume(fresh, "\"3\"").then().statusCode(200).body("paused", equalTo(false));
    pause(fresh, "\"0\"").then().statusCode(200).header("ETag", "\"1\"");
  }

  @Test
  void a_read_with_if_match_answers_only_the_version_it_names() {
    String queue = uniqueQueue("etag");
    given()
        .header("If-Match", "\"0\"")
        .get("/v1/queues/{queue}/policy", queue)
        .then()
        .statusCode(200);
    problem(
        given().header("If-Match", "\"1\"").get("/v1/queues/{queue}/policy", queue),
        412,
        "policy-changed");
  }

  @Test
  void any_other_call_answers_412_to_entity_tags_and_does_nothing() {
    String queue = uniqueQueue("etag");
    Map<String, Object> work = Map.of("dedupeKey", "k", "payload", Map.of());
    problem(
            json().header("If-Match", "\"1\"").body(work).post("/v1/queues/{queue}/items", queue),
            412,
            "precondition-failed")
        .body("detail", containsString("carry no entity tag"));
    RestAssured.get("/v1/items?queue={queue}", queue).then().body("items.size()", equalTo(0));
    // Malformed, it is a 400 as on the policy; * is met by anything.
    problem(
            json().header("If-Match", "1").body(work).post("/v1/queues/{queue}/items", queue),
            400,
            "invalid-request")
        .body("errors[0].field", equalTo("If-Match"));
    String id =
        json()
            .header("If-Match", "*")
            .body(work)
            .post("/v1/queues/{queue}/items", queue)
            .then()
            .statusCode(201)
            .extract()
            .path("id");
    problem(
        json().header("If-Match", "\"1\"").body(Map.of()).post("/v1/items/{id}/claim", id),
        412,
        "precondition-failed");
    RestAssured.get("/v1/items/{id}", id).then().body("state", equalTo("pending"));
  }

  @Test
  void if_none_match_is_a_304_on_a_read_of_that_version_and_never_dropped_from_a_change() {
    String queue = uniqueQueue("policy-none");
    put(queue, Map.of("maxAttempts", 3), null).then().statusCode(200);
    String version = read(queue).header("ETag");
    given()
        .header("If-None-Match", version)
        .get("/v1/queues/{queue}/policy", queue)
        .then()
        .statusCode(304)
        .header("ETag", equalTo(version));
    given()
        .header("If-None-Match", "\"0\"")
        .get("/v1/queues/{queue}/policy", queue)
        .then()
        .statusCode(200)
        .body("maxAttempts", equalTo(3));

    // The PUT went ahead with If-None-Match naming the version it replaced, as did a pause
    // with If-None-Match: *.
    problem(
            json()
                .header("If-None-Match", version)
                .body(Map.of("maxAttempts", 4))
                .put("/v1/queues/{queue}/policy", queue),
            400,
            "invalid-request")
        .body("errors[0].field", equalTo("If-None-Match"));
    problem(
        given().header("If-None-Match", "*").post("/v1/queues/{queue}/pause", queue),
        412,
        "precondition-failed");
    read(queue)
        .then()
        .header("ETag", equalTo(version))
        .body("maxAttempts", equalTo(3))
        .body("paused", equalTo(false));
  }

  private static Response pause(String queue, String ifMatch) {
    return given().header("If-Match", ifMatch).post("/v1/queues/{queue}/pause", queue);
  }

  private static Response resume(String queue, String ifMatch) {
    return given().header("If-Match", ifMatch).post("/v1/queues/{queue}/resume", queue);
  }

  private static Response read(String queue) {
    Response response = RestAssured.get("/v1/queues/{queue}/policy", queue);
    response.then().statusCode(200);
    return response;
  }

  private static Response put(String queue, Map<String, Object> policy, String ifMatch) {
    var request = json().body(policy);
    if (ifMatch != null) {
      request = request.header("If-Match", ifMatch);
    }
    return request.put("/v1/queues/{queue}/policy", queue);
  }

  private static List<Object> actions(String queue) {
    return RestAssured.get("/v1/queues/{queue}/actions", queue)
        .then()
        .statusCode(200)
        .extract()
        .path("actions");
  }
}
