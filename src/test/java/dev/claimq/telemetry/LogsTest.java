package dev.claimq.telemetry;

import static dev.claimq.Api.claim;
import static dev.claimq.Api.complete;
import static dev.claimq.Api.enqueue;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.fail;
import static dev.claimq.Api.heartbeat;
import static dev.claimq.Api.uniqueQueue;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import dev.claimq.AsAdmin;
import dev.claimq.LogCapture;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import org.jboss.logmanager.ExtLogRecord;
import org.junit.jupiter.api.Test;

/**
 * The logs as an operator switches them on: JSON, the access log, claimq's own lines down to DEBUG.
 * Lines about an item carry it as fields, and no line holds a claim token or a key.
 */
@QuarkusTest
@TestProfile(LogsTest.Everything.class)
class LogsTest extends AsAdmin {
  public static class Everything implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      return Map.of(
          "quarkus.log.console.json.enabled", "true", "quarkus.http.access-log.enabled", "true");
    }
  }

  // claimq's own lines down to DEBUG for these tests only: a level set by config would outlive
  // this profile's restart and flood every later test's output.
  private static final java.util.logging.Logger CLAIMQ =
      java.util.logging.Logger.getLogger("dev.claimq");
  private Level before;

  @org.junit.jupiter.api.BeforeEach
  void everyLineOfClaimq() {
    before = CLAIMQ.getLevel();
    CLAIMQ.setLevel(Level.FINE);
  }

  @org.junit.jupiter.api.AfterEach
  void asBefore() {
    CLAIMQ.setLevel(before);
  }

  @Test
  void one_setting_switches_the_console_to_json() {
    List<String> formatters = new ArrayList<>();
    for (Handler handler : allHandlers(java.util.logging.Logger.getLogger(""))) {
      if (handler.getFormatter() != null) {
        formatters.add(handler.getFormatter().getClass().getSimpleName());
      }
    }
    assertThat(formatters).anyMatch(name -> name.contains("Json"));
  }

  @Test
  void lines_about_an_item_carry_its_id_queue_and_attempt_as_fields() {
    String queue = uniqueQueue("logs-fields");
    String id = enqueued(queue, Map.of("dedupeKey", "k", "payload", 1, "maxAttempts", 1));
    String token = claim(id, Map.of("worker", "w")).path("claimToken");
    try (LogCapture log = LogCapture.start(Level.FINE)) {
      fail(id, Map.of("claimToken", token, "error", "422 invalid recipient", "retryable", false))
          .then()
          .statusCode(200);
      complete(id, Map.of("claimToken", "not-the-token")).then().statusCode(409);

      ExtLogRecord failed = only(log, "failed, for an operator");
      // The reason may name a customer: it stays on the item.
      assertThat(log.records().stream().map(LogCapture::format))
          .noneMatch(line -> line.contains("invalid recipient"));
      assertThat(failed.getMdcCopy())
          .containsEntry("itemId", id)
          .containsEntry("queue", queue)
          .containsEntry("attempt", "1");
      ExtLogRecord refused = only(log, "409 ");
      assertThat(refused.getMdcCopy())
          .as("the refusal's line")
          .containsEntry("itemId", id)
          .containsEntry("queue", queue)
          .containsEntry("attempt", "1");
    }
  }

  @Test
  void an_access_log_line_ends_with_the_request_duration() throws InterruptedException {
    try (LogCapture log = LogCapture.start(Level.INFO)) {
      given().get("/v1/me").then().statusCode(200);
      List<String> lines = accessLines(log, "\"GET /v1/me ");
      // %D is "-" unless the server records when each request started.
      assertThat(lines).as("access log lines of GET /v1/me").hasSize(1);
      assertThat(lines.get(0)).matches(".* \"GET /v1/me HTTP/1.1\" 200 \\d+ \\d+ ms");

      // A query can name a person (a search's words): the line has the path alone.
      given()
          .queryParam("q", "ada.lovelace@example.com")
          .get("/v1/items:search")
          .then()
          .statusCode(200);
      assertThat(accessLines(log, "search"))
          .hasSize(1)
          .noneMatch(line -> line.contains("lovelace"));
    }
  }

  /** The access log's lines holding this text, once there is one. */
  private static List<String> accessLines(LogCapture log, String text) throws InterruptedException {
    List<String> lines = List.of();
    // The access log is written once the answer has gone out, so it may come after it.
    for (int i = 0; i < 50 && lines.isEmpty(); i++) {
      lines =
          log.records().stream()
              .filter(r -> r.getLoggerName().equals("io.quarkus.http.access-log"))
              .map(LogRecord::getMessage)
              .filter(m -> m.contains(text))
              .toList();
      if (lines.isEmpty()) {
        Thread.sleep(100);
      }
    }
    return lines;
  }

  @Test
  void no_line_holds_a_claim_token_or_a_key_even_with_every_line_on() {
    String queue = uniqueQueue("logs-secrets");
    List<String> secrets = new ArrayList<>(List.of(ADMIN, "dev-worker-key"));
    try (LogCapture log = LogCapture.start(Level.ALL)) {
      String id = enqueued(queue, "k", 1);
      String token = claim(id, Map.of("worker", "w", "leaseSeconds", 30)).path("claimToken");
      secrets.add(token);
      heartbeat(id, Map.of("claimToken", token)).then().statusCode(200);
      given()
          .header("Authorization", "Bearer dev-worker-key")
          .contentType("application/json")
          .body(Map.of("claimToken", token))
          .post("/v1/items/{id}/intent", id)
          .then()
          .statusCode(200);
      complete(id, Map.of("claimToken", token, "externalRef", "msg_1")).then().statusCode(200);
      // Refusals echo what was wrong; none may echo the token.
      complete(id, Map.of("claimToken", token + "x")).then().statusCode(409);
      heartbeat(id, Map.of("claimToken", token, "bogus", 1)).then().statusCode(400);
      given()
          .header("Authorization", "Bearer " + token)
          .get("/v1/items/{id}", id)
          .then()
          .statusCode(401);
      String other = enqueue(queue, Map.of("dedupeKey", "j", "payload", 2)).path("id");
      String second = claim(other, Map.of()).path("claimToken");
      secrets.add(second);
      fail(other, Map.of("claimToken", second, "error", "provider said token=" + second))
          .then()
          .statusCode(200);

      List<String> lines = new ArrayList<>();
      for (LogRecord record : log.records()) {
        lines.add(LogCapture.format(record) + " " + mdc(record));
      }
      assertThat(lines)
          .as("lines captured")
          .anyMatch(line -> line.contains("access-log") || line.contains("/v1/items"));
      for (String secret : secrets) {
        assertThat(lines).as("lines holding a secret").noneMatch(line -> line.contains(secret));
      }
    }
  }

  private static ExtLogRecord only(LogCapture log, String text) {
    List<ExtLogRecord> found =
        log.records().stream()
            .filter(r -> r instanceof ExtLogRecord)
            .map(r -> (ExtLogRecord) r)
            .filter(r -> r.getLoggerName().startsWith("dev.claimq"))
            .filter(r -> r.getFormattedMessage().contains(text))
            .toList();
    assertThat(found).as("lines containing %s", text).hasSize(1);
    return found.get(0);
  }

  private static String mdc(LogRecord record) {
    return record instanceof ExtLogRecord ext ? ext.getMdcCopy().toString() : "";
  }

  private static List<Handler> allHandlers(java.util.logging.Logger logger) {
    List<Handler> handlers = new ArrayList<>();
    for (Handler handler : logger.getHandlers()) {
      handlers.add(handler);
      if (handler instanceof org.jboss.logmanager.ExtHandler ext) {
        handlers.addAll(List.of(ext.getHandlers()));
      }
    }
    return handlers;
  }
}
