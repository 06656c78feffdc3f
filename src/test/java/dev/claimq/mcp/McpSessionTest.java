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
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;

/**
 * An MCP session over raw HTTP, as the transport sees it: whose it is, and what the transport
 * answers to what is not a JSON-RPC request (notifications, other methods, headers).
 */
@QuarkusTest
class McpSessionTest {
  private static final String AGENT = "dev-agent-key";
  private static final String ADMIN = "dev-admin-key";
  private static final String ELSEWHERE = "test-elsewhere-key";
  private static final String INITIALIZE =
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
          + "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
          + "\"clientInfo\":{\"name\":\"session\",\"version\":\"1\"}}}";
  private static final String INITIALIZED =
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";

  @TestHTTPResource("/mcp")
  URI mcp;

  @Inject AgroalDataSource database;
  @Inject McpSessions sessions;

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
  private final ObjectMapper json = new ObjectMapper();

  @Test
  void a_session_is_usable_only_with_the_key_that_opened_it() throws Exception {
    String queue = uniqueQueue("mcp-session");
    String session = open(AGENT);
    String unknown = "no-such-session";
    HttpResponse<String> unknownCall = post(ADMIN, unknown, enqueue(2, queue));
    assertThat(unknownCall.statusCode()).as(unknownCall.body()).isEqualTo(404);
    HttpResponse<String> unknownEnd = send(ADMIN, unknown, "DELETE");

    try (LogCapture log = LogCapture.start(Level.WARNING)) {
      for (String other : new String[] {ADMIN, ELSEWHERE}) {
        HttpResponse<String> call = post(other, session, enqueue(2, queue));
        assertSameAnswer(call, unknownCall);
        HttpResponse<String> end = send(other, session, "DELETE");
        assertSameAnswer(end, unknownEnd);
        HttpResponse<String> stream =
            http.send(
                request(other, session).header("Accept", "text/event-stream").GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertSameAnswer(stream, unknownEnd);
      }
      assertThat(McpClients.rows(database, queue)).as("items stored by other keys").isZero();
      assertThat(log.records()).extracting(LogCapture::format).isEmpty();
    }

    // The session is still there, and still its key's.
    HttpResponse<String> own = post(AGENT, session, enqueue(3, queue));
    assertThat(own.statusCode()).as(own.body()).isEqualTo(200);
    assertThat(own.body()).contains("\"result\":\"created\"");
    assertThat(McpClients.rows(database, queue)).isEqualTo(1);
    HttpResponse<String> ended = send(AGENT, session, "DELETE");
    assertThat(ended.statusCode()).as(ended.body()).isEqualTo(200);
    assertSameAnswer(post(AGENT, session, enqueue(4, queue)), unknownCall);
  }

  @Test
  void a_request_a_browser_sends_is_refused_before_anything_is_read() throws Exception {
    // DNS rebinding: a page whose host name now points at this service calls it from a browser
    // inside the network, its own origin in Origin and Host, as a same-origin page would.
    String queue = uniqueQueue("mcp-origin");
    String session = open(AGENT);
    int open = sessions.open("dev-agent");
    String self = "http://" + mcp.getHost() + ":" + mcp.getPort();
    for (String origin : List.of("http://evil.example:8081", self, "null")) {
      HttpResponse<String> initialize =
          http.send(
              request(AGENT, null)
                  .header("Origin", origin)
                  .header("Content-Type", "application/json")
                  .header("Accept", "application/json, text/event-stream")
                  .POST(HttpRequest.BodyPublishers.ofString(INITIALIZE))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(problem(initialize, 403).path("detail").asText()).contains("Origin");
      assertThat(initialize.headers().firstValue("Mcp-Session-Id")).isEmpty();
      HttpResponse<String> call =
          http.send(
              request(AGENT, session)
                  .header("Origin", origin)
                  .header("Content-Type", "application/json")
                  .header("Accept", "application/json, text/event-stream")
                  .POST(HttpRequest.BodyPublishers.ofString(enqueue(2, queue)))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      problem(call, 403);
      HttpResponse<String> stream =
          http.send(
              request(AGENT, session)
                  .header("Origin", origin)
                  .header("Accept", "text/event-stream")
                  .GET()
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      problem(stream, 403);
      // A body a page can send without asking first (text/plain, needing no preflight), and
      // one that is no JSON: refused for the Origin before the body is read.
      for (String[] body : new String[][] {{"text/plain", INITIALIZE}, {"application/json", "{"}}) {
        HttpResponse<String> plain =
            http.send(
                request(AGENT, null)
                    .header("Origin", origin)
                    .header("Content-Type", body[0])
                    .header("Accept", "application/json, text/event-stream")
                    .POST(HttpRequest.BodyPublishers.ofString(body[1]))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        problem(plain, 403);
      }
    }
    assertThat(McpClients.rows(database, queue)).as("items stored from a page").isZero();
    assertThat(sessions.open("dev-agent")).as("sessions opened from a page").isEqualTo(open);
    // The same call from a program, which sends no Origin, is served.
    HttpResponse<String> own = post(AGENT, session, enqueue(3, queue));
    assertThat(own.statusCode()).as(own.body()).isEqualTo(200);
    assertThat(McpClients.rows(database, queue)).isEqualTo(1);
  }

  @Test
  void a_request_without_a_session_other_than_initialize_is_a_400_saying_to_initialize()
      throws Exception {
    String queue = uniqueQueue("mcp-no-session");
    int open = sessions.open("dev-agent");
    String ping = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}";
    for (String request : List.of(enqueue(2, queue), ping, "[" + ping + "," + INITIALIZED + "]")) {
      // The extension answered 200 "method not found", which reads as an unknown method.
      assertThat(problem(post(AGENT, null, request), 400).path("detail").asText())
          .as(request)
          .startsWith("The request has no Mcp-Session-Id, and every request but initialize");
    }
    assertThat(McpClients.rows(database, queue)).isZero();
    assertThat(sessions.open("dev-agent")).as("sessions opened").isEqualTo(open);
  }

  @Test
  void a_notification_is_never_answered_alone_or_in_a_batch() throws Exception {
    String queue = uniqueQueue("mcp-notify");
    String unknown = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/whatever\"}";
    String cancelled =
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
            + "{\"requestId\":99,\"reason\":\"late\"}}";
    try (LogCapture log = LogCapture.start(Level.WARNING)) {
      // While the session is being initialized: only notifications/initialized is expected.
      HttpResponse<String> opened = post(AGENT, null, INITIALIZE);
      String session = opened.headers().firstValue("Mcp-Session-Id").orElseThrow();
      for (String notification : new String[] {unknown, cancelled}) {
        assertTakenSilently(post(AGENT, session, notification), notification);
      }
      assertTakenSilently(post(AGENT, session, INITIALIZED), INITIALIZED);
      // Initialized: one it does not know, a second initialized, and one it takes.
      for (String notification : new String[] {unknown, INITIALIZED, cancelled}) {
        assertTakenSilently(post(AGENT, session, notification), notification);
      }
      // Without a session, no session is opened for it.
      assertTakenSilently(post(AGENT, null, unknown), unknown);
      String batch = "[" + unknown + "," + INITIALIZED + "]";
      assertTakenSilently(post(AGENT, session, batch), batch);

      // Beside requests, only the requests are answered; a tool reads its arguments as sent.
      HttpResponse<String> mixed =
          post(
              AGENT,
              session,
              "["
                  + unknown
                  + ",{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\"},"
                  + INITIALIZED
                  + ","
                  + enqueue(8, queue)
                  + ","
                  + cancelled
                  + "]");
      assertThat(mixed.statusCode()).as(mixed.body()).isEqualTo(200);
      List<JsonNode> answers = messages(mixed);
      assertThat(answers).extracting(answer -> answer.path("id").asInt()).containsExactly(7, 8);
      assertThat(answers).allSatisfy(answer -> assertThat(answer.has("error")).isFalse());
      assertThat(answers.get(1).path("result").path("structuredContent").path("result").asText())
          .as(mixed.body())
          .isEqualTo("created");
      assertThat(McpClients.rows(database, queue)).isEqualTo(1);
      assertThat(log.records()).extracting(LogCapture::format).isEmpty();
    }
  }

  @Test
  void transport_refusals_say_what_is_wrong_and_what_to_do() throws Exception {
    String session = open(AGENT);
    String list = "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\"}";
    try (LogCapture log = LogCapture.start(Level.WARNING)) {
      for (String version : new String[] {"1999-01-01", ""}) {
        HttpResponse<String> answer =
            http.send(
                request(AGENT, session)
                    .header("Content-Type", "application/json")
                    .header("Accept", "application/json, text/event-stream")
                    .header("MCP-Protocol-Version", version)
                    .POST(HttpRequest.BodyPublishers.ofString(list))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(problem(answer, 400).path("detail").asText())
            .isEqualTo(
                "The MCP-Protocol-Version header '"
                    + version
                    + "' is not one version this server speaks: send the version initialize"
                    + " agreed on, one of 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05.");
      }
      for (String method : new String[] {"PUT", "PATCH", "OPTIONS", "HEAD"}) {
        HttpResponse<String> answer = send(AGENT, session, method);
        assertThat(answer.statusCode()).as(method).isEqualTo(405);
        assertThat(answer.headers().firstValue("Allow")).as(method).hasValue("GET, POST, DELETE");
        if (!method.equals("HEAD")) {
          assertThat(problem(answer, 405).path("detail").asText())
              .isEqualTo(
                  "/mcp does not take "
                      + method
                      + ": it takes POST (JSON-RPC messages, an initialize first), GET (the stream"
                      + " of a session's messages from the server) and DELETE (ends a session).");
        }
      }
      assertThat(problem(send(AGENT, null, "GET"), 400).path("detail").asText())
          .isEqualTo(
              "GET /mcp opens the stream of a session's messages from the server: send the"
                  + " session's Mcp-Session-Id header, from the answer to its initialize (POST"
                  + " initialize without one to open a session).");
      String stream =
          "GET /mcp answers a stream of server-sent events: list text/event-stream, not with"
              + " q=0.";
      assertThat(problem(send(AGENT, session, "GET"), 406).path("detail").asText())
          .isEqualTo("The request has no Accept header: " + stream);
      for (String accept : new String[] {"application/json", "text/event-stream;q=0"}) {
        HttpResponse<String> answer =
            http.send(
                request(AGENT, session).header("Accept", accept).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(problem(answer, 406).path("detail").asText())
            .isEqualTo("The Accept header '" + accept + "' does not take it: " + stream);
      }
      for (String method : new String[] {"DELETE", "GET"}) {
        HttpResponse<String> withBody =
            http.send(
                request(AGENT, session)
                    .header("Accept", "text/event-stream")
                    .header("Content-Type", "application/json")
                    .method(method, HttpRequest.BodyPublishers.ofString("{\"reason\":\"done\"}"))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(problem(withBody, 400).path("detail").asText())
            .isEqualTo(
                method + " /mcp takes no body: send it without one (Content-Length: 0, or none).");
      }
      assertThat(problem(send(AGENT, null, "DELETE"), 400).path("detail").asText())
          .isEqualTo(
              "DELETE /mcp ends a session: send the session's Mcp-Session-Id header, from the"
                  + " answer to its initialize (POST initialize without one to open a session).");
      assertThat(log.records()).extracting(LogCapture::format).isEmpty();
    }
    // None of these touched the session, and a GET that takes the stream opens it.
    assertThat(post(AGENT, session, list).statusCode()).isEqualTo(200);
    HttpResponse<InputStream> opened =
        http.send(
            request(AGENT, session).header("Accept", "Text/Event-Stream").GET().build(),
            HttpResponse.BodyHandlers.ofInputStream());
    opened.body().close();
    assertThat(opened.statusCode()).isEqualTo(200);
    assertThat(opened.headers().firstValue("Content-Type").orElse(""))
        .startsWith("text/event-stream");
    // nginx holds a proxied answer in its buffers unless told not to: the stream never arrived.
    assertThat(opened.headers().firstValue("X-Accel-Buffering")).hasValue("no");
  }

  @Test
  void media_types_in_accept_are_read_without_regard_to_case() throws Exception {
    String session = open(AGENT);
    HttpResponse<String> answer =
        http.send(
            request(AGENT, session)
                .header("Content-Type", "application/json")
                .header("Accept", "Application/JSON, Text/Event-Stream")
                .POST(
                    HttpRequest.BodyPublishers.ofString(
                        "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/list\"}"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
    assertThat(messages(answer).get(0).path("result").path("tools").size()).isEqualTo(3);
  }

  private JsonNode problem(HttpResponse<String> answer, int status) throws Exception {
    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(status);
    assertThat(answer.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    JsonNode problem = json.readTree(answer.body());
    assertThat(problem.path("status").asInt()).isEqualTo(status);
    return problem;
  }

  private void assertTakenSilently(HttpResponse<String> answer, String notification) {
    assertThat(answer.statusCode()).as(notification + " answered " + answer.body()).isEqualTo(202);
    assertThat(answer.body()).as(notification).isEmpty();
  }

  /** The JSON-RPC messages of an answer, sent as JSON or as server-sent events. */
  private List<JsonNode> messages(HttpResponse<String> answer) throws Exception {
    List<JsonNode> messages = new ArrayList<>();
    List<String> values = new ArrayList<>();
    if (answer.headers().firstValue("Content-Type").orElse("").startsWith("text/event-stream")) {
      for (String line : answer.body().split("\n")) {
        if (line.startsWith("data:")) {
          values.add(line.substring(5).strip());
        }
      }
    } else {
      values.add(answer.body());
    }
    for (String value : values) {
      JsonNode read = json.readTree(value);
      if (read.isArray()) {
        read.forEach(messages::add);
      } else {
        messages.add(read);
      }
    }
    return messages;
  }

  private void assertSameAnswer(HttpResponse<String> answer, HttpResponse<String> unknown) {
    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(unknown.statusCode());
    assertThat(answer.headers().firstValue("Content-Type"))
        .isEqualTo(unknown.headers().firstValue("Content-Type"));
    assertThat(answer.body()).isEqualTo(unknown.body());
  }

  @Test
  void a_session_named_twice_is_a_400_and_neither_session_is_touched() throws Exception {
    String queue = uniqueQueue("mcp-twice");
    String mine = open(AGENT);
    String again = open(AGENT);
    HttpResponse<String> twice =
        http.send(
            request(AGENT, mine)
                .header("Mcp-Session-Id", again)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(enqueue(2, queue)))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(twice.statusCode()).as(twice.body()).isEqualTo(400);
    assertThat(twice.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    assertThat(json.readTree(twice.body()).path("detail").asText())
        .isEqualTo(
            "The request has 2 Mcp-Session-Id headers: send one, the id of the session it belongs"
                + " to.");
    assertThat(McpClients.rows(database, queue)).isZero();
    for (String session : List.of(mine, again)) {
      assertThat(send(AGENT, session, "DELETE").statusCode()).isEqualTo(200);
    }
  }

  @Test
  void a_key_holds_at_most_100_sessions_and_ends_one_to_open_another() throws Exception {
    // One client opened 10,000 sessions in 23 s, each kept until it idled for 30 minutes.
    List<String> opened = new ArrayList<>();
    try {
      for (int n = sessions.open("test-elsewhere"); n < McpSessions.MAX_SESSIONS_PER_KEY - 1; n++) {
        opened.add(open(ELSEWHERE));
      }
      // The last one from an initialize in a batch, which opens a session too: counted, and
      // its key's to use.
      HttpResponse<String> batched = post(ELSEWHERE, null, "[" + INITIALIZE + "]");
      assertThat(batched.statusCode()).as(batched.body()).isEqualTo(200);
      String last = batched.headers().firstValue("Mcp-Session-Id").orElseThrow();
      opened.add(last);
      assertThat(post(ELSEWHERE, last, INITIALIZED).statusCode()).isEqualTo(202);
      assertThat(sessions.open("test-elsewhere")).isEqualTo(100);

      for (String initialize : List.of(INITIALIZE, "[" + INITIALIZE + "]")) {
        HttpResponse<String> refused = post(ELSEWHERE, null, initialize);
        assertThat(refused.statusCode()).as(refused.body()).isEqualTo(429);
        assertThat(refused.headers().firstValue("Content-Type"))
            .hasValue("application/problem+json");
        assertThat(refused.headers().firstValue("Mcp-Session-Id")).isEmpty();
        // Each was used within claimq.mcp.reclaim-idle-session-after (5 minutes): none is
        // ended to make room (McpSessionReclaimTest), and the answer says when one may be.
        assertThat(json.readTree(refused.body()).path("detail").asText())
            .startsWith(
                "This key has 100 MCP sessions open or opening, the most one key may hold, and"
                    + " none has been idle for 300 s");
        assertThat(refused.headers().firstValue("Retry-After").map(Integer::parseInt))
            .hasValueSatisfying(seconds -> assertThat(seconds).isBetween(200, 300));
      }
      assertThat(sessions.open("test-elsewhere")).isEqualTo(100);

      // Another key is not held back, and a session ended makes room for one.
      String other = open(AGENT);
      assertThat(send(AGENT, other, "DELETE").statusCode()).isEqualTo(200);
      assertThat(send(ELSEWHERE, opened.remove(0), "DELETE").statusCode()).isEqualTo(200);
      opened.add(open(ELSEWHERE));
    } finally {
      for (String session : opened) {
        send(ELSEWHERE, session, "DELETE");
      }
    }
  }

  @Test
  void initializes_racing_for_the_last_10_places_open_exactly_10_sessions() throws Exception {
    List<String> opened = new ArrayList<>();
    ExecutorService threads = Executors.newFixedThreadPool(40);
    try {
      int before = sessions.open("test-elsewhere");
      for (int n = before; n < McpSessions.MAX_SESSIONS_PER_KEY - 10; n++) {
        opened.add(open(ELSEWHERE));
      }
      CountDownLatch go = new CountDownLatch(1);
      List<Future<HttpResponse<String>>> racing = new ArrayList<>();
      for (int i = 0; i < 40; i++) {
        racing.add(
            threads.submit(
                () -> {
                  go.await();
                  return post(ELSEWHERE, null, INITIALIZE);
                }));
      }
      go.countDown();
      int refused = 0;
      for (Future<HttpResponse<String>> answer : racing) {
        HttpResponse<String> response = answer.get(30, TimeUnit.SECONDS);
        if (response.statusCode() == 200) {
          opened.add(response.headers().firstValue("Mcp-Session-Id").orElseThrow());
        } else {
          assertThat(response.statusCode()).as(response.body()).isEqualTo(429);
          refused++;
        }
      }
      assertThat(refused).isEqualTo(30);
      assertThat(opened).hasSize(McpSessions.MAX_SESSIONS_PER_KEY - before).doesNotHaveDuplicates();
      assertThat(sessions.open("test-elsewhere")).isEqualTo(McpSessions.MAX_SESSIONS_PER_KEY);
    } finally {
      threads.shutdownNow();
      for (String session : opened) {
        send(ELSEWHERE, session, "DELETE");
      }
    }
  }

  /** A new initialized session of this key. */
  private String open(String key) throws Exception {
    HttpResponse<String> opened = post(key, null, INITIALIZE);
    assertThat(opened.statusCode()).as(opened.body()).isEqualTo(200);
    String session = opened.headers().firstValue("Mcp-Session-Id").orElseThrow();
    HttpResponse<String> initialized = post(key, session, INITIALIZED);
    assertThat(initialized.statusCode()).as(initialized.body()).isEqualTo(202);
    return session;
  }

  private static String enqueue(int id, String queue) {
    return "{\"jsonrpc\":\"2.0\",\"id\":"
        + id
        + ",\"method\":\"tools/call\",\"params\":{\"name\":\"enqueue_work\",\"arguments\":{"
        + "\"queue\":\""
        + queue
        + "\",\"dedupeKey\":\"k\",\"payload\":1}}}";
  }

  private HttpResponse<String> post(String key, String session, String body) throws Exception {
    HttpRequest.Builder request =
        request(key, session)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** A request of this method without a body. */
  private HttpResponse<String> send(String key, String session, String method) throws Exception {
    return http.send(
        request(key, session).method(method, HttpRequest.BodyPublishers.noBody()).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private HttpRequest.Builder request(String key, String session) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(mcp)
            .timeout(Duration.ofSeconds(20))
            .header("Authorization", "Bearer " + key);
    if (session != null) {
      request.header("Mcp-Session-Id", session);
    }
    return request;
  }
}
