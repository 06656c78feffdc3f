package dev.claimq.api;

import static dev.claimq.Api.complete;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.uniqueQueue;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.claimq.AsAdmin;
import dev.claimq.Unannounced;
import dev.claimq.longpoll.ClaimableListener;
import dev.claimq.longpoll.ParkedClaims;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * Long-poll claims. The fallback poll is off here, so only a signal can wake a parked claim: the
 * enqueue's own, in this instance, and PostgreSQL's NOTIFY from another; a prompt answer proves the
 * signal path. Latency figures are printed; the bound asserted is loose on purpose (a loaded CI
 * machine), but far below what polling alone could give.
 */
@QuarkusTest
@TestProfile(LongPollTest.SignalOnly.class)
class LongPollTest extends AsAdmin {

  public static class SignalOnly implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      return Map.of("claimq.long-poll.fallback-interval", "off");
    }
  }

  @TestHTTPResource("/")
  URI base;

  @Inject ParkedClaims waiters;
  @Inject ClaimableListener listener;
  @Inject jakarta.persistence.EntityManager entityManager;
  @Inject javax.sql.DataSource dataSource;

  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private final ObjectMapper json = new ObjectMapper();

  @Test
  void a_parked_claim_is_answered_promptly_when_an_item_is_enqueued() throws Exception {
    List<Long> latencies = new ArrayList<>();
    for (int round = 0; round < 5; round++) {
      String queue = uniqueQueue("wake");
      int before = parkedBefore();
      CompletableFuture<HttpResponse<String>> parked = claimNext(queue, 10);
      awaitParked(before + 1);

      enqueued(queue, "k", Map.of("round", round));
      long enqueuedAt = System.nanoTime();
      HttpResponse<String> claimed = parked.get(10, TimeUnit.SECONDS);
      long latencyMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - enqueuedAt);

      assertThat(claimed.statusCode()).isEqualTo(200);
      assertThat(json.readTree(claimed.body()).path("payload").path("round").asInt())
          .isEqualTo(round);
      latencies.add(latencyMillis);
    }
    latencies.sort(null);
    System.out.printf("long-poll wake-up after enqueue, ms (sorted): %s%n", latencies);
    assertThat(latencies.get(latencies.size() / 2)).as("median wake-up ms").isLessThan(1000);
  }

  @Test
  void work_enqueued_through_another_instance_wakes_a_claim_parked_here() throws Exception {
    String queue = uniqueQueue("elsewhere");
    int before = parkedBefore();
    CompletableFuture<HttpResponse<String>> parked = claimNext(queue, 10);
    awaitParked(before + 1);

    enqueuedElsewhere(queue);

    assertThat(parked.get(5, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
  }

  @Test
  void a_listener_whose_server_stops_answering_reconnects_and_hears_again() throws Exception {
    String name = ClaimableListener.listenerName("claimq." + schema());
    long stopped = listenerBackend(name, 0);
    Process stop = new ProcessBuilder("kill", "-STOP", Long.toString(stopped)).start();
    Assumptions.assumeTrue(
        stop.waitFor() == 0,
        "this test pauses a PostgreSQL backend, which needs its owner or root");
    try {
      // The paused backend still holds its socket open, so the listener hears nothing and no
      // error: only its liveness check notices (within 5 s, plus 5 s for the answer).
      long replaced = listenerBackend(name, stopped);
      assertThat(replaced).isNotEqualTo(stopped);

      String queue = uniqueQueue("relisten");
      int before = parkedBefore();
      CompletableFuture<HttpResponse<String>> parked = claimNext(queue, 10);
      awaitParked(before + 1);
      enqueuedElsewhere(queue);
      assertThat(parked.get(5, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    } finally {
      new ProcessBuilder("kill", "-CONT", Long.toString(stopped)).start().waitFor();
      try (Connection connection = dataSource.getConnection();
          PreparedStatement terminate =
              connection.prepareStatement("SELECT pg_terminate_backend(?)")) {
        terminate.setInt(1, (int) stopped);
        terminate.execute();
      }
    }
  }

  /** The pid of the listener's backend, once it is another than this one; waits up to 30 s. */
  private long listenerBackend(String name, long other) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (System.nanoTime() < deadline) {
      try (Connection connection = dataSource.getConnection();
          PreparedStatement find =
              connection.prepareStatement(
                  "SELECT pid FROM pg_stat_activity WHERE application_name = ? AND pid <> ?::int")) {
        find.setString(1, name);
        find.setLong(2, other);
        try (ResultSet row = find.executeQuery()) {
          if (row.next()) {
            return row.getLong(1);
          }
        }
      }
      Thread.sleep(100);
    }
    throw new AssertionError("no listener connection other than " + other + " within 30 s");
  }

  private String schema() throws Exception {
    try (Connection connection = dataSource.getConnection()) {
      return connection.getSchema();
    }
  }

  /** What another instance does on enqueue: insert, commit, then announce on the channel. */
  private void enqueuedElsewhere(String queue) {
    QuarkusTransaction.requiringNew()
        .run(
            () ->
                entityManager
                    .createNativeQuery(
                        "INSERT INTO item (queue, dedupe_key, payload, max_attempts)"
                            + " VALUES (:queue, 'k', '1', 5)")
                    .setParameter("queue", queue)
                    .executeUpdate());
    QuarkusTransaction.requiringNew()
        .run(
            () ->
                entityManager
                    .createNativeQuery("SELECT pg_notify('claimq.' || current_schema(), :queue)")
                    .setParameter("queue", queue)
                    .getSingleResult());
  }

  @Test
  void an_enqueue_is_announced_with_this_instances_tag_while_another_instance_listens()
      throws Exception {
    String newcomer = "a-test-instance0";
    String announced = uniqueQueue("announced");
    String alone = uniqueQueue("alone");
    try (Connection connection = dataSource.getConnection()) {
      PGConnection postgres = connection.unwrap(PGConnection.class);
      try (Statement listen = connection.createStatement()) {
        listen.execute("LISTEN \"" + channel() + "\"");
      }
      try {
        // Another instance begins to listen: this one answers with its own tag at once, not
        // only at its next heartbeat (one in 5 s).
        long helloAt = System.nanoTime();
        say(connection, "@here " + newcomer);
        String answer = null;
        while (answer == null && System.nanoTime() - helloAt < TimeUnit.SECONDS.toNanos(6)) {
          PGNotification[] notifications = postgres.getNotifications(50);
          for (PGNotification notification :
              notifications == null ? new PGNotification[0] : notifications) {
            String payload = notification.getParameter();
            if (answer == null && payload.startsWith("@here ") && !payload.endsWith(newcomer)) {
              answer = payload;
            }
          }
        }
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - helloAt)).isLessThan(1000);
        String tag = answer.substring("@here ".length());
        assertThat(tag).matches("[A-Za-z0-9_-]{16}");
        awaitOtherInstances(1);

        for (int i = 0; i < 5; i++) {
          enqueued(announced, "k" + i, i);
        }
        List<String> heard = heard(postgres, p -> p.startsWith(announced + " "));
        assertThat(heard).isNotEmpty().allMatch(payload -> payload.equals(announced + " " + tag));

        // It stops: this instance hears of no other, and tells nobody of its enqueues.
        say(connection, "@bye " + newcomer);
        awaitOtherInstances(0);
        for (int i = 0; i < 5; i++) {
          enqueued(alone, "k" + i, i);
        }
        assertThat(heard(postgres, p -> p.startsWith(alone + " "))).isEmpty();
      } finally {
        say(connection, "@bye " + newcomer);
        try (Statement unlisten = connection.createStatement()) {
          unlisten.execute("UNLISTEN *");
        }
      }
    }
  }

  /** The payloads of this channel's notifications that match, heard within 2 s. */
  private static List<String> heard(
      PGConnection postgres, java.util.function.Predicate<String> matching) throws Exception {
    List<String> heard = new ArrayList<>();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
    while (System.nanoTime() < deadline) {
      PGNotification[] notifications = postgres.getNotifications(100);
      for (PGNotification notification :
          notifications == null ? new PGNotification[0] : notifications) {
        if (matching.test(notification.getParameter())) {
          heard.add(notification.getParameter());
        }
      }
    }
    return heard;
  }

  private void say(Connection connection, String payload) throws Exception {
    try (PreparedStatement notify = connection.prepareStatement("SELECT pg_notify(?, ?)")) {
      notify.setString(1, channel());
      notify.setString(2, payload);
      notify.execute();
    }
  }

  private void awaitOtherInstances(int count) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (listener.otherInstances() != count && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertThat(listener.otherInstances()).as("other instances heard").isEqualTo(count);
  }

  private String channel() throws Exception {
    return "claimq." + schema();
  }

  @Test
  void an_operator_retry_wakes_a_claim_parked_on_its_queue() throws Exception {
    String queue = uniqueQueue("retried");
    String id = enqueued(queue, Map.of("dedupeKey", "k", "payload", 1, "maxAttempts", 1));
    String token =
        given()
            .contentType("application/json")
            .body(Map.of())
            .post("/v1/items/{id}/claim", id)
            .path("claimToken");
    given()
        .contentType("application/json")
        .body(Map.of("claimToken", token, "error", "no", "retryable", false))
        .post("/v1/items/{id}/fail", id)
        .then()
        .statusCode(200);
    int before = parkedBefore();
    CompletableFuture<HttpResponse<String>> parked = claimNext(queue, 10);
    awaitParked(before + 1);

    given().post("/v1/items/{id}/retry", id).then().statusCode(200);

    assertThat(parked.get(5, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
  }

  @Test
  void a_long_poll_with_nothing_to_claim_answers_204_when_the_wait_ends() throws Exception {
    long start = System.nanoTime();
    HttpResponse<String> response = claimNext(uniqueQueue("timeout"), 1).get(10, TimeUnit.SECONDS);
    long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

    assertThat(response.statusCode()).isEqualTo(204);
    assertThat(tookMillis).isBetween(900L, 5000L);
  }

  @Test
  void a_long_poll_on_a_queue_with_work_answers_at_once() throws Exception {
    String queue = uniqueQueue("ready");
    enqueued(queue, "k", 1);
    HttpResponse<String> response = claimNext(queue, 20).get(5, TimeUnit.SECONDS);
    assertThat(response.statusCode()).isEqualTo(200);
  }

  @Test
  void two_hundred_parked_claims_hold_no_connection_and_delay_no_other_request() throws Exception {
    String parkedQueue = uniqueQueue("parked");
    int parkedCount = 200;
    int before = parkedBefore();
    List<CompletableFuture<HttpResponse<String>>> parked = new ArrayList<>();
    for (int i = 0; i < parkedCount; i++) {
      parked.add(claimNext(parkedQueue, 20));
    }
    awaitParked(before + parkedCount);
    long parkedAt = System.nanoTime();

    // The pool has 20 connections and a 3 s acquisition timeout: if parked claims held
    // connections or worker threads, these would queue behind them and fail.
    String busyQueue = uniqueQueue("busy");
    long start = System.nanoTime();
    for (int i = 0; i < 15; i++) {
      String id = enqueued(busyQueue, "k" + i, i);
      String token =
          given()
              .contentType("application/json")
              .body(Map.of())
              .post("/v1/items/{id}/claim", id)
              .then()
              .statusCode(200)
              .extract()
              .path("claimToken");
      complete(id, Map.of("claimToken", token)).then().statusCode(200);
      given().get("/v1/queues").then().statusCode(200);
    }
    long otherMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    System.out.printf(
        "60 other requests with %d claims parked took %d ms%n", parkedCount, otherMillis);
    assertThat(otherMillis).isLessThan(10_000);
    // Still parked, all of them (their 20 s wait has not run out yet).
    assertThat(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - parkedAt)).isLessThan(15);
    assertThat(waiters.parked()).isGreaterThanOrEqualTo(before + parkedCount);

    // Work arriving for the parked queue reaches every parked claim, once each. In one batch:
    // 200 enqueues one by one took the rest of the parked claims' 20 s on a busy machine.
    List<Map<String, Object>> work = new ArrayList<>();
    for (int i = 0; i < parkedCount; i++) {
      work.add(Map.of("dedupeKey", "item-" + i, "payload", i));
    }
    given()
        .urlEncodingEnabled(false)
        .contentType("application/json")
        .body(Map.of("items", work))
        .post("/v1/queues/" + parkedQueue + "/items:batch")
        .then()
        .statusCode(200);
    Set<String> ids = new HashSet<>();
    for (CompletableFuture<HttpResponse<String>> claim : parked) {
      HttpResponse<String> response = claim.get(30, TimeUnit.SECONDS);
      assertThat(response.statusCode()).isEqualTo(200);
      JsonNode item = json.readTree(response.body());
      assertThat(ids.add(item.path("id").asText())).as("each item claimed once").isTrue();
    }
    assertThat(ids).hasSize(parkedCount);
  }

  @Test
  void long_polls_arriving_while_others_wait_on_an_empty_queue_park_without_a_look()
      throws Exception {
    String queue = uniqueQueue("crowd");
    int before = parkedBefore();
    CompletableFuture<HttpResponse<String>> first = claimNext(queue, 20);
    awaitParked(before + 1);
    // An item that no signal announced: inserted by hand, as no enqueue does.
    String unannounced = Unannounced.item(dataSource, queue, "unannounced");

    // A crowd of long polls arrives: the first one's look found the queue empty and nothing has
    // woken it since, so they park behind it without looking, and their short waits run out.
    List<CompletableFuture<HttpResponse<String>>> crowd = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      crowd.add(claimNext(queue, 1));
    }
    for (CompletableFuture<HttpResponse<String>> claim : crowd) {
      assertThat(claim.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(204);
    }

    // A claim that does not wait always looks, and finds it.
    String claimed =
        given()
            .contentType("application/json")
            .body(Map.of("worker", "no-wait"))
            .post("/v1/queues/{queue}/claim", queue)
            .then()
            .statusCode(200)
            .extract()
            .path("id");
    assertThat(claimed).isEqualTo(unannounced);

    // Signals still reach the claim parked first.
    String signalled = enqueued(queue, "signalled", 1);
    HttpResponse<String> answer = first.get(10, TimeUnit.SECONDS);
    assertThat(answer.statusCode()).isEqualTo(200);
    assertThat(json.readTree(answer.body()).path("id").asText()).isEqualTo(signalled);
  }

  @Test
  void a_wake_up_after_the_last_empty_look_sends_the_next_long_poll_to_the_database() {
    String queue = uniqueQueue("woken");
    long lookBegan = waiters.wakes(queue);
    Boolean[] firstWoken = {null};
    waiters
        .await(queue, Duration.ofSeconds(10), lookBegan, new ParkedClaims.Ticket())
        .subscribe()
        .with(woken -> firstWoken[0] = woken);

    // Nothing since that empty look: the next claim parks (and here times out).
    Boolean second =
        waiters
            .awaitUnlessWoken(queue, Duration.ofMillis(300), new ParkedClaims.Ticket())
            .await()
            .indefinitely();
    assertThat(second).as("parked until its timeout").isFalse();

    // A wake-up (an enqueue, a NOTIFY, a win, the fallback) wakes the first and counts: the next
    // claim is told to look at once, though a claim is parked.
    waiters.wakeOne(queue);
    assertThat(firstWoken[0]).isTrue();
    waiters
        .await(queue, Duration.ofSeconds(10), lookBegan, new ParkedClaims.Ticket())
        .subscribe()
        .with(woken -> {});
    Boolean third =
        waiters
            .awaitUnlessWoken(queue, Duration.ofSeconds(5), new ParkedClaims.Ticket())
            .await()
            .indefinitely();
    assertThat(third).as("look now").isTrue();
  }

  @Test
  void parked_claims_wake_oldest_first_and_the_parked_count_follows_every_one() throws Exception {
    String queue = uniqueQueue("order");
    int before = parkedBefore();
    List<String> woken = new java.util.concurrent.CopyOnWriteArrayList<>();
    for (String claim : List.of("first", "second", "third")) {
      waiters
          .await(queue, Duration.ofSeconds(30), waiters.wakes(queue), new ParkedClaims.Ticket())
          .subscribe()
          .with(wasWoken -> woken.add(claim + (wasWoken ? "" : " timed out")));
    }
    CompletableFuture<Boolean> shortWait =
        waiters
            .await(queue, Duration.ofMillis(300), waiters.wakes(queue), new ParkedClaims.Ticket())
            .subscribeAsCompletionStage();
    assertThat(waiters.parked()).isEqualTo(before + 4);

    // A claim whose wait runs out leaves its place, whoever waits before it.
    assertThat(shortWait.get(10, TimeUnit.SECONDS)).as("woken").isFalse();
    assertThat(waiters.parked()).isEqualTo(before + 3);

    waiters.wakeOne(queue);
    assertThat(woken).containsExactly("first");
    assertThat(waiters.parked()).isEqualTo(before + 2);
    waiters.wakeOne(queue);
    waiters.wakeOne(queue);
    assertThat(woken).containsExactly("first", "second", "third");
    assertThat(waiters.parked()).isEqualTo(before);

    waiters.wakeOne(queue); // nobody left to wake
    assertThat(waiters.parked()).isEqualTo(before);
  }

  private CompletableFuture<HttpResponse<String>> claimNext(String queue, int waitSeconds) {
    HttpRequest request =
        HttpRequest.newBuilder(base.resolve("/v1/queues/" + queue + "/claim"))
            .header("Content-Type", "application/json")
            .header("Authorization", "Bearer dev-worker-key")
            .timeout(Duration.ofSeconds(waitSeconds + 30))
            .POST(
                HttpRequest.BodyPublishers.ofString(
                    "{\"worker\": \"poller\", \"waitSeconds\": " + waitSeconds + "}"))
            .build();
    return http.sendAsync(request, HttpResponse.BodyHandlers.ofString());
  }

  /**
   * The claims parked before a step parks its own: none, once the earlier steps' claims have left.
   * A claim leaves the count a moment after its client has its answer; counted, and then leaving
   * while the step's own claim parks, it would have the step wait for a count never reached.
   */
  private int parkedBefore() throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (waiters.parked() > 0 && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertThat(waiters.parked()).as("claims still parked from earlier steps").isZero();
    return 0;
  }

  private void awaitParked(int count) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (waiters.parked() < count && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertThat(waiters.parked()).as("parked claims").isEqualTo(count);
  }

  @Test
  void a_claim_parked_as_a_newer_release_migrates_ends_at_once_told_why() throws Exception {
    // No fallback look here (SignalOnly): only the turn itself ends the wait before its 20 s.
    int before = waiters.parked();
    CompletableFuture<io.restassured.response.Response> parked =
        CompletableFuture.supplyAsync(
            () -> dev.claimq.Api.claimNext(uniqueQueue("turn"), Map.of("waitSeconds", 20)));
    long deadline = System.nanoTime() + 5_000_000_000L;
    while (waiters.parked() <= before && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    try (Connection connection = dataSource.getConnection();
        Statement statement = connection.createStatement()) {
      statement.execute(NewerSchemaTest.NEWER);
    }
    try {
      dev.claimq.Api.problem(parked.get(5, TimeUnit.SECONDS), 503, "schema-newer");
    } finally {
      try (Connection connection = dataSource.getConnection();
          Statement statement = connection.createStatement()) {
        statement.execute(NewerSchemaTest.GONE);
      }
    }
    NewerSchemaTest.awaitMe(200);
  }
}
