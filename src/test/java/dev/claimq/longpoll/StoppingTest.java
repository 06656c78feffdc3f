package dev.claimq.longpoll;

import static dev.claimq.Api.claimNext;
import static dev.claimq.Api.complete;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.json;
import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;

import dev.claimq.AsAdmin;
import io.quarkus.runtime.ShutdownDelayInitiatedEvent;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import jakarta.enterprise.event.Event;
import jakarta.inject.Inject;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * As the service begins to stop (SIGTERM; here the event Quarkus fires for it, in an instance of
 * its own, since no wait parks after it), parked long polls end at once: a claim is told 503
 * stopping, so that its worker backs off rather than claims again at once, and a finish's next
 * answers null, its finish done. Before, the stop waited out each long poll's wait, up to 20 s.
 */
@QuarkusTest
@TestProfile(StoppingTest.OwnInstance.class)
class StoppingTest extends AsAdmin {

  public static class OwnInstance implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      return Map.of("claimq.long-poll.fallback-interval", "off");
    }
  }

  @Inject Event<ShutdownDelayInitiatedEvent> stopping;
  @Inject ParkedClaims waiters;

  @Test
  void a_stop_ends_every_parked_wait_at_once_and_parks_none_after_it() throws Exception {
    String queue = uniqueQueue("stopping");
    String id = enqueued(queue, "in-hand", 1);
    String token = claimNext(queue, Map.of()).then().statusCode(200).extract().path("claimToken");
    int before = waiters.parked();

    CompletableFuture<Response> claim =
        CompletableFuture.supplyAsync(() -> claimNext(queue, Map.of("waitSeconds", 20)));
    CompletableFuture<Response> batch =
        CompletableFuture.supplyAsync(
            () ->
                json()
                    .body(Map.of("waitSeconds", 20, "max", 5))
                    .post("/v1/queues/{queue}/claim:batch", queue));
    CompletableFuture<Response> finished =
        CompletableFuture.supplyAsync(
            () ->
                complete(
                    id,
                    Map.of(
                        "claimToken",
                        token,
                        "externalRef",
                        "r1",
                        "next",
                        Map.of("waitSeconds", 20))));
    long waitedFrom = System.nanoTime();
    while (waiters.parked() < before + 3) {
      assertThat(System.nanoTime() - waitedFrom)
          .as("the three waits parked")
          .isLessThan(10_000_000_000L);
      Thread.sleep(10);
    }

    stopping.fire(new ShutdownDelayInitiatedEvent());

    for (Response answer :
        new Response[] {claim.get(5, TimeUnit.SECONDS), batch.get(5, TimeUnit.SECONDS)}) {
      assertThat(answer.statusCode()).as(answer.asString()).isEqualTo(503);
      assertThat(answer.contentType()).startsWith("application/problem+json");
      assertThat(answer.header("Retry-After")).isEqualTo("1");
      assertThat(answer.<String>path("type")).isEqualTo("https://claimq.dev/problems/stopping");
      assertThat(answer.<String>path("detail"))
          .contains("is stopping")
          .contains("Nothing was claimed");
    }
    Response done = finished.get(5, TimeUnit.SECONDS);
    assertThat(done.statusCode()).as(done.asString()).isEqualTo(200);
    assertThat(done.<String>path("state")).isEqualTo("done");
    assertThat(done.<Object>path("next")).isNull();
    assertThat(waiters.parked()).isEqualTo(before);

    // A wait asked for now does not park; a claim that does not wait is answered as ever.
    long asked = System.nanoTime();
    claimNext(queue, Map.of("waitSeconds", 20)).then().statusCode(503);
    assertThat(System.nanoTime() - asked).as("answered without waiting").isLessThan(5_000_000_000L);
    claimNext(queue, Map.of()).then().statusCode(204);
    String next = enqueued(queue, "after-the-stop-began", 2);
    claimNext(queue, Map.of("waitSeconds", 20)).then().statusCode(200);
    assertThat(next).isNotNull();
  }
}
