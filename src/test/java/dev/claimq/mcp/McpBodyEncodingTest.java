package dev.claimq.mcp;

import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.claimq.LogCapture;
import io.agroal.api.AgroalDataSource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.logging.Level;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The MCP door reads a body as the API does: UTF-8 JSON, with no content coding. A body declared in
 * another charset, or compressed, is a 415 problem that names what was declared, before any tool
 * runs.
 */
@QuarkusTest
class McpBodyEncodingTest {
  private static final String AGENT = "dev-agent-key";

  @TestHTTPResource("/mcp")
  URI mcp;

  @Inject AgroalDataSource database;

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
  private final ObjectMapper json = new ObjectMapper();
  private String session;
  private String queue;

  @BeforeEach
  void openASession() throws Exception {
    queue = uniqueQueue("mcp-encoding");
    HttpResponse<String> opened =
        post(
            bytes(
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                    + "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                    + "\"clientInfo\":{\"name\":\"encoding\",\"version\":\"1\"}}}"),
            "application/json",
            null);
    assertThat(opened.statusCode()).isEqualTo(200);
    session = opened.headers().firstValue("Mcp-Session-Id").orElseThrow();
    post(
        bytes("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"),
        "application/json",
        null);
  }

  @Test
  void a_body_in_another_charset_is_a_415_and_runs_no_tool() throws Exception {
    try (LogCapture log = LogCapture.start(Level.WARNING)) {
      for (String charset : new String[] {"ISO-8859-1", "us-ascii", "UTF-16"}) {
        HttpResponse<String> answer =
            post(enqueue("é"), "application/json; charset=" + charset, null);

        JsonNode problem = problem(answer, 415);
        assertThat(problem.path("detail").asText())
            .as(charset)
            .contains("'" + charset + "'")
            .contains("UTF-8");
      }
      assertThat(McpClients.rows(database, queue)).as("items stored").isZero();
      assertThat(log.records()).extracting(LogCapture::format).isEmpty();
    }
  }

  @Test
  void a_body_not_declared_as_json_is_a_415_and_runs_no_tool() throws Exception {
    try (LogCapture log = LogCapture.start(Level.WARNING)) {
      for (String contentType : new String[] {"text/plain", "application/jsonx", null}) {
        HttpResponse<String> answer = post(enqueue("A"), contentType, null);

        JsonNode problem = problem(answer, 415);
        assertThat(problem.path("detail").asText())
            .as(contentType)
            .contains(contentType == null ? "without a Content-Type" : "'" + contentType + "'")
            .contains("application/json");
      }
      assertThat(McpClients.rows(database, queue)).as("items stored").isZero();
      assertThat(log.records()).extracting(LogCapture::format).isEmpty();
    }
  }

  @Test
  void a_compressed_body_is_a_415_and_runs_no_tool() throws Exception {
    try (LogCapture log = LogCapture.start(Level.WARNING)) {
      HttpResponse<String> answer = post(gzip(enqueue("A")), "application/json", "gzip");

      JsonNode problem = problem(answer, 415);
      assertThat(problem.path("detail").asText()).contains("'gzip'").contains("identity");
      assertThat(answer.headers().firstValue("Accept-Encoding")).hasValue("identity");
      assertThat(McpClients.rows(database, queue)).as("items stored").isZero();
      assertThat(log.records()).extracting(LogCapture::format).isEmpty();
    }
  }

  @Test
  void a_body_declared_utf8_or_identity_runs_its_tool() throws Exception {
    HttpResponse<String> answer = post(enqueue("é"), "application/json; charset=UTF-8", "identity");

    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
    assertThat(McpClients.rows(database, queue)).isEqualTo(1);
  }

  private JsonNode problem(HttpResponse<String> answer, int status) throws Exception {
    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(status);
    assertThat(answer.headers().firstValue("Content-Type"))
        .hasValueSatisfying(type -> assertThat(type).startsWith("application/problem+json"));
    JsonNode problem = json.readTree(answer.body());
    assertThat(problem.path("status").asInt()).isEqualTo(status);
    return problem;
  }

  private byte[] enqueue(String payload) {
    return bytes(
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
            + "\"enqueue_work\",\"arguments\":{\"queue\":\""
            + queue
            + "\",\"dedupeKey\":\"k\",\"payload\":\""
            + payload
            + "\"}}}");
  }

  private HttpResponse<String> post(byte[] body, String contentType, String contentEncoding)
      throws Exception {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(mcp)
            .timeout(Duration.ofSeconds(30))
            .header("Authorization", "Bearer " + AGENT)
            .header("Accept", "application/json, text/event-stream")
            .POST(HttpRequest.BodyPublishers.ofByteArray(body));
    if (contentType != null) {
      request.header("Content-Type", contentType);
    }
    if (contentEncoding != null) {
      request.header("Content-Encoding", contentEncoding);
    }
    if (session != null) {
      request.header("Mcp-Session-Id", session);
    }
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] gzip(byte[] plain) throws Exception {
    ByteArrayOutputStream zipped = new ByteArrayOutputStream();
    try (GZIPOutputStream out = new GZIPOutputStream(zipped)) {
      out.write(plain);
    }
    return zipped.toByteArray();
  }
}
