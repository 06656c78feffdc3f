package dev.claimq.api;

import static dev.claimq.Api.claim;
import static dev.claimq.Api.claimNext;
import static dev.claimq.Api.complete;
import static dev.claimq.Api.enqueue;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.item;
import static dev.claimq.Api.json;
import static dev.claimq.Api.problem;
import static dev.claimq.Api.uniqueQueue;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.claimq.AgentSpan;
import dev.claimq.AsAdmin;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.Header;
import io.restassured.http.Headers;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * Traces carried from agent to worker: an enqueue's traceparent is stored exactly as sent and shown
 * on every claim and read.
 */
@QuarkusTest
class TracesTest extends AsAdmin {

  @Inject DataSource dataSource;

  @Test
  void the_traceparent_comes_back_exactly_on_every_claim_and_every_read() {
    // Not sampled (flags 00): stored as sent all the same.
    String traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00";
    String queue = uniqueQueue("roundtrip");
    Response created =
        enqueueWith(traceparent, queue, Map.of("dedupeKey", "k", "payload", Map.of("n", 1)));
    created.then().statusCode(201).body("traceparent", equalTo(traceparent));
    String id = created.path("id");

    item(id).then().statusCode(200).body("traceparent", equalTo(traceparent));
    Response claimed = claim(id, Map.of("worker", "w"));
    claimed.then().statusCode(200).body("traceparent", equalTo(traceparent));
    complete(id, Map.of("claimToken", claimed.path("claimToken")))
        .then()
        .statusCode(200)
        .body("traceparent", equalTo(traceparent));
    given()
        .queryParam("queue", queue)
        .get("/v1/items")
        .then()
        .body("items[0].traceparent", equalTo(traceparent));
    assertThat(stored(id)).isEqualTo(traceparent);
  }

  @Test
  void every_claim_answer_puts_traceparent_before_possiblySent_and_keeps_claimToken_last()
      throws Exception {
    AgentSpan agent = AgentSpan.next();
    String queue = uniqueQueue("order");
    String byId = enqueuedWith(agent.traceparent(), queue, "by-id");
    assertClaimFieldOrder(claim(byId, Map.of()).asString(), agent.traceparent());

    enqueuedWith(agent.traceparent(), queue, "next");
    assertClaimFieldOrder(claimNext(queue, Map.of()).asString(), agent.traceparent());

    enqueuedWith(agent.traceparent(), queue, "batch");
    JsonNode batch =
        new ObjectMapper()
            .readTree(
                json().body(Map.of("max", 1)).post("/v1/queues/{q}/claim:batch", queue).asString());
    assertClaimFieldOrder(batch.path("items").get(0).toString(), agent.traceparent());

    // Without one, the field is there and null, so a worker can read it positionally too.
    String plain = enqueued(queue, "plain", 1);
    String answer = claim(plain, Map.of()).asString();
    assertThat(new ObjectMapper().readTree(answer).get("traceparent").isNull()).isTrue();
    assertClaimFieldOrder(answer, null);
  }

  @Test
  void a_malformed_traceparent_is_refused_naming_it_and_nothing_is_stored() {
    String queue = uniqueQueue("malformed");
    String valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    List<String> malformed =
        List.of(
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",
            valid + "," + valid);
    for (String value : malformed) {
      var body = Map.of("dedupeKey", "k", "payload", 1);
      problem(enqueueWith(value, queue, body), 400, "invalid-request")
          .body("errors[0].field", equalTo("traceparent"))
          .body("errors.size()", equalTo(1));
      problem(
              enqueueBatch(queue, value, List.of(Map.of("dedupeKey", "b", "payload", 1))),
              400,
              "invalid-request")
          .body("errors[0].field", equalTo("traceparent"));
    }
    // Twice is as ambiguous as a repeated JSON field.
    Response twice =
        json()
            .headers(
                new Headers(new Header("traceparent", valid), new Header("traceparent", valid)))
            .body(Map.of("dedupeKey", "k", "payload", 1))
            .post("/v1/queues/{q}/items", queue);
    problem(twice, 400, "invalid-request").body("errors[0].field", equalTo("traceparent"));

    given().queryParam("queue", queue).get("/v1/items").then().body("items.size()", equalTo(0));
  }

  @Test
  void the_table_itself_refuses_a_traceparent_of_any_other_form() throws SQLException {
    try (Connection connection = dataSource.getConnection();
        Statement statement = connection.createStatement()) {
      for (String value :
          List.of(
              "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 ",
              "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01")) {
        String insert =
            "INSERT INTO item (queue, dedupe_key, payload, max_attempts, traceparent)"
                + " VALUES ('check', 'k', '1', 1, '"
                + value
                + "')";
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> statement.execute(insert))
            .hasMessageContaining("item_traceparent_w3c");
      }
    }
  }

  @Test
  void a_replay_keeps_the_first_traceparent_and_is_no_error() {
    String first = AgentSpan.next().traceparent();
    String queue = uniqueQueue("replay");
    var body = Map.of("dedupeKey", "k", "payload", Map.of("to", "ada"));
    String id = enqueueWith(first, queue, body).then().statusCode(201).extract().path("id");

    enqueueWith(AgentSpan.next().traceparent(), queue, body)
        .then()
        .statusCode(200)
        .header(QueuesResource.REPLAYED_HEADER, "true")
        .body("id", equalTo(id))
        .body("traceparent", equalTo(first));
    enqueue(queue, body).then().statusCode(200).body("traceparent", equalTo(first));
    assertThat(stored(id)).isEqualTo(first);

    // An item made without one stays without one.
    var plain = Map.of("dedupeKey", "plain", "payload", 1);
    String plainId = enqueue(queue, plain).then().statusCode(201).extract().path("id");
    enqueueWith(first, queue, plain).then().statusCode(200).body("traceparent", nullValue());
    assertThat(stored(plainId)).isNull();
  }

  @Test
  void a_batch_stores_its_traceparent_with_each_new_entry_and_replays_keep_theirs() {
    String older = AgentSpan.next().traceparent();
    String batch = AgentSpan.next().traceparent();
    String queue = uniqueQueue("batch");
    String existing = enqueuedWith(older, queue, "old");

    Response answer =
        enqueueBatch(
            queue,
            batch,
            List.of(
                Map.of("dedupeKey", "new-1", "payload", 1),
                Map.of("dedupeKey", "old", "payload", 1),
                Map.of("dedupeKey", "new-2", "payload", 2)));
    answer
        .then()
        .statusCode(200)
        .body("results.status", equalTo(List.of(201, 200, 201)))
        .body("results.item.traceparent", equalTo(List.of(batch, older, batch)));
    assertThat(stored(answer.path("results[0].item.id"))).isEqualTo(batch);
    assertThat(stored(existing)).isEqualTo(older);
    assertThat(stored(answer.path("results[2].item.id"))).isEqualTo(batch);

    enqueueBatch(queue, null, List.of(Map.of("dedupeKey", "new-3", "payload", 3)))
        .then()
        .statusCode(200)
        .body("results[0].item.traceparent", nullValue());
  }

  // --- helpers ---

  private static Response enqueueWith(String traceparent, String queue, Object body) {
    return json().header("traceparent", traceparent).body(body).post("/v1/queues/{q}/items", queue);
  }

  private static String enqueuedWith(String traceparent, String queue, String dedupeKey) {
    return enqueueWith(traceparent, queue, Map.of("dedupeKey", dedupeKey, "payload", 1))
        .then()
        .statusCode(201)
        .extract()
        .path("id");
  }

  private static Response enqueueBatch(
      String queue, String traceparent, List<Map<String, Object>> items) {
    var request = json().urlEncodingEnabled(false);
    if (traceparent != null) {
      request.header("traceparent", traceparent);
    }
    return request.body(Map.of("items", items)).post("/v1/queues/" + queue + "/items:batch");
  }

  /** The traceparent column as the table holds it. */
  private String stored(String id) {
    try (Connection connection = dataSource.getConnection();
        Statement statement = connection.createStatement();
        var rows =
            statement.executeQuery(
                "SELECT traceparent FROM item WHERE id = " + Long.parseLong(id))) {
      assertThat(rows.next()).as("item %s is stored", id).isTrue();
      return rows.getString(1);
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  private static void assertClaimFieldOrder(String claimed, String traceparent) throws Exception {
    JsonNode item = new ObjectMapper().readTree(claimed);
    List<String> fields = new ArrayList<>();
    item.fieldNames().forEachRemaining(fields::add);
    assertThat(fields.get(fields.size() - 1)).isEqualTo("claimToken");
    assertThat(fields.indexOf("traceparent"))
        .isNotNegative()
        .isLessThan(fields.indexOf("possiblySent"));
    assertThat(fields.indexOf("possiblySent")).isLessThan(fields.indexOf("priorAttempts"));
    assertThat(fields.indexOf("priorAttempts")).isLessThan(fields.indexOf("claimToken"));
    assertThat(item.get("traceparent").isNull() ? null : item.get("traceparent").asText())
        .isEqualTo(traceparent);
  }
}
