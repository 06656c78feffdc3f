package dev.claimq.api;

import static dev.claimq.Api.awaitState;
import static dev.claimq.Api.claim;
import static dev.claimq.Api.claimNext;
import static dev.claimq.Api.enqueue;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.problem;
import static dev.claimq.Api.uniqueQueue;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.hamcrest.Matchers.containsString;

import dev.claimq.AsAdmin;
import dev.claimq.longpoll.ParkedClaims;
import dev.claimq.mcp.McpClients;
import io.agroal.api.AgroalDataSource;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.net.URI;
import java.sql.Connection;
import java.sql.Statement;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A newer release migrates the schema while this instance serves (as in a rolling restart across a
 * migration): the instance sees the migration in the schema's history and refuses everything, REST
 * and MCP, with nothing read or written, and readiness sends the traffic elsewhere.
 */
@QuarkusTest
class NewerSchemaTest extends AsAdmin {
  /** Far above any migration of this release, so that it can only be a newer release's. */
  static final String NEWER =
      "INSERT INTO flyway_schema_history (installed_rank, version, description, type, script,"
          + " installed_by, execution_time, success)"
          + " SELECT max(installed_rank) + 1, '999', 'from a newer release', 'SQL',"
          + " 'V999__from_a_newer_release.sql', 'test', 0, true FROM flyway_schema_history";

  private static final String INITIALIZE =
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
          + "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
          + "\"clientInfo\":{\"name\":\"gated\",\"version\":\"1\"}}}";

  static final String GONE = "DELETE FROM flyway_schema_history WHERE version = '999'";

  @TestHTTPResource("/")
  URI root;

  @Inject AgroalDataSource database;
  @Inject ParkedClaims waiters;

  private void execute(String sql) throws Exception {
    try (Connection connection = database.getConnection();
        Statement statement = connection.createStatement()) {
      statement.execute(sql);
    }
  }

  private String stateInTheTable(String id) throws Exception {
    try (Connection connection = database.getConnection();
        var read = connection.prepareStatement("SELECT state FROM item WHERE id = ?")) {
      read.setLong(1, Long.parseLong(id));
      try (var row = read.executeQuery()) {
        row.next();
        return row.getString(1);
      }
    }
  }

  /** GET /v1/me until it answers the status: the watch reads the history every second. */
  static Response awaitMe(int status) throws InterruptedException {
    long deadline = System.nanoTime() + 10_000_000_000L;
    Response me = given().get("/v1/me");
    while (me.statusCode() != status && System.nanoTime() < deadline) {
      Thread.sleep(100);
      me = given().get("/v1/me");
    }
    assertThat(me.statusCode()).as(me.asString()).isEqualTo(status);
    return me;
  }

  @Test
  void every_request_is_refused_once_a_newer_release_migrated_and_served_again_without_it()
      throws Exception {
    String queue = uniqueQueue("newer-schema");
    given().get("/q/health/ready").then().statusCode(200);
    McpSyncClient agent = McpClients.client(root, "dev-agent-key"); // a session opened before
    // A claim whose lease runs out while the gate is closed, and a claim parked before it closes.
    String leased = enqueued(uniqueQueue("newer-schema-leased"), "leased", 1);
    claim(leased, Map.of("worker", "w", "leaseSeconds", 1)).then().statusCode(200);
    int parkedBefore = waiters.parked();
    CompletableFuture<Response> parked =
        CompletableFuture.supplyAsync(
            () -> claimNext(uniqueQueue("newer-schema-empty"), Map.of("waitSeconds", 20)));
    while (waiters.parked() == parkedBefore) {
      Thread.sleep(20);
    }
    execute(NEWER);
    try {
      // The parked claim ends at the turn, told why, not after its 20 s.
      problem(parked.get(5, TimeUnit.SECONDS), 503, "schema-newer");
      problem(awaitMe(503), 503, "schema-newer")
          .body("detail", containsString("999 (from a newer release)"));

      // A write is refused before it is made (its row is counted below).
      problem(enqueue(queue, Map.of("dedupeKey", "k", "payload", 1)), 503, "schema-newer");

      // MCP is refused the same way, over HTTP, so that an agent's client goes elsewhere: a tool
      // call in a session opened before, and a new session's initialize.
      assertThatThrownBy(
              () ->
                  agent.callTool(
                      new McpSchema.CallToolRequest(
                          "enqueue_work", Map.of("queue", queue, "dedupeKey", "m", "payload", 1))))
          .hasMessageContaining("503");
      given()
          .header("Authorization", "Bearer dev-agent-key")
          .contentType("application/json")
          .accept("application/json, text/event-stream")
          .body(INITIALIZE)
          .post("/mcp")
          .then()
          .statusCode(503)
          .contentType("application/problem+json")
          .header("Retry-After", "1")
          .body("type", containsString("schema-newer"))
          .body("detail", containsString("999 (from a newer release)"));
      assertThat(McpClients.rows(database, queue)).as("items made while refused").isZero();

      // Readiness takes the instance out of its load balancer, and says why.
      given()
          .get("/q/health/ready")
          .then()
          .statusCode(503)
          .body(
              "checks.find { it.name == 'schema-current' }.status",
              org.hamcrest.Matchers.is("DOWN"))
          .body(
              "checks.find { it.name == 'schema-current' }.data.reason",
              containsString("999 (from a newer release)"));

      // The lease ran out 2 s ago and more, and the reaper (every second) released nothing: none
      // of this release's statements runs on the newer schema, background ones included.
      Thread.sleep(2500);
      assertThat(stateInTheTable(leased)).isEqualTo("sending");
    } finally {
      execute(GONE);
      agent.closeGracefully();
    }
    awaitMe(200);
    awaitState(leased, "pending");
    given().get("/q/health/ready").then().statusCode(200);
  }
}
