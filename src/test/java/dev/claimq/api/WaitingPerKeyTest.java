package dev.claimq.api;

import static dev.claimq.Api.claimNext;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.json;
import static dev.claimq.Api.problem;
import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;

import dev.claimq.AsAdmin;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * A key may have claimq.long-poll.max-waiting-per-key claims waiting on an instance (3 here): past
 * that a claim looks once and, with nothing due, is told to back off (503) instead of waiting.
 */
@QuarkusTest
@TestProfile(WaitingPerKeyTest.ThreeWaiting.class)
class WaitingPerKeyTest extends AsAdmin {
  private static final int BOUND = 3;

  public static class ThreeWaiting implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      return Map.of("claimq.long-poll.max-waiting-per-key", Integer.toString(BOUND));
    }
  }

  @TestHTTPResource("/")
  URL base;

  /** A long poll over its own connection, as the worker key sends it; open until closed. */
  private Socket longPoll(String queue, int waitSeconds) throws Exception {
    String body = "{\"worker\":\"w\",\"waitSeconds\":" + waitSeconds + "}";
    String request =
        "POST /v1/queues/"
            + queue
            + "/claim HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer dev-worker-key\r\n"
            + "Content-Type: application/json\r\nContent-Length: "
            + body.length()
            + "\r\n\r\n"
            + body;
    Socket socket = new Socket(base.getHost(), base.getPort());
    socket.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
    socket.getOutputStream().flush();
    return socket;
  }

  /** The answer within the time, or null while the claim still waits. */
  private static RawSocket.Raw answerWithin(Socket socket, int millis) throws Exception {
    socket.setSoTimeout(millis);
    try {
      return RawSocket.read(socket.getInputStream());
    } catch (SocketTimeoutException waiting) {
      return null;
    }
  }

  private static Response workerClaim(String queue, int waitSeconds) {
    return json()
        .header("Authorization", "Bearer dev-worker-key")
        .body(Map.of("worker", "w", "waitSeconds", waitSeconds))
        .post("/v1/queues/{queue}/claim", queue);
  }

  @Test
  void past_its_bound_a_key_is_told_to_back_off_unless_something_is_due_and_others_still_wait()
      throws Exception {
    String empty = uniqueQueue("bound-empty");
    int racers = 20;
    ExecutorService pool = Executors.newFixedThreadPool(racers);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<Socket>> sent = new ArrayList<>();
    for (int i = 0; i < racers; i++) {
      sent.add(
          pool.submit(
              () -> {
                go.await();
                return longPoll(empty, 20);
              }));
    }
    go.countDown();
    List<Socket> waiting = new ArrayList<>();
    int refused = 0;
    try {
      for (Future<Socket> one : sent) {
        Socket socket = one.get();
        RawSocket.Raw answer = answerWithin(socket, 3000);
        if (answer == null) {
          waiting.add(socket);
          continue;
        }
        socket.close();
        assertThat(answer.status()).as(answer.body()).isEqualTo(503);
        assertThat(answer.body()).contains("too-many-waiting").contains("'dev-worker'");
        assertThat(answer.header("retry-after")).isEqualTo("1");
        refused++;
      }
      // Exactly the bound waits, whichever claims came first; all the others are refused.
      assertThat(waiting).hasSize(BOUND);
      assertThat(refused).isEqualTo(racers - BOUND);

      // Refused as a REST client sees it: a problem, as documented.
      problem(workerClaim(empty, 20), 503, "too-many-waiting");
      // Another key's claims still wait (a second's wait, then nothing: 204).
      long start = System.nanoTime();
      claimNext(empty, Map.of("worker", "admin", "waitSeconds", 1)).then().statusCode(204);
      assertThat((System.nanoTime() - start) / 1_000_000).isGreaterThanOrEqualTo(900);

      // Past the bound, what is due is still claimed: the bound only keeps claims from waiting.
      String due = uniqueQueue("bound-due");
      String first = enqueued(due, "first", 1);
      Response claimed = workerClaim(due, 20);
      claimed.then().statusCode(200);
      assertThat(claimed.<String>path("id")).isEqualTo(first);
      // A complete asking for next with a wait, past the bound: the complete is made, and it
      // answers at once with no next item (not after the 20 s it asked to wait).
      long completing = System.nanoTime();
      json()
          .header("Authorization", "Bearer dev-worker-key")
          .body(
              Map.<String, Object>of(
                  "claimToken",
                  claimed.<String>path("claimToken"),
                  "next",
                  Map.of("worker", "w", "waitSeconds", 20)))
          .post("/v1/items/{id}/complete", first)
          .then()
          .statusCode(200)
          .body("state", org.hamcrest.Matchers.equalTo("done"))
          .body("next", org.hamcrest.Matchers.nullValue());
      assertThat((System.nanoTime() - completing) / 1_000_000).isLessThan(10_000);
    } finally {
      for (Socket socket : waiting) {
        socket.close();
      }
      pool.shutdownNow();
    }

    // Each waiting claim counts until it ends, its client gone included: once the three
    // connections are closed, the key's claims wait again.
    long deadline = System.nanoTime() + 10_000_000_000L;
    int status = workerClaim(empty, 1).statusCode();
    while (status == 503 && System.nanoTime() < deadline) {
      Thread.sleep(100);
      status = workerClaim(empty, 1).statusCode();
    }
    assertThat(status).isEqualTo(204);
  }
}
