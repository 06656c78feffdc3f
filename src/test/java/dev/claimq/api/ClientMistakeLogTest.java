package dev.claimq.api;

import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;

import dev.claimq.AsAdmin;
import dev.claimq.LogCapture;
import dev.claimq.PlainHttp;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/**
 * What a client's mistake leaves in the service's log: at most a line of its own, never an ERROR,
 * and never a line that the client wrote.
 */
@QuarkusTest
class ClientMistakeLogTest extends AsAdmin {
  private static final String ADMIN = "Bearer " + AsAdmin.ADMIN;

  @TestHTTPResource("/")
  URI base;

  @Test
  void client_text_cannot_start_a_log_line_of_its_own() throws Exception {
    Logger problems = Logger.getLogger(ProblemMappers.class.getName());
    Level before = problems.getLevel();
    problems.setLevel(Level.FINE); // the level client mistakes are logged at
    try (LogCapture log = LogCapture.start(Level.FINE)) {
      PlainHttp http = new PlainHttp(base);
      String forged =
          "x\r\n2026-12-01 09:00:00,000 ERROR [forged] (main) an operator reads this\u202egol.exe";
      String queue = uniqueQueue("forged");
      http.send(
          "POST",
          "/v1/queues/" + queue + "/claim",
          "{\"" + forged.replace("\r", "\\r").replace("\n", "\\n") + "\":1}",
          ADMIN);
      http.send("GET", "/v1/items?state=x%0D%0AERROR%20forged", null, ADMIN);
      http.send("POST", "/v1/queues/x%0Aforged/claim", "{}", ADMIN);

      assertThat(log.records()).as("the three refusals were logged").hasSizeGreaterThanOrEqualTo(3);
      assertThat(log.records().stream().map(LogCapture::format))
          .allSatisfy(
              line ->
                  assertThat(line)
                      .doesNotContain("\n")
                      .doesNotContain("\r")
                      .doesNotContain("\u202e"))
          .anySatisfy(line -> assertThat(line).contains("x\\r\\n2026-12-01"));
    } finally {
      problems.setLevel(before);
    }
  }

  @Test
  void a_client_that_hangs_up_while_its_body_is_read_is_not_a_server_error() throws Exception {
    String path = "/v1/queues/" + uniqueQueue("hang-up") + "/items";
    try (LogCapture log = LogCapture.start(Level.WARNING)) {
      // Hanging up just before the service starts reading, and just after: both are seen.
      for (int i = 0; i < 200; i++) {
        try (Socket socket = new Socket(base.getHost(), base.getPort())) {
          OutputStream out = socket.getOutputStream();
          out.write(
              ("POST "
                      + path
                      + " HTTP/1.1\r\nHost: localhost\r\nAuthorization: "
                      + ADMIN
                      + "\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
                      + "{\"dedupeKey\":\"k\",\"payload\":\"")
                  .getBytes(StandardCharsets.US_ASCII));
          out.flush();
          Thread.sleep(i % 4);
        }
      }
      Thread.sleep(500); // for the service to notice and answer nobody

      assertThat(log.errors()).isEmpty();
    }
  }
}
