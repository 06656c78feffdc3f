package dev.claimq.api;

import static dev.claimq.Api.claimedNext;
import static dev.claimq.Api.complete;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;

import dev.claimq.AsAdmin;
import dev.claimq.LogCapture;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;

/**
 * A request body is read on the I/O thread before the endpoint runs: a client that sends its body
 * slowly, or never finishes it, holds no worker thread, so many of them cannot starve the workers
 * and agents whose statements need one.
 */
@QuarkusTest
class SlowBodiesTest extends AsAdmin {
  // More than the service's worker threads (quarkus.thread-pool.max-threads, 48).
  private static final int SLOW_CLIENTS = 60;

  @TestHTTPResource("/")
  URL base;

  @Test
  void bodies_still_on_their_way_hold_no_worker_thread() throws Exception {
    String queue = uniqueQueue("slow-bodies");
    List<Socket> slow = new ArrayList<>();
    try (LogCapture logs = LogCapture.start(Level.INFO)) {
      for (int i = 0; i < SLOW_CLIENTS; i++) {
        slow.add(sendAllButTheLastByte(i % 2 == 0 ? "/v1/items/1/complete" : "/v1/queues/q/items"));
      }
      Thread.sleep(500); // their heads are read and routed; their bodies wait for a last byte

      long start = System.nanoTime();
      String id = enqueued(queue, "k", 1);
      String token = claimedNext(queue, "w").then().statusCode(200).extract().path("claimToken");
      complete(id, Map.of("claimToken", token)).then().statusCode(200);
      long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      System.out.printf(
          "enqueue, claim and complete beside %d unfinished bodies: %d ms%n",
          SLOW_CLIENTS, tookMillis);
      // Were each unfinished body holding a worker thread, these would wait for one until the
      // bodies' read timeout, a minute.
      assertThat(tookMillis).isLessThan(10_000);

      for (Socket socket : slow) {
        socket.close(); // a client that gives up mid-body is no error of the service's
      }
      Thread.sleep(500);
      assertThat(logs.errors()).as("ERROR records").isEmpty();
    } finally {
      for (Socket socket : slow) {
        socket.close();
      }
    }
  }

  private Socket sendAllButTheLastByte(String path) throws Exception {
    String body = "{\"claimToken\": \"slow\", \"dedupeKey\": \"slow\", \"payload\": 1}";
    String head =
        "POST "
            + path
            + " HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer "
            + AsAdmin.ADMIN
            + "\r\nContent-Type: application/json\r\nContent-Length: "
            + body.length()
            + "\r\n\r\n";
    Socket socket = new Socket(base.getHost(), base.getPort());
    OutputStream out = socket.getOutputStream();
    out.write((head + body.substring(0, body.length() - 1)).getBytes(StandardCharsets.US_ASCII));
    out.flush();
    return socket;
  }
}
