package dev.claimq.api;

import static dev.claimq.Api.uniqueQueue;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.hasSize;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.claimq.AsAdmin;
import dev.claimq.LogCapture;
import dev.claimq.api.RawSocket.Raw;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Requests that no HTTP client library would send, written byte by byte on a socket: each broken
 * one must still be answered with a problem+json whose status is the HTTP status, and none may be
 * logged as the service's own error.
 */
@QuarkusTest
class RawHttpTest extends AsAdmin {
  private static final String AUTH = "Authorization: Bearer " + AsAdmin.ADMIN + "\r\n";
  private final ObjectMapper json = new ObjectMapper();

  @TestHTTPResource("/")
  URL base;

  private LogCapture logs;

  @BeforeEach
  void captureLogs() {
    logs = LogCapture.start(Level.INFO);
  }

  @AfterEach
  void releaseLogs() {
    logs.close();
  }

  @Test
  void a_correct_chunked_post_is_accepted() throws Exception {
    String body = "{\"dedupeKey\": \"raw-1\", \"payload\": {\"to\": \"ada@example.com\"}}";
    String half = body.substring(0, 20);
    String rest = body.substring(20);
    Raw response =
        send(
            "POST /v1/queues/"
                + uniqueQueue("raw")
                + "/items HTTP/1.1\r\n"
                + "Host: localhost\r\n"
                + AUTH
                + "Content-Type: application/json\r\n"
                + "Transfer-Encoding: chunked\r\n"
                + "Connection: close\r\n"
                + "\r\n"
                + Integer.toHexString(half.length())
                + "\r\n"
                + half
                + "\r\n"
                + Integer.toHexString(rest.length())
                + "\r\n"
                + rest
                + "\r\n"
                + "0\r\n\r\n");

    assertThat(response.statusLine()).startsWith("HTTP/1.1 201 ");
    assertThat(response.header("content-type")).startsWith("application/json");
    assertThat(json.readTree(response.body()).path("dedupeKey").asText()).isEqualTo("raw-1");
    assertNoErrorLogged();
  }

  @Test
  void a_content_length_over_the_hard_cap_gets_a_problem_413() throws Exception {
    // Only the head: the answer must not wait for a body it will refuse.
    Raw response =
        send(
            "POST /v1/queues/raw/items HTTP/1.1\r\n"
                + "Host: localhost\r\n"
                + AUTH
                + "Content-Type: application/json\r\n"
                + "Content-Length: "
                + 5 * 1024 * 1024
                + "\r\n"
                + "\r\n");

    assertProblem(response, 413);
  }

  @Test
  void a_content_length_over_the_body_limit_but_under_the_hard_cap_gets_a_problem_413()
      throws Exception {
    Raw response =
        send(
            "POST /v1/queues/raw/items HTTP/1.1\r\n"
                + "Host: localhost\r\n"
                + AUTH
                + "Content-Type: application/json\r\n"
                + "Content-Length: "
                + 2 * 1024 * 1024
                + "\r\n"
                + "\r\n");

    assertProblem(response, 413);
  }

  @Test
  void a_413_sent_from_the_head_is_read_by_a_client_still_sending_the_body() throws Exception {
    // A client writes its whole body before it reads the answer, and Java's HttpClient fails the
    // exchange at the first write that fails: the 413, sent as soon as the head arrives, is read
    // only if the connection takes the rest of the body instead of resetting. Here the body is
    // written once the answer is in, the widest form of that race: at the MCP door (past
    // claimq.limits.body-bytes) and past the HTTP layer's cap.
    Map<String, Integer> refusals = new LinkedHashMap<>();
    refusals.put("/mcp", 1_100_000);
    refusals.put("/v1/queues/raw/items", 5 * 1024 * 1024);
    for (Map.Entry<String, Integer> refusal : refusals.entrySet()) {
      String path = refusal.getKey();
      int length = refusal.getValue();
      try (Socket socket = new Socket(base.getHost(), base.getPort())) {
        socket.setSoTimeout(10_000);
        OutputStream out = socket.getOutputStream();
        out.write(
            ("POST "
                    + path
                    + " HTTP/1.1\r\n"
                    + "Host: localhost\r\n"
                    + AUTH
                    + "Accept: application/json, text/event-stream\r\n"
                    + "Content-Type: application/json\r\n"
                    + "Content-Length: "
                    + length
                    + "\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
        Raw answer = RawSocket.read(socket.getInputStream());
        assertProblem(answer, 413);
        assertThat(answer.header("connection")).as(path).isEqualTo("close");

        byte[] chunk = new byte[64 * 1024];
        Arrays.fill(chunk, (byte) 'x');
        int written = 0;
        try {
          while (written < length) {
            int part = Math.min(chunk.length, length - written);
            out.write(chunk, 0, part);
            written += part;
          }
          out.flush();
        } catch (SocketException reset) {
          // the connection was closed with the body still coming
        }
        assertThat(written)
            .as(path + ": body bytes taken before the connection failed")
            .isEqualTo(length);
        assertThat(socket.getInputStream().read())
            .as(path + ": closed once the body is read")
            .isEqualTo(-1);
      }
    }
  }

  @Test
  void a_request_line_over_the_limit_gets_a_problem_414() throws Exception {
    Raw response =
        send(
            "GET /v1/queues/"
                + "q".repeat(9000)
                + "/stats HTTP/1.1\r\n"
                + "Host: localhost\r\n"
                + AUTH
                + "\r\n");

    assertProblem(response, 414);
  }

  @Test
  void a_header_over_the_limit_gets_a_problem_431() throws Exception {
    Raw response =
        send(
            "GET /v1/queues HTTP/1.1\r\n"
                + "Host: localhost\r\n"
                + AUTH
                + "X-Padding: "
                + "p".repeat(40_000)
                + "\r\n"
                + "\r\n");

    assertProblem(response, 431);
  }

  @Test
  void a_request_without_host_gets_a_problem_400() throws Exception {
    Raw response = send("GET /v1/queues HTTP/1.1\r\n" + AUTH + "\r\n");

    assertProblem(response, 400);
  }

  @Test
  void an_http_1_0_request_without_host_gets_a_problem_400_from_the_api_and_health_answers()
      throws Exception {
    // HTTP/1.0 asks for no Host, and Vert.x takes such a request on; the API answered it with a
    // 500 and an ERROR (its URI is built from the Host).
    String queue = uniqueQueue("no-host");
    String body = "{\"dedupeKey\": \"k\", \"payload\": 1}";
    for (String request :
        List.of(
            "GET /v1/me HTTP/1.0\r\n" + AUTH + "\r\n",
            // Routed by the normalized path: these are /v1/me too.
            "GET /q/../v1/me HTTP/1.0\r\n" + AUTH + "\r\n",
            "GET /console/../v1/me HTTP/1.0\r\n" + AUTH + "\r\n",
            "OPTIONS / HTTP/1.0\r\n\r\n",
            "GET /nothing HTTP/1.0\r\n\r\n",
            "POST /v1/queues/"
                + queue
                + "/items HTTP/1.0\r\n"
                + AUTH
                + "Content-Type: application/json\r\nContent-Length: "
                + body.length()
                + "\r\n\r\n"
                + body)) {
      Raw response = send(request);
      assertThat(response.statusLine()).as(request).startsWith("HTTP/1.0 400 ");
      assertThat(response.header("content-type")).startsWith("application/problem+json");
      assertThat(json.readTree(response.body()).path("detail").asText()).contains("Host");
    }
    assertNoErrorLogged();
    // A load balancer's check, as HAProxy sends it by default, still finds the service up.
    Raw health = send("GET /q/health/ready HTTP/1.0\r\n\r\n");
    assertThat(health.statusLine()).startsWith("HTTP/1.0 200 ");
    given().queryParam("queue", queue).get("/v1/items").then().body("items", hasSize(0));
  }

  @Test
  void a_malformed_chunk_size_gets_a_problem_400() throws Exception {
    // The bad chunk comes once the service is reading the body, as from a client that streams.
    Raw response =
        send(
            "POST /v1/queues/raw/items HTTP/1.1\r\n"
                + "Host: localhost\r\n"
                + AUTH
                + "Content-Type: application/json\r\n"
                + "Transfer-Encoding: chunked\r\n"
                + "\r\n"
                + "5\r\n"
                + "{\"ded\r\n",
            "zz\r\n" + "upeKey\": \"raw-2\", \"payload\": 1}\r\n" + "0\r\n\r\n");

    assertProblem(response, 400);
  }

  @Test
  void a_body_whose_length_the_head_does_not_settle_is_a_400_and_nothing_is_stored()
      throws Exception {
    String queue = uniqueQueue("framing");
    String body = "{\"dedupeKey\": \"k\", \"payload\": 1}";
    String chunked = Integer.toHexString(body.length()) + "\r\n" + body + "\r\n0\r\n\r\n";
    Map<String, String> framings =
        Map.of(
            "Transfer-Encoding: identity\r\nContent-Length: " + body.length(),
            body,
            "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked",
            chunked,
            "Transfer-Encoding: chunked,chunked",
            chunked);
    for (Map.Entry<String, String> framing : framings.entrySet()) {
      Raw response = send(enqueueHead(queue, "HTTP/1.1", framing.getKey()) + framing.getValue());
      assertProblem(response, 400);
      assertThat(json.readTree(response.body()).path("detail").asText())
          .as(framing.getKey())
          .contains("Transfer-Encoding");
    }
    // The decoder refuses chunked before another coding, and any in HTTP/1.0, with a bare 400.
    Raw decoder =
        send(enqueueHead(queue, "HTTP/1.1", "Transfer-Encoding: chunked, gzip") + chunked);
    assertThat(decoder.statusLine()).startsWith("HTTP/1.1 400 ");
    Raw old = send(enqueueHead(queue, "HTTP/1.0", "Transfer-Encoding: chunked") + chunked);
    assertThat(old.statusLine()).startsWith("HTTP/1.0 400 ");
    assertThat(given().queryParam("queue", queue).get("/v1/items").<Object>path("items"))
        .as("nothing was enqueued")
        .asList()
        .isEmpty();
  }

  @Test
  void a_transfer_coding_other_than_chunked_is_a_501_naming_it() throws Exception {
    String queue = uniqueQueue("coding");
    String body = "{\"dedupeKey\": \"k\", \"payload\": 1}";
    Raw response =
        send(
            enqueueHead(queue, "HTTP/1.1", "Transfer-Encoding: gzip, chunked")
                + Integer.toHexString(body.length())
                + "\r\n"
                + body
                + "\r\n0\r\n\r\n");

    assertProblem(response, 501);
    assertThat(json.readTree(response.body()).path("detail").asText()).contains("'gzip'");
    assertThat(given().queryParam("queue", queue).get("/v1/items").<Object>path("items"))
        .asList()
        .isEmpty();
  }

  @Test
  void an_expectation_other_than_100_continue_is_a_417_and_100_continue_still_works()
      throws Exception {
    String queue = uniqueQueue("expect");
    String body = "{\"dedupeKey\": \"k\", \"payload\": 1}";
    Raw refused =
        send(
            enqueueHead(queue, "HTTP/1.1", "Expect: 200-ok\r\nContent-Length: " + body.length())
                + body);

    assertProblem(refused, 417);
    assertThat(json.readTree(refused.body()).path("detail").asText()).contains("'200-ok'");
    assertThat(given().queryParam("queue", queue).get("/v1/items").<Object>path("items"))
        .asList()
        .isEmpty();
    Raw continued =
        send(
            enqueueHead(
                queue, "HTTP/1.1", "Expect: 100-continue\r\nContent-Length: " + body.length()),
            body);
    assertThat(continued.statusLine()).startsWith("HTTP/1.1 100 ");
  }

  /** An enqueue's head with these framing headers, ready for its body. */
  private static String enqueueHead(String queue, String version, String framing) {
    return "POST /v1/queues/"
        + queue
        + "/items "
        + version
        + "\r\nHost: localhost\r\n"
        + AUTH
        + "Content-Type: application/json\r\n"
        + framing
        + "\r\nConnection: close\r\n\r\n";
  }

  @Test
  void a_content_type_or_accept_that_is_not_a_media_type_gets_a_problem_naming_it()
      throws Exception {
    String queue = uniqueQueue("media-type");
    String body = "{\"dedupeKey\":\"k\",\"payload\":1}";
    Map<String, String> answers = new LinkedHashMap<>();
    for (String header :
        new String[] {
          "Content-Type:",
          "Content-Type: ;;",
          "Content-Type: /",
          "Content-Type: ;",
          "Accept: ;",
          "Accept: /",
          "Accept: ;;"
        }) {
      for (String method :
          new String[] {"GET /v1/items/1", "POST /v1/queues/" + queue + "/items"}) {
        for (boolean withBody : new boolean[] {false, true}) {
          Raw response =
              send(
                  method
                      + " HTTP/1.1\r\nHost: localhost\r\n"
                      + AUTH
                      + header
                      + (header.startsWith("Accept") ? "\r\nContent-Type: application/json" : "")
                      + "\r\nContent-Length: "
                      + (withBody ? body.length() : 0)
                      + "\r\nConnection: close\r\n\r\n"
                      + (withBody ? body : ""));
          answers.put(
              method + (withBody ? " with a body, " : ", ") + header,
              response.statusLine().substring(9, 12)
                  + " "
                  + response.header("content-type")
                  + " "
                  + json.readTree(response.body()).path("detail").asText());
        }
      }
    }
    assertThat(answers)
        .allSatisfy(
            (request, answer) ->
                assertThat(answer)
                    .as(request)
                    .startsWith(
                        request.contains("Accept")
                            ? "406 application/problem+json This resource answers application/json"
                            : "415 application/problem+json The Content-Type header '"));
    assertNoErrorLogged();
    assertThat(given().queryParam("queue", queue).get("/v1/items").<Object>path("items"))
        .as("nothing was enqueued")
        .asList()
        .isEmpty();
  }

  private void assertProblem(Raw response, int status) throws Exception {
    assertThat(response.statusLine()).startsWith("HTTP/1.1 " + status + " ");
    assertThat(response.header("content-type")).startsWith("application/problem+json");
    JsonNode problem = json.readTree(response.body());
    assertThat(problem.path("status").asInt()).as("status in the body").isEqualTo(status);
    assertThat(problem.path("detail").asText()).as("detail").isNotBlank();
    assertThat(problem.path("type").asText()).as("type").isNotBlank();
    assertThat(response.body())
        .as("no Java in the body")
        .doesNotContainPattern("\\b[a-z]+\\.[a-z]+\\.[A-Za-z.]*[A-Z]\\w*")
        .doesNotContain("Exception")
        .doesNotContain("\tat ");
    assertNoErrorLogged();
  }

  /** Some failures are logged as the connection closes, just after the answer: give them time. */
  private void assertNoErrorLogged() throws InterruptedException {
    Thread.sleep(300);
    assertThat(logs.errors()).as("ERROR records").isEmpty();
  }

  /** Writes the request (and each later part, after a pause) as ISO-8859-1 bytes. */
  private Raw send(String request, String... later) throws IOException, InterruptedException {
    byte[][] parts = new byte[later.length][];
    for (int i = 0; i < later.length; i++) {
      parts[i] = later[i].getBytes(StandardCharsets.ISO_8859_1);
    }
    return RawSocket.send(base, request.getBytes(StandardCharsets.ISO_8859_1), parts);
  }
}
