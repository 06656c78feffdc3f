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
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Hostile input at the MCP door, sent as raw bytes (an SDK would not send most of it): broken
 * JSON-RPC, arguments that are not an object, duplicate names, characters PostgreSQL cannot store,
 * numbers past every range, bodies past the limit. Each must be answered as a JSON-RPC error or a
 * tool error, never a 5xx, never an ERROR or WARNING line, and must store nothing; what is valid is
 * stored exactly as sent. A body not declared as UTF-8 JSON (another type or charset, a content
 * coding) is a 415 problem, as on the API, before any tool runs.
 */
@QuarkusTest
class McpHostileInputTest {
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
    queue = uniqueQueue("mcp-hostile");
    HttpResponse<String> opened =
        post(
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                + "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                + "\"clientInfo\":{\"name\":\"hostile\",\"version\":\"1\"}}}");
    assertThat(opened.statusCode()).isEqualTo(200);
    session = opened.headers().firstValue("Mcp-Session-Id").orElseThrow();
    post("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
  }

  /**
   * With every logger on, as an operator's QUARKUS_LOG_LEVEL=DEBUG turns them on: the MCP library's
   * own debug lines quote a tool's name, a resource's address and a request's id as the client sent
   * them, so they stay off, and no line can be one the client wrote.
   */
  @Test
  void client_text_over_mcp_cannot_start_a_log_line_with_every_line_on() throws Exception {
    java.util.logging.Logger root = java.util.logging.Logger.getLogger("");
    Level before = root.getLevel();
    // JSON escapes: the service reads a newline, an escape and a right-to-left override.
    String forged = "x\\n2026-12-01 09:00:00,000 ERROR [forged] \\u001b[31mred\\u202e";
    root.setLevel(Level.FINE);
    try (LogCapture log = LogCapture.start(Level.FINE)) {
      post(
          "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
              + "{\"name\":\""
              + forged
              + "\",\"arguments\":{}}}");
      post(
          "{\"jsonrpc\":\"2.0\",\"id\":\""
              + forged
              + "\",\"method\":\"resources/read\",\"params\":{\"uri\":\""
              + forged
              + "\"}}");
      post("{\"jsonrpc\":\"2.0\",\"id\":\"" + forged + "\",\"method\":\"ping\"}");

      assertThat(
              log.records().stream()
                  .filter(
                      record -> !record.getLoggerName().startsWith("jdk.")) // this test's client
                  .map(LogCapture::format))
          .noneSatisfy(line -> assertThat(line).containsAnyOf("\n", "\u001b", "\u202e"));
    } finally {
      root.setLevel(before);
    }
  }

  /** Hostile tool arguments, by what they try; {queue} is this test's queue. */
  private static Map<String, String> hostileArguments() {
    Map<String, String> cases = new LinkedHashMap<>();
    cases.put("a queue named twice", "{\"queue\":\"{queue}\",\"queue\":\"other\",%s}");
    cases.put("a dedupeKey named twice", "{\"queue\":\"{queue}\",\"dedupeKey\":\"b\",%s}");
    cases.put("NUL in the dedupeKey", "{\"queue\":\"{queue}\",\"dedupeKey\":\"a\\u0000b\"," + P);
    cases.put("a lone surrogate", "{\"queue\":\"{queue}\",\"dedupeKey\":\"a\\ud800\"," + P);
    cases.put(
        "NUL in the payload",
        "{\"queue\":\"{queue}\",\"dedupeKey\":\"k\",\"payload\":\"\\u0000\"}");
    cases.put(
        "a priority past a long",
        "{\"queue\":\"{queue}\",\"dedupeKey\":\"k\",\"priority\":9223372036854775808," + P);
    cases.put(
        "a priority of 1e400",
        "{\"queue\":\"{queue}\",\"dedupeKey\":\"k\",\"priority\":1e400," + P);
    cases.put(
        "a priority as text", "{\"queue\":\"{queue}\",\"dedupeKey\":\"k\",\"priority\":\"1\"," + P);
    cases.put(
        "a fractional priority",
        "{\"queue\":\"{queue}\",\"dedupeKey\":\"k\",\"priority\":1.5," + P);
    cases.put("a queue as a number", "{\"queue\":7,\"dedupeKey\":\"k\"," + P);
    cases.put("a queue with a path", "{\"queue\":\"../{queue}\",\"dedupeKey\":\"k\"," + P);
    cases.put(
        "a runAt of year 10000",
        "{\"queue\":\"{queue}\",\"dedupeKey\":\"k\",\"runAt\":\"+10000-01-01T00:00:00Z\"," + P);
    cases.put(
        "a runAt without an offset",
        "{\"queue\":\"{queue}\",\"dedupeKey\":\"k\",\"runAt\":\"2026-12-01T10:00:00\"," + P);
    cases.put(
        "a payload past the limit",
        "{\"queue\":\"{queue}\",\"dedupeKey\":\"k\",\"payload\":\""
            + "x".repeat(1_100_000)
            + "\"}");
    cases.put(
        "a payload nested 5,000 deep",
        "{\"queue\":\"{queue}\",\"dedupeKey\":\"k\",\"payload\":"
            + "[".repeat(5_000)
            + "]".repeat(5_000)
            + "}");
    cases.put("a null payload", "{\"queue\":\"{queue}\",\"dedupeKey\":\"k\",\"payload\":null}");
    cases.put(
        "an unknown argument",
        "{\"queue\":\"{queue}\",\"dedupeKey\":\"k\",\"colour\":\"red\"," + P);
    cases.put("arguments as an array", "[\"{queue}\",\"k\",1]");
    cases.put("arguments as text", "\"queue={queue}\"");
    cases.put("arguments as null", "null");
    return cases;
  }

  private static final String P = "\"payload\":{\"n\":1}}";

  @Test
  void hostile_tool_arguments_are_tool_or_protocol_errors_and_store_nothing() throws Exception {
    List<String> wrong = new ArrayList<>();
    try (LogCapture log = LogCapture.start(Level.WARNING)) {
      int id = 10;
      for (Map.Entry<String, String> hostile : hostileArguments().entrySet()) {
        String arguments =
            hostile.getValue().replace("{queue}", queue).replace("%s", "\"dedupeKey\":\"a\"," + P);
        HttpResponse<String> answer = call(++id, "enqueue_work", arguments);
        String verdict = refused(answer);
        if (verdict != null) {
          wrong.add(hostile.getKey() + ": " + verdict);
        }
      }
      assertThat(wrong).as("hostile arguments not refused cleanly").isEmpty();
      assertThat(rows()).as("items stored by hostile calls").isZero();
      assertThat(log.records()).extracting(LogCapture::format).isEmpty();
    }
  }

  @Test
  void broken_json_rpc_is_a_protocol_error_not_a_server_error() throws Exception {
    List<String> broken =
        List.of(
            "{not json",
            "",
            "[]",
            "42",
            "{\"jsonrpc\":\"2.0\",\"id\":3}",
            "{\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},\"method\":\"tools/list\"}",
            "{\"jsonrpc\":\"1.0\",\"id\":4,\"method\":\"tools/list\"}",
            "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"no/such/method\"}",
            "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":[]}",
            "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"drop_queue\"}}",
            "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":7}}");
    List<String> wrong = new ArrayList<>();
    try (LogCapture log = LogCapture.start(Level.WARNING)) {
      for (String body : broken) {
        HttpResponse<String> answer = post(body);
        if (answer.statusCode() >= 500) {
          wrong.add(shorten(body) + ": " + answer.statusCode());
        } else if (message(answer).path("error").path("message").asText("").isBlank()) {
          wrong.add(shorten(body) + ": no JSON-RPC error saying why: " + shorten(answer.body()));
        }
      }
      assertThat(wrong).as("not refused as JSON-RPC errors").isEmpty();
      assertThat(log.records()).extracting(LogCapture::format).isEmpty();
    }
    // The session still works after all of it.
    HttpResponse<String> listed = post("{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"tools/list\"}");
    assertThat(message(listed).path("result").path("tools").size()).isEqualTo(3);
  }

  @Test
  void a_number_whose_exponent_is_out_of_range_is_a_parse_error_not_a_server_error()
      throws Exception {
    List<String> bodies =
        List.of(
            "{\"jsonrpc\":\"2.0\",\"id\":1e2147483648,\"method\":\"ping\"}",
            enqueue("41", "k", "[1e2147483648]"),
            enqueue("42", "k", "{\"n\":-1e-2147483649}"),
            "[" + enqueue("43", "k", "1") + "," + enqueue("44", "j", "0e2147483648") + "]");
    try (LogCapture log = LogCapture.start(Level.WARNING)) {
      for (String body : bodies) {
        HttpResponse<String> answer = post(body);

        assertThat(answer.statusCode()).as(body + " -> " + answer.body()).isEqualTo(400);
        JsonNode error = message(answer);
        assertThat(error.path("id").isNull()).as(answer.body()).isTrue();
        assertThat(error.path("error").path("code").asInt()).isEqualTo(-32700);
        assertThat(error.path("error").path("message").asText())
            .isEqualTo("The body cannot be read: a number in it has an exponent out of range.");
      }
      assertThat(rows()).as("items stored").isZero();
      assertThat(log.records()).extracting(LogCapture::format).isEmpty();
    }
  }

  @Test
  void a_number_of_up_to_1000_digits_before_and_after_the_point_is_enqueued_and_replays()
      throws Exception {
    List<String> numbers =
        List.of(
            "0." + "1".repeat(1000),
            "-" + "9".repeat(1000) + "." + "9".repeat(1000),
            "1".repeat(1000),
            "1e-1000");
    try (LogCapture log = LogCapture.start(Level.WARNING)) {
      int id = 60;
      for (String number : numbers) {
        String key = "long-" + id;
        for (String outcome : List.of("created", "already enqueued")) {
          HttpResponse<String> answer = post(enqueue(++id + "", key, "{\"n\":" + number + "}"));

          assertThat(answer.statusCode()).as(shorten(answer.body())).isEqualTo(200);
          JsonNode result = message(answer).path("result");
          assertThat(message(answer).path("id").asInt()).as(shorten(answer.body())).isEqualTo(id);
          assertThat(result.path("structuredContent").path("result").asText())
              .as(shorten(answer.body()))
              .isEqualTo(outcome);
        }
      }
      assertThat(rows()).isEqualTo(numbers.size());
      assertThat(log.records()).extracting(LogCapture::format).isEmpty();
    }
  }

  @Test
  void nesting_past_the_limit_is_refused_naming_the_limit_in_the_services_words() throws Exception {
    // The message is level 1, params 2, arguments 3: the payload's own arrays start at 4.
    int fits = 1000 - 3;
    String past =
        "The body cannot be read: the value of '%s' nests arrays and objects past the limit of"
            + " 1000 levels (the body itself is level 1).";
    Map<String, String> refused = new LinkedHashMap<>();
    refused.put(
        enqueue("81", "deep", "[".repeat(fits + 1) + "]".repeat(fits + 1)),
        past.formatted("params.arguments.payload"));
    refused.put(
        enqueue("82", "deep", "{\"a\":".repeat(5_000) + "1" + "}".repeat(5_000)),
        past.formatted("params.arguments.payload"));
    refused.put(
        "["
            + enqueue("83", "k", "1")
            + ","
            + enqueue("84", "j", "[".repeat(fits) + "]".repeat(fits))
            + "]",
        past.formatted("[1].params.arguments.payload"));
    refused.put(
        "{\"jsonrpc\":\"2.0\",\"id\":85,\"method\":\"ping\",\"params\":{\"_meta\":"
            + "[".repeat(5_000)
            + "]".repeat(5_000)
            + "}}",
        past.formatted("params._meta"));
    try (LogCapture log = LogCapture.start(Level.WARNING)) {
      for (Map.Entry<String, String> each : refused.entrySet()) {
        HttpResponse<String> answer = post(each.getKey());

        assertThat(answer.statusCode()).as(shorten(answer.body())).isEqualTo(400);
        JsonNode error = message(answer).path("error");
        assertThat(error.path("code").asInt()).isEqualTo(-32700);
        assertThat(error.path("message").asText()).isEqualTo(each.getValue());
      }
      assertThat(rows()).as("items stored").isZero();
      // Up to the limit, the payload is stored.
      HttpResponse<String> deepest =
          post(enqueue("86", "deepest", "[".repeat(fits) + "]".repeat(fits)));
      assertThat(message(deepest).path("result").path("isError").asBoolean())
          .as(shorten(deepest.body()))
          .isFalse();
      assertThat(rows()).isEqualTo(1);
      assertThat(log.records()).extracting(LogCapture::format).isEmpty();
    }
  }

  @Test
  void a_number_too_long_is_refused_naming_where_it_is_in_the_services_words() throws Exception {
    String over = "1".repeat(1001);
    String farOver = "1".repeat(3000);
    try (LogCapture log = LogCapture.start(Level.WARNING)) {
      // Past the digits a number may be stored with: the tool refuses it, as the API does.
      for (String payload : List.of("{\"n\":[1," + over + "]}", "{\"n\":[1,0." + over + "]}")) {
        HttpResponse<String> answer = post(enqueue("71", "k", payload));

        assertThat(answer.statusCode()).as(shorten(answer.body())).isEqualTo(200);
        JsonNode result = message(answer).path("result");
        assertThat(result.path("isError").asBoolean()).as(shorten(answer.body())).isTrue();
        assertThat(result.path("content").path(0).path("text").asText())
            .isEqualTo(
                "The value of 'payload.n[1]' is a number with more than 1000 digits before or"
                    + " after the decimal point.");
      }
      // Past the digits a number may be written with: the message cannot be read.
      for (String payload :
          List.of("{\"n\":[1," + farOver + "]}", "{\"n\":[1,-0." + farOver + "]}")) {
        HttpResponse<String> answer = post(enqueue("72", "k", payload));

        assertThat(answer.statusCode()).as(shorten(answer.body())).isEqualTo(400);
        JsonNode error = message(answer).path("error");
        assertThat(error.path("code").asInt()).isEqualTo(-32700);
        assertThat(error.path("message").asText())
            .startsWith("The body cannot be read: the value of 'params.arguments.payload.n[1]' is")
            .contains("1000 digits before the decimal point")
            .doesNotContain("StreamReadConstraints");
      }
      assertThat(rows()).as("items stored").isZero();
      assertThat(log.records()).extracting(LogCapture::format).isEmpty();
    }
  }

  /** Params the MCP schema shapes otherwise, by what the answer must say; ids from 50. */
  private static Map<String, String> misshapenParams() {
    Map<String, String> cases = new LinkedHashMap<>();
    String client = "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{}";
    String named = client + ",\"clientInfo\":{\"name\":\"c\",\"version\":\"1\",";
    cases.put(
        "\"tools/call\",\"params\":{\"name\":\"list_my_work\",\"arguments\":{},\"_meta\":\"x\"}",
        "'params._meta' must be an object.");
    cases.put(
        "\"tools/call\",\"params\":{\"name\":\"list_my_work\",\"_meta\":[1]}",
        "'params._meta' must be an object.");
    cases.put("\"ping\",\"params\":{\"_meta\":7}", "'params._meta' must be an object.");
    cases.put(
        "\"ping\",\"params\":{\"_meta\":{\"progressToken\":{}}}",
        "'params._meta.progressToken' must be a string or a number.");
    cases.put(
        "\"initialize\",\"params\":{" + client + ",\"clientInfo\":null}",
        "'params.clientInfo' must be an object.");
    cases.put(
        "\"initialize\",\"params\":{" + client + ",\"clientInfo\":\"me\"}",
        "'params.clientInfo' must be an object.");
    cases.put(
        "\"initialize\",\"params\":{" + client + ",\"clientInfo\":[]}",
        "'params.clientInfo' must be an object.");
    cases.put(
        "\"initialize\",\"params\":{" + client + "}",
        "'params.clientInfo' is missing: initialize needs it, as an object.");
    cases.put(
        "\"initialize\",\"params\":{" + client + ",\"clientInfo\":{\"name\":\"c\"}}",
        "'params.clientInfo.version' is missing: initialize needs it, as a string.");
    cases.put(
        "\"initialize\",\"params\":{" + named + "\"icons\":[{\"src\":\"i\",\"theme\":\"blue\"}]}}",
        "'params.clientInfo.icons[0].theme' must be one of light, dark.");
    cases.put(
        "\"initialize\",\"params\":{" + named + "\"icons\":[{\"src\":\"i\",\"sizes\":[48]}]}}",
        "'params.clientInfo.icons[0].sizes[0]' must be a string.");
    cases.put(
        "\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":"
            + "{\"roots\":true},\"clientInfo\":{\"name\":\"c\",\"version\":\"1\"}}",
        "'params.capabilities.roots' must be an object.");
    cases.put(
        "\"completion/complete\",\"params\":{\"ref\":5,\"argument\":\"x\"}",
        "'params.ref' must be an object.");
    cases.put(
        "\"completion/complete\",\"params\":{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"p\"},"
            + "\"argument\":{\"name\":\"a\"}}",
        "'params.argument.value' is missing: completion/complete needs it, as a string.");
    cases.put(
        "\"completion/complete\",\"params\":{\"ref\":{\"type\":\"ref/tool\",\"name\":\"p\"},"
            + "\"argument\":{\"name\":\"a\",\"value\":\"\"}}",
        "'params.ref.type' must be one of ref/prompt, ref/resource.");
    cases.put(
        "\"logging/setLevel\"", "'params' is missing: logging/setLevel needs it, as an object.");
    cases.put(
        "\"logging/setLevel\",\"params\":{\"level\":7}",
        "'params.level' must be one of debug, info, notice, warning, error, critical, alert,"
            + " emergency.");
    cases.put(
        "\"resources/subscribe\",\"params\":{}",
        "'params.uri' is missing: resources/subscribe needs it, as a string.");
    cases.put("\"tools/list\",\"params\":{\"cursor\":5}", "'params.cursor' must be a string.");
    cases.put(
        "\"tools/list\",\"params\":{\"cursor\":\"abc\"}",
        "'params.cursor' is not a cursor this server gave: send an earlier answer's nextCursor as"
            + " it was, or no cursor for the first page.");
    cases.put(
        "\"prompts/get\",\"params\":{\"name\":\"p\",\"arguments\":{\"a\":1}}",
        "'params.arguments.a' must be a string.");
    return cases;
  }

  @Test
  void params_not_shaped_as_mcp_says_are_invalid_params_before_the_extension_reads_them()
      throws Exception {
    List<String> wrong = new ArrayList<>();
    try (LogCapture log = LogCapture.start(Level.WARNING)) {
      int id = 50;
      for (Map.Entry<String, String> each : misshapenParams().entrySet()) {
        String body = "{\"jsonrpc\":\"2.0\",\"id\":" + ++id + ",\"method\":" + each.getKey() + "}";
        // In a session and as the first message of one: the extension reads params in both.
        for (boolean inSession : new boolean[] {true, false}) {
          HttpResponse<String> answer;
          try {
            answer = inSession ? post(body) : postWithoutSession(body);
          } catch (java.net.http.HttpTimeoutException e) {
            wrong.add(shorten(body) + ": no answer");
            continue;
          }
          JsonNode error = answer.statusCode() == 400 ? message(answer) : null;
          if (error == null
              || error.path("id").asInt() != id
              || error.path("error").path("code").asInt() != -32602
              || !each.getValue().equals(error.path("error").path("message").asText())) {
            wrong.add(shorten(body) + ": " + answer.statusCode() + " " + shorten(answer.body()));
          }
        }
      }
      assertThat(wrong).as("not refused as invalid params").isEmpty();
      assertThat(log.records()).extracting(LogCapture::format).isEmpty();
    }
  }

  @Test
  void params_shaped_as_mcp_says_still_reach_the_extension() throws Exception {
    try (LogCapture log = LogCapture.start(Level.WARNING)) {
      HttpResponse<String> opened =
          postWithoutSession(
              "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                  + "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"roots\":"
                  + "{\"listChanged\":true},\"sampling\":{},\"experimental\":{\"x\":{}}},"
                  + "\"clientInfo\":{\"name\":\"c\",\"version\":\"1\",\"title\":\"C\","
                  + "\"websiteUrl\":\"https://example.com\",\"icons\":[{\"src\":\"i\","
                  + "\"sizes\":[\"48x48\"],\"theme\":\"dark\"}]},\"_meta\":{}}}");
      assertThat(opened.statusCode()).as(opened.body()).isEqualTo(200);
      assertThat(message(opened).path("result").path("protocolVersion").asText())
          .isEqualTo("2025-11-25");

      HttpResponse<String> pinged =
          post(
              "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"params\":"
                  + "{\"_meta\":{\"progressToken\":\"p\"}}}");
      assertThat(message(pinged).path("result").isObject()).as(pinged.body()).isTrue();

      HttpResponse<String> listed =
          post(
              "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{"
                  + "\"name\":\"list_my_work\",\"arguments\":{},\"_meta\":{\"progressToken\":7}}}");
      assertThat(message(listed).path("result").path("isError").asBoolean())
          .as(listed.body())
          .isFalse();

      HttpResponse<String> levelled =
          post(
              "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"logging/setLevel\","
                  + "\"params\":{\"level\":\"warning\"}}");
      assertThat(message(levelled).path("result").isObject()).as(levelled.body()).isTrue();

      // A cursor the extension can read, though it gave none: a page, past the tools there are.
      HttpResponse<String> paged =
          post(
              "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/list\",\"params\":"
                  + "{\"cursor\":\"AAAAAGlVuQAAAAAAAAAAAGlVuQAAAAAF\"}}");
      assertThat(message(paged).path("result").path("tools").isArray()).as(paged.body()).isTrue();

      // No completions are offered: a well-formed request is the extension's to refuse.
      HttpResponse<String> completed =
          post(
              "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"completion/complete\",\"params\":{"
                  + "\"ref\":{\"type\":\"ref/prompt\",\"name\":\"p\"},"
                  + "\"argument\":{\"name\":\"a\",\"value\":\"\"}}}");
      assertThat(completed.statusCode()).as(completed.body()).isLessThan(500);
      assertThat(message(completed).path("error").path("code").asInt()).isEqualTo(-32602);
      assertThat(log.records()).extracting(LogCapture::format).isEmpty();
    }
  }

  @Test
  void what_is_valid_is_stored_exactly_as_sent() throws Exception {
    String payload =
        "{\"amount\":0.30000000000000000001,\"price\":1.50,\"big\":123456789012345678901234567890}";
    HttpResponse<String> answer =
        call(
            2,
            "enqueue_work",
            "{\"queue\":\"" + queue + "\",\"dedupeKey\":\"exact\",\"payload\":" + payload + "}");
    JsonNode result = message(answer).path("result");
    assertThat(result.path("isError").asBoolean()).as(answer.body()).isFalse();
    try (Connection connection = database.getConnection();
        PreparedStatement read =
            connection.prepareStatement(
                "SELECT payload::text FROM item WHERE queue = ? AND dedupe_key = 'exact'")) {
      read.setString(1, queue);
      try (ResultSet rows = read.executeQuery()) {
        assertThat(rows.next()).isTrue();
        // Each number as written: a double anywhere on the way would have rounded all three.
        assertThat(rows.getString(1))
            .contains("0.30000000000000000001", "1.50", "123456789012345678901234567890");
      }
    }
  }

  @Test
  void a_body_that_is_not_utf8_is_refused_as_the_api_refuses_it_and_stores_nothing()
      throws Exception {
    String before =
        "{\"jsonrpc\":\"2.0\",\"id\":21,\"method\":\"tools/call\",\"params\":{"
            + "\"name\":\"enqueue_work\",\"arguments\":{\"queue\":\""
            + queue
            + "\",\"dedupeKey\":\"x";
    String after = "\",\"payload\":\"A\"}}}";
    String valid = before + "A" + after;
    try (LogCapture log = LogCapture.start(Level.WARNING)) {
      // Overlong forms of 'A' and '/': a lenient decoder reads "xA" and "x/", so distinct keys
      // would name one item.
      for (byte[] overlong :
          List.of(new byte[] {(byte) 0xC1, (byte) 0x81}, new byte[] {(byte) 0xC0, (byte) 0xAF})) {
        byte[] body = concat(bytes(before), overlong, bytes(after));
        HttpResponse<String> answer = post(body);
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(400);
        assertThat(message(answer).path("error").path("message").asText())
            .isEqualTo(
                "The body is not valid UTF-8 (at byte "
                    + bytes(before).length
                    + "): send JSON text encoded as UTF-8, without overlong forms or encoded"
                    + " surrogates.");
      }
      // The same call as UTF-16 or UTF-32: valid UTF-8 byte by byte, but with NULs in it.
      for (String charset : List.of("UTF-16LE", "UTF-16BE", "UTF-32BE", "UTF-32LE")) {
        HttpResponse<String> answer = post(valid.getBytes(Charset.forName(charset)));
        assertThat(answer.statusCode()).as(charset + ": " + answer.body()).isEqualTo(400);
        assertThat(message(answer).path("error").path("message").asText())
            .as(charset)
            .isEqualTo(
                "The body has a NUL byte (at byte "
                    + (charset.endsWith("BE") ? 0 : 1) // where the first character's NUL is
                    + "): send JSON text encoded as UTF-8, not UTF-16 or UTF-32.");
      }
      assertThat(rows()).as("items stored").isZero();
      assertThat(log.records()).extracting(LogCapture::format).isEmpty();
    }
  }

  @Test
  void a_batch_that_repeats_an_id_is_refused_before_any_call_runs() throws Exception {
    String body =
        "[" + enqueue("5", "first", "\"A\"") + "," + enqueue("5", "second", "\"B\"") + "]";
    try (LogCapture log = LogCapture.start(Level.WARNING)) {
      HttpResponse<String> answer = post(body);

      assertThat(answer.statusCode()).as(answer.body()).isEqualTo(400);
      JsonNode error = message(answer);
      assertThat(error.path("id").asInt()).isEqualTo(5);
      assertThat(error.path("error").path("message").asText())
          .isEqualTo(
              "The batch repeats the id 5: give each request its own id, so that each answer can"
                  + " be told apart.");
      assertThat(rows()).as("items stored").isZero();
      assertThat(log.records()).extracting(LogCapture::format).isEmpty();
    }
    // The same calls with their own ids each store their own item.
    post("[" + enqueue("5", "first", "\"A\"") + "," + enqueue("6", "second", "\"B\"") + "]");
    assertThat(rows()).isEqualTo(2);
  }

  @Test
  void a_batch_of_more_than_500_messages_is_refused_and_one_of_500_runs_each_call_as_sent()
      throws Exception {
    StringJoiner tooMany = new StringJoiner(",", "[", "]");
    for (int n = 1; n <= 501; n++) {
      tooMany.add(enqueue(String.valueOf(n), "many-" + n, String.valueOf(n)));
    }
    try (LogCapture log = LogCapture.start(Level.WARNING)) {
      HttpResponse<String> answer = post(tooMany.toString());

      assertThat(answer.statusCode()).as(shorten(answer.body())).isEqualTo(400);
      assertThat(message(answer).path("error").path("message").asText())
          .isEqualTo(
              "A batch of 501 messages: send at most 500 in one POST. None of them was run.");
      assertThat(rows()).as("items stored").isZero();
      assertThat(log.records()).extracting(LogCapture::format).isEmpty();
    }
    // Each call of a batch reads its own arguments (found by its id), whatever their order.
    StringJoiner most = new StringJoiner(",", "[", "]");
    for (int n = 500; n >= 1; n--) {
      most.add(enqueue(String.valueOf(n), "many-" + n, String.valueOf(n)));
    }
    HttpResponse<String> answer = post(most.toString());
    assertThat(answer.statusCode()).as(shorten(answer.body())).isEqualTo(200);
    assertThat(rows()).isEqualTo(500);
    try (Connection connection = database.getConnection();
        PreparedStatement stored =
            connection.prepareStatement(
                "SELECT count(*) FROM item WHERE queue = ? AND dedupe_key = 'many-' || payload::text")) {
      stored.setString(1, queue);
      try (ResultSet row = stored.executeQuery()) {
        assertThat(row.next()).isTrue();
        assertThat(row.getLong(1)).as("items whose payload is their own call's").isEqualTo(500);
      }
    }
  }

  @Test
  void an_enqueue_keeps_the_agents_traceparent_and_refuses_one_that_is_not_w3c() throws Exception {
    String traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    try (LogCapture log = LogCapture.start(Level.WARNING)) {
      HttpResponse<String> broken =
          postWithTraceparent("00-not-a-trace-01", enqueue("1", "broken-trace", "1"));
      JsonNode refused = message(broken).path("result");
      assertThat(refused.path("isError").asBoolean()).as(broken.body()).isTrue();
      assertThat(refused.path("content").path(0).path("text").asText())
          .startsWith("traceparent must be a W3C traceparent in version 00's layout");
      assertThat(rows()).as("items stored").isZero();

      // As POST .../items keeps it: stored as sent, for the workers' spans to continue.
      HttpResponse<String> kept = postWithTraceparent(traceparent, enqueue("2", "with-trace", "1"));
      assertThat(message(kept).path("result").path("isError").asBoolean())
          .as(kept.body())
          .isFalse();
      try (Connection connection = database.getConnection();
          PreparedStatement stored =
              connection.prepareStatement("SELECT traceparent FROM item WHERE queue = ?")) {
        stored.setString(1, queue);
        try (ResultSet row = stored.executeQuery()) {
          assertThat(row.next()).isTrue();
          assertThat(row.getString(1)).isEqualTo(traceparent);
        }
      }
      assertThat(log.records()).extracting(LogCapture::format).isEmpty();
    }
  }

  private HttpResponse<String> postWithTraceparent(String traceparent, String body)
      throws Exception {
    return http.send(
        withKey(mcp)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("Mcp-Session-Id", session)
            .header("traceparent", traceparent)
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void a_batch_with_a_broken_message_answers_each_request_and_runs_none() throws Exception {
    String broken = "{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"method\":\"tools/list\",\"params\":[]}";
    String notification = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
    String body = "[" + enqueue("1", "first", "1") + "," + broken + "," + notification + "]";
    try (LogCapture log = LogCapture.start(Level.WARNING)) {
      HttpResponse<String> answer = post(body);

      assertThat(answer.statusCode()).as(answer.body()).isEqualTo(400);
      JsonNode answers = message(answer);
      assertThat(answers.isArray()).as(answer.body()).isTrue();
      assertThat(answers).as(answer.body()).hasSize(2); // a notification is never answered
      assertThat(answers.path(0).path("id").asInt()).isEqualTo(1);
      assertThat(answers.path(0).path("error").path("code").asInt()).isEqualTo(-32600);
      assertThat(answers.path(0).path("error").path("message").asText())
          .isEqualTo(
              "Not run: the batch has a message refused ([1]), and no part of such a batch is"
                  + " run. Send it again without that message, or with it mended.");
      assertThat(answers.path(1).path("id").asText()).isEqualTo("b");
      assertThat(answers.path(1).path("error").path("code").asInt()).isEqualTo(-32602);
      assertThat(answers.path(1).path("error").path("message").asText())
          .isEqualTo("'params' must be an object.");
      assertThat(rows()).as("items stored").isZero();
      assertThat(log.records()).extracting(LogCapture::format).isEmpty();
    }
  }

  @Test
  void a_name_given_twice_is_refused_with_the_id_of_its_message_and_where_it_is() throws Exception {
    try (LogCapture log = LogCapture.start(Level.WARNING)) {
      HttpResponse<String> alone =
          call(
              11,
              "enqueue_work",
              "{\"queue\":\""
                  + queue
                  + "\",\"dedupeKey\":\"a\",\"dedupeKey\":\"b\",\"payload\":1}");
      assertThat(alone.statusCode()).as(alone.body()).isEqualTo(400);
      JsonNode error = message(alone);
      assertThat(error.path("id").asInt()).as(alone.body()).isEqualTo(11);
      assertThat(error.path("error").path("code").asInt()).isEqualTo(-32600);
      assertThat(error.path("error").path("message").asText())
          .matches(
              "The message names a field twice in one object \\('params\\.arguments\\.dedupeKey',"
                  + " line 1, column \\d+\\): an ambiguous message is refused, not guessed\\.");

      // In a batch, the message that holds it is answered by its id, and the others not run.
      String twice =
          "{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"method\":\"tools/list\",\"params\":{},\"params\":{}}";
      HttpResponse<String> batch = post("[" + enqueue("12", "beside", "1") + "," + twice + "]");
      assertThat(batch.statusCode()).as(batch.body()).isEqualTo(400);
      JsonNode answers = message(batch);
      assertThat(answers).as(batch.body()).hasSize(2);
      assertThat(answers.path(0).path("id").asInt()).isEqualTo(12);
      assertThat(answers.path(0).path("error").path("message").asText()).startsWith("Not run");
      assertThat(answers.path(1).path("id").asText()).isEqualTo("b");
      assertThat(answers.path(1).path("error").path("message").asText())
          .contains("('[1].params', line 1, column ");

      // The id itself given twice: which one is meant cannot be told, so the answer has none.
      HttpResponse<String> ids =
          post("{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"tools/list\"}");
      assertThat(ids.statusCode()).as(ids.body()).isEqualTo(400);
      assertThat(message(ids).path("id").isNull()).as(ids.body()).isTrue();
      assertThat(message(ids).path("error").path("message").asText()).contains("('id', line 1");

      assertThat(rows()).as("items stored").isZero();
      assertThat(log.records()).extracting(LogCapture::format).isEmpty();
    }
  }

  @Test
  void a_request_without_an_id_or_with_a_null_one_is_refused_before_it_runs() throws Exception {
    Map<String, String> bodies = new LinkedHashMap<>();
    bodies.put("'id' is missing", enqueue(null, "no-id", "1"));
    bodies.put("'id' is null", enqueue("null", "null-id", "1"));
    bodies.put(
        "'id' is missing ",
        "[" + enqueue("7", "with-id", "1") + "," + enqueue(null, "in-a-batch", "1") + "]");
    try (LogCapture log = LogCapture.start(Level.WARNING)) {
      for (Map.Entry<String, String> each : bodies.entrySet()) {
        HttpResponse<String> answer = post(each.getValue());
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(400);
        JsonNode refusal = message(answer);
        if (refusal.isArray()) { // the batch: its other request is answered as not run
          assertThat(refusal.path(0).path("id").asInt()).as(answer.body()).isEqualTo(7);
          assertThat(refusal.path(0).path("error").path("message").asText())
              .as(answer.body())
              .startsWith("Not run: the batch has a message refused ([1])");
          refusal = refusal.path(1);
        }
        assertThat(refusal.path("error").path("message").asText())
            .isEqualTo(
                each.getKey().strip()
                    + ": a request needs an id, a string or a whole number, to be answered;"
                    + " only notifications (notifications/...) go without one.");
      }
      assertThat(rows()).as("items stored").isZero();
      assertThat(log.records()).extracting(LogCapture::format).isEmpty();
    }
    // A notification still needs none.
    HttpResponse<String> notified =
        post("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    assertThat(notified.statusCode()).as(notified.body()).isBetween(200, 299);
  }

  @Test
  void an_answer_with_an_id_the_server_never_sends_or_beside_requests_is_refused()
      throws Exception {
    List<String> answers =
        List.of(
            "{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"result\":{}}",
            "{\"jsonrpc\":\"2.0\",\"id\":\"12\",\"result\":{}}",
            "{\"jsonrpc\":\"2.0\",\"id\":9223372036854775808,\"result\":{}}",
            "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-1,\"message\":\"x\"}}",
            "{\"jsonrpc\":\"2.0\",\"result\":{}}");
    try (LogCapture log = LogCapture.start(Level.WARNING)) {
      for (String body : answers) {
        HttpResponse<String> answer = post(body);
        assertThat(answer.statusCode()).as(body + " -> " + answer.body()).isEqualTo(400);
        assertThat(message(answer).path("error").path("message").asText())
            .as(body)
            .isEqualTo(
                "An answer's 'id' must be the id of the server's request it answers, a whole"
                    + " number.");
      }
      HttpResponse<String> mixed =
          post(
              "[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}},"
                  + enqueue("8", "beside-an-answer", "1")
                  + "]");
      assertThat(mixed.statusCode()).as(mixed.body()).isEqualTo(400);
      assertThat(message(mixed).path("error").path("message").asText())
          .isEqualTo(
              "The batch mixes answers to the server's requests (messages with 'result' or"
                  + " 'error') with requests or notifications: send the answers in a POST of"
                  + " their own.");
      assertThat(rows()).as("items stored").isZero();
      assertThat(log.records()).extracting(LogCapture::format).isEmpty();
    }
    // An answer to no pending request, alone, is taken and dropped, as before.
    assertThat(post("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}").statusCode()).isEqualTo(202);
  }

  @Test
  void text_that_cannot_be_stored_is_refused_with_the_call_id_in_the_words_of_the_api()
      throws Exception {
    Map<String, String> refusals = new LinkedHashMap<>();
    refusals.put(
        enqueue("31", "a\\u0000b", "1"),
        "The value of 'dedupeKey' contains U+0000 (NUL) at character 1, which cannot be stored.");
    refusals.put(
        enqueue("32", "k", "\"\\ud800\""),
        "The value of 'payload' is not valid Unicode: a lone surrogate U+D800 at character 0"
            + " (send the character itself, or its escaped surrogate pair).");
    refusals.put(
        enqueue("33", "k", "{\"to\":[\"x\",\"y\\u0000\"]}"),
        "The value of 'payload.to[1]' contains U+0000 (NUL) at character 1, which cannot be"
            + " stored.");
    try (LogCapture log = LogCapture.start(Level.WARNING)) {
      int id = 30;
      for (Map.Entry<String, String> refusal : refusals.entrySet()) {
        HttpResponse<String> answer = post(refusal.getKey());
        JsonNode error = message(answer);
        assertThat(error.path("id").asInt()).as(answer.body()).isEqualTo(++id);
        assertThat(error.path("error").path("message").asText()).isEqualTo(refusal.getValue());
      }
      assertThat(rows()).as("items stored").isZero();
      assertThat(log.records()).extracting(LogCapture::format).isEmpty();
    }
  }

  @Test
  void the_old_sse_transport_is_not_served() throws Exception {
    Map<String, HttpRequest> requests = new LinkedHashMap<>();
    requests.put("GET /mcp/sse", withKey(mcp.resolve("/mcp/sse")).GET().build());
    requests.put(
        "POST /mcp/messages/x",
        withKey(mcp.resolve("/mcp/messages/x"))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString("[]"))
            .build());
    try (LogCapture log = LogCapture.start(Level.WARNING)) {
      for (Map.Entry<String, HttpRequest> request : requests.entrySet()) {
        // Served, the SSE stream would never end: the wait is bounded.
        HttpResponse<String> answer =
            http.sendAsync(request.getValue(), HttpResponse.BodyHandlers.ofString())
                .get(20, TimeUnit.SECONDS);
        assertThat(answer.statusCode()).as(request.getKey()).isEqualTo(404);
        assertThat(answer.headers().firstValue("Content-Type"))
            .hasValue("application/problem+json");
        assertThat(json.readTree(answer.body()).path("detail").asText())
            .isEqualTo("There is no such resource; MCP is served at /mcp, over Streamable HTTP.");
      }
      assertThat(log.records()).extracting(LogCapture::format).isEmpty();
    }
  }

  @Test
  void an_accept_header_that_does_not_take_both_answers_is_a_406_and_runs_no_tool()
      throws Exception {
    Map<String, String> refused = new LinkedHashMap<>();
    String both =
        "list both application/json and text/event-stream, neither with q=0: MCP's"
            + " Streamable HTTP answers a POST with either.";
    refused.put(null, "The request has no Accept header: " + both);
    for (String accept :
        List.of(
            "application/json",
            "text/event-stream",
            "*/*",
            "text/html",
            // A weight of 0 says "not acceptable" (RFC 9110, 12.4.2), as on the REST API.
            "application/json;q=0, text/event-stream",
            "application/json, text/event-stream; q=0.000",
            "APPLICATION/JSON;Q=0, text/event-stream",
            "application/json;q=0, */*, text/event-stream")) {
      refused.put(accept, "The Accept header '" + accept + "' does not take both: " + both);
    }
    // A weight RFC 9110 does not spell: which of the two the client takes is not known.
    refused.put(
        "application/json;q=abc, text/event-stream",
        "The Accept header 'application/json;q=abc, text/event-stream' gives the weight q=abc,"
            + " which is not one: a weight is q= and 0 to 1 with up to three decimals, with no"
            + " space around the =, such as q=0.5.");
    try (LogCapture log = LogCapture.start(Level.WARNING)) {
      for (Map.Entry<String, String> each : refused.entrySet()) {
        HttpResponse<String> answer = postAccepting(enqueueOf("A"), each.getKey());

        JsonNode problem = problem(answer, 406);
        assertThat(problem.path("title").asText()).isEqualTo("Not Acceptable");
        assertThat(problem.path("detail").asText()).as(each.getKey()).isEqualTo(each.getValue());
      }
      assertThat(rows()).as("items stored").isZero();
      assertThat(log.records()).extracting(LogCapture::format).isEmpty();
    }
    // Each listed with a weight above 0 is enough, whatever else the header says.
    for (String accept :
        List.of(
            "application/json, text/event-stream",
            "text/event-stream;q=0.5, application/json;q=0.001",
            "*/*;q=0, application/json, text/event-stream")) {
      HttpResponse<String> answer = postAccepting(enqueueOf("A"), accept);
      assertThat(answer.statusCode()).as(accept + ": " + answer.body()).isEqualTo(200);
    }
    assertThat(rows()).isEqualTo(1);
  }

  @Test
  void a_cancel_of_no_running_request_is_taken_without_an_answer_or_a_warning() throws Exception {
    HttpResponse<String> listed = post("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\"}");
    assertThat(listed.statusCode()).as(listed.body()).isEqualTo(200);
    try (LogCapture log = LogCapture.start(Level.WARNING)) {
      // Ids never sent, and one answered already: MCP expects a cancel to cross its answer.
      for (String requestId : List.of("999", "\"no-such-request\"", "5")) {
        HttpResponse<String> answer =
            post(
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
                    + "{\"requestId\":"
                    + requestId
                    + ",\"reason\":\"late\"}}");

        assertThat(answer.statusCode()).as(requestId + ": " + answer.body()).isEqualTo(202);
        assertThat(answer.body()).isEmpty();
      }
      // Only that line is lowered: the extension's other warnings stay warnings.
      java.util.logging.Logger.getLogger("io.quarkiverse.mcp.server.runtime.McpMessageHandler")
          .warning("another warning");
      assertThat(log.records())
          .extracting(LogCapture::format)
          .containsExactly("io.quarkiverse.mcp.server.runtime.McpMessageHandler: another warning");
    }
  }

  @Test
  void an_unknown_session_is_a_problem_saying_what_to_do() throws Exception {
    String list = "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}";
    session = "no-such-session";
    HttpResponse<String> unknown = post(list);
    assertThat(unknown.statusCode()).isEqualTo(404);
    assertThat(unknown.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    assertThat(json.readTree(unknown.body()).path("detail").asText())
        .isEqualTo(
            "There is no MCP session with this Mcp-Session-Id on this instance (it was ended,"
                + " the instance restarted, or the session is another instance's: sessions live"
                + " in the instance that opened them): send initialize again, without"
                + " Mcp-Session-Id, for a new session.");
  }

  /** A body in this test's session with this Accept header (none when null). */
  private HttpResponse<String> postAccepting(byte[] body, String accept) throws Exception {
    HttpRequest.Builder request =
        withKey(mcp)
            .header("Content-Type", "application/json")
            .header("Mcp-Session-Id", session)
            .POST(HttpRequest.BodyPublishers.ofByteArray(body));
    if (accept != null) {
      request.header("Accept", accept);
    }
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static HttpRequest.Builder withKey(URI uri) {
    return HttpRequest.newBuilder(uri)
        .timeout(Duration.ofSeconds(30))
        .header("Authorization", "Bearer " + AGENT);
  }

  /** An enqueue_work call in this test's queue; its id as JSON, or none when null. */
  private String enqueue(String id, String dedupeKey, String payload) {
    return "{\"jsonrpc\":\"2.0\","
        + (id == null ? "" : "\"id\":" + id + ",")
        + "\"method\":\"tools/call\",\"params\":{\"name\":\"enqueue_work\",\"arguments\":{"
        + "\"queue\":\""
        + queue
        + "\",\"dedupeKey\":\""
        + dedupeKey
        + "\",\"payload\":"
        + payload
        + "}}}";
  }

  @Test
  void a_body_in_another_charset_is_a_415_and_runs_no_tool() throws Exception {
    try (LogCapture log = LogCapture.start(Level.WARNING)) {
      for (String charset : new String[] {"ISO-8859-1", "us-ascii", "UTF-16"}) {
        HttpResponse<String> answer =
            post(enqueueOf("é"), "application/json; charset=" + charset, null);

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
        HttpResponse<String> answer = post(enqueueOf("A"), contentType, null);

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
  void a_body_with_two_content_types_is_a_415_and_runs_no_tool() throws Exception {
    try (LogCapture log = LogCapture.start(Level.WARNING)) {
      HttpRequest.Builder request =
          HttpRequest.newBuilder(mcp)
              .timeout(Duration.ofSeconds(30))
              .header("Authorization", "Bearer " + AGENT)
              .header("Accept", "application/json, text/event-stream")
              .header("Content-Type", "application/json")
              .header("Content-Type", "text/plain")
              .header("Mcp-Session-Id", session)
              .POST(HttpRequest.BodyPublishers.ofByteArray(enqueueOf("A")));
      HttpResponse<String> answer =
          http.send(request.build(), HttpResponse.BodyHandlers.ofString());

      JsonNode problem = problem(answer, 415);
      assertThat(problem.path("detail").asText()).contains("2 Content-Type");
      assertThat(McpClients.rows(database, queue)).as("items stored").isZero();
      assertThat(log.records()).extracting(LogCapture::format).isEmpty();
    }
  }

  @Test
  void a_compressed_body_is_a_415_and_runs_no_tool() throws Exception {
    try (LogCapture log = LogCapture.start(Level.WARNING)) {
      HttpResponse<String> answer = post(gzip(enqueueOf("A")), "application/json", "gzip");

      JsonNode problem = problem(answer, 415);
      assertThat(problem.path("detail").asText()).contains("'gzip'").contains("identity");
      assertThat(answer.headers().firstValue("Accept-Encoding")).hasValue("identity");
      assertThat(McpClients.rows(database, queue)).as("items stored").isZero();
      assertThat(log.records()).extracting(LogCapture::format).isEmpty();
    }
  }

  @Test
  void a_body_declared_utf8_or_identity_runs_its_tool() throws Exception {
    HttpResponse<String> answer =
        post(enqueueOf("é"), "application/json; charset=UTF-8", "identity");

    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
    assertThat(McpClients.rows(database, queue)).isEqualTo(1);
  }

  @Test
  void a_byte_order_mark_before_the_body_is_skipped_as_the_api_skips_it() throws Exception {
    byte[] mark = {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF};
    String item = "{\"dedupeKey\":\"rest\",\"payload\":\"A\"}";
    try (LogCapture log = LogCapture.start(Level.WARNING)) {
      // One mark before the JSON text: RFC 8259 lets a reader skip it, and the API does.
      HttpResponse<String> rest = postToApi(concat(mark, bytes(item)));
      assertThat(rest.statusCode()).as(rest.body()).isEqualTo(201);
      HttpResponse<String> answer = post(concat(mark, enqueueOf("é")));
      assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
      assertThat(message(answer).path("result").path("structuredContent").path("result").asText())
          .as(answer.body())
          .isEqualTo("created");

      // A mark is not JSON anywhere else: twice, or with nothing after it, both refuse it.
      HttpResponse<String> twiceToApi = postToApi(concat(mark, mark, bytes(item)));
      assertThat(twiceToApi.statusCode()).as(twiceToApi.body()).isEqualTo(400);
      for (byte[] body : List.of(concat(mark, mark, enqueueOf("B")), mark)) {
        HttpResponse<String> refused = post(body);
        assertThat(refused.statusCode()).as(refused.body()).isEqualTo(400);
        assertThat(message(refused).path("error").path("code").asInt()).isEqualTo(-32700);
      }
      assertThat(postToApi(mark).statusCode()).isEqualTo(400);
      assertThat(rows()).as("items stored: the API's and the tool's").isEqualTo(2);
      assertThat(log.records()).extracting(LogCapture::format).isEmpty();
    }
  }

  /** An enqueue into this test's queue through the REST API, with the same key. */
  private HttpResponse<String> postToApi(byte[] body) throws Exception {
    return http.send(
        withKey(mcp.resolve("/v1/queues/" + queue + "/items"))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofByteArray(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private JsonNode problem(HttpResponse<String> answer, int status) throws Exception {
    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(status);
    assertThat(answer.headers().firstValue("Content-Type"))
        .hasValueSatisfying(type -> assertThat(type).startsWith("application/problem+json"));
    JsonNode problem = json.readTree(answer.body());
    assertThat(problem.path("status").asInt()).isEqualTo(status);
    return problem;
  }

  private byte[] enqueueOf(String payload) {
    return bytes(
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
            + "\"enqueue_work\",\"arguments\":{\"queue\":\""
            + queue
            + "\",\"dedupeKey\":\"k\",\"payload\":\""
            + payload
            + "\"}}}");
  }

  private static byte[] gzip(byte[] plain) throws Exception {
    ByteArrayOutputStream zipped = new ByteArrayOutputStream();
    try (GZIPOutputStream out = new GZIPOutputStream(zipped)) {
      out.write(plain);
    }
    return zipped.toByteArray();
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    for (byte[] part : parts) {
      all.writeBytes(part);
    }
    return all.toByteArray();
  }

  /** Null when the answer is a clean refusal; else what is wrong with it. */
  private String refused(HttpResponse<String> answer) throws Exception {
    if (answer.statusCode() >= 500) {
      return "HTTP " + answer.statusCode();
    }
    if (answer.statusCode() >= 400) {
      return null; // refused before MCP: a body past the HTTP limit, say
    }
    JsonNode message = message(answer);
    if (message.has("error")) {
      return null; // a JSON-RPC error: the arguments never reached a tool
    }
    JsonNode result = message.path("result");
    if (!result.path("isError").asBoolean()) {
      return "accepted: " + shorten(answer.body());
    }
    String text = result.path("content").path(0).path("text").asText("");
    if (text.isBlank() || text.contains("Exception") || text.contains("\tat ")) {
      return "an unhelpful error: " + shorten(text);
    }
    return null;
  }

  private HttpResponse<String> call(int id, String tool, String arguments) throws Exception {
    return post(
        "{\"jsonrpc\":\"2.0\",\"id\":"
            + id
            + ",\"method\":\"tools/call\",\"params\":{\"name\":\""
            + tool
            + "\",\"arguments\":"
            + arguments
            + "}}");
  }

  private HttpResponse<String> post(String body) throws Exception {
    return post(body.getBytes(StandardCharsets.UTF_8));
  }

  /** As the first message of a new session: the one state in which initialize is read. */
  private HttpResponse<String> postWithoutSession(String body) throws Exception {
    String kept = session;
    session = null;
    try {
      return post(body);
    } finally {
      session = kept;
    }
  }

  private HttpResponse<String> post(byte[] body) throws Exception {
    return post(body, "application/json", null);
  }

  /** A body with this Content-Type and Content-Encoding (each left out when null). */
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

  /** The JSON-RPC message of an answer, sent as JSON or as one server-sent event. */
  private JsonNode message(HttpResponse<String> answer) throws Exception {
    String body = answer.body();
    if (answer.headers().firstValue("Content-Type").orElse("").startsWith("text/event-stream")) {
      StringBuilder data = new StringBuilder();
      for (String line : body.split("\n")) {
        if (line.startsWith("data:")) {
          data.append(line.substring(5).strip());
        }
      }
      body = data.toString();
    }
    return json.readTree(body);
  }

  private long rows() throws Exception {
    return McpClients.rows(database, queue);
  }

  private static String shorten(String text) {
    return text.length() <= 120 ? text : text.substring(0, 120) + "…";
  }
}
