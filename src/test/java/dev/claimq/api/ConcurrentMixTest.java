package dev.claimq.api;

import static dev.claimq.Api.claim;
import static dev.claimq.Api.claimNext;
import static dev.claimq.Api.complete;
import static dev.claimq.Api.enqueue;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.fail;
import static dev.claimq.Api.heartbeat;
import static dev.claimq.Api.item;
import static dev.claimq.Api.json;
import static dev.claimq.Api.problem;
import static dev.claimq.Api.release;
import static dev.claimq.Api.uniqueQueue;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import dev.claimq.AsAdmin;
import dev.claimq.LogCapture;
import dev.claimq.Race;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * Every worker and operator call at once, on real threads, on a few items of one queue, so that
 * they collide: enqueues and batch enqueues of the same keys in other orders, claims of every kind,
 * heartbeats, intents, releases, completes and fails (with and without next, with stale tokens,
 * late successes, the same claim twice in one batch), operators' retries and cancels, one and many
 * at a time, and the queue paused and resumed, for a few seconds, each thread with its own fixed
 * seed. However odd or concurrent, no request is answered 500 (each answers only what the README
 * documents for it), nothing is logged as an ERROR, and the items are left consistent: one per key,
 * and an item is sending exactly when it has an open attempt, that of its current claim.
 */
@QuarkusTest
class ConcurrentMixTest extends AsAdmin {
  private static final int ITEMS = 20;
  private static final int THREADS = 12;

  /**
   * Each round's calls are on its own 20 keys (and on stale claims of earlier rounds): by the end
   * of a round most of its items are done, and a done item takes part in little.
   */
  private static final Duration ROUND = Duration.ofSeconds(2);

  private static final int ROUNDS = 6;

  @Inject DataSource dataSource;

  /** A claim some call was handed: its item and token, current or long stale. */
  record Claim(String id, String token) {}

  /** An answer the README does not document for the call, or any 5xx: call, status and body. */
  private final ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();

  private final Map<String, Integer> calls = new ConcurrentHashMap<>();

  /** How often each call got each status, to show what the mix did. */
  private final Map<String, Integer> answers = new ConcurrentHashMap<>();

  @Test
  void every_call_at_once_on_a_few_items_answers_as_documented_and_leaves_them_consistent()
      throws Exception {
    String queue = uniqueQueue("mix");
    json()
        .body(Map.of("maxAttempts", 100, "crashLoopAfter", 100, "maxReleases", 1000))
        .put("/v1/queues/{q}/policy", queue)
        .then()
        .statusCode(200);
    Map<Integer, List<String>> known = new ConcurrentHashMap<>();
    for (int round = 0; round < ROUNDS; round++) {
      known.put(round, Collections.synchronizedList(new ArrayList<>()));
    }
    // Half the first round's keys exist before the mix; every other key is first enqueued by the
    // racing calls.
    for (int i = 0; i < ITEMS / 2; i++) {
      String key = key(0, i);
      known
          .get(0)
          .add(
              enqueue(queue, Map.of("dedupeKey", key, "payload", payload(key)))
                  .then()
                  .statusCode(201)
                  .extract()
                  .path("id"));
    }
    List<Claim> claims = Collections.synchronizedList(new ArrayList<>());

    try (LogCapture log = LogCapture.start(Level.SEVERE)) {
      Instant start = Instant.now();
      Instant until = start.plus(ROUND.multipliedBy(ROUNDS));
      Race.of(
          THREADS,
          thread -> {
            Random random = new Random(20_261_205L + thread);
            Mix mix = new Mix(queue, start, known, claims, random, "w" + thread);
            while (Instant.now().isBefore(until)) {
              mix.step();
            }
            return null;
          });
      given().post("/v1/queues/{q}/resume", queue).then().statusCode(200);
      assertThat(log.errors()).as("ERROR log records during the mix").isEmpty();
    }

    assertThat(wrong).as("answers not documented for their calls").isEmpty();
    // Every key enqueued once more, so that each must now be there (exactly once).
    List<Map<String, Object>> every = new ArrayList<>();
    for (int round = 0; round < ROUNDS; round++) {
      for (int i = 0; i < ITEMS; i++) {
        every.add(Map.of("dedupeKey", key(round, i), "payload", payload(key(round, i))));
      }
    }
    json()
        .body(Map.of("items", every))
        .post("/v1/queues/{q}/items:batch", queue)
        .then()
        .statusCode(200);
    assertThat(calls.keySet()).as("the kinds of call that ran").containsAll(Mix.KINDS);

    ItemRows.consistent(dataSource, queue, ROUNDS * ITEMS);
    System.out.printf("ConcurrentMixTest: %s%n", new java.util.TreeMap<>(answers));
  }

  /**
   * A collision the mix makes only rarely, made to happen: a late complete (the token of its item's
   * ended attempt, and an externalRef) records on that attempt and acts on the item, while another
   * statement locks the item and then its latest attempt. Here the two locks are split across a
   * transaction so that the complete comes in between; in one statement each they meet the same
   * way, within a narrower window. Both must take the item first: then one waits for the other, and
   * neither is refused.
   */
  @Test
  void a_late_complete_and_a_finish_of_its_item_wait_for_each_other_in_one_order()
      throws Exception {
    String id = enqueued(uniqueQueue("late-order"), "k", 1);
    String token = claim(id, Map.of("worker", "slow")).path("claimToken");
    fail(id, Map.of("claimToken", token, "error", "timeout", "retryAfterSeconds", 0))
        .then()
        .statusCode(200);

    try (LogCapture log = LogCapture.start(Level.SEVERE);
        Connection finish = dataSource.getConnection()) {
      finish.setAutoCommit(false);
      long pid = dev.claimq.Locks.pidOf(finish);
      first(finish, "SELECT id FROM item WHERE id = " + Long.parseLong(id) + " FOR SHARE");
      CompletableFuture<Response> late =
          CompletableFuture.supplyAsync(
              () -> complete(id, Map.of("claimToken", token, "externalRef", "msg_late")));
      dev.claimq.Locks.awaitBlockedBy(dataSource, pid);
      first(
          finish,
          "SELECT 1 FROM attempt WHERE item_id = "
              + Long.parseLong(id)
              + " ORDER BY id DESC LIMIT 1 FOR SHARE");
      finish.commit();

      problem(late.get(10, TimeUnit.SECONDS), 409, "stale-claim")
          .body("detail", containsString("recorded as a late success"));
      assertThat(log.errors()).as("ERROR log records").isEmpty();
    }
    item(id).then().body("state", equalTo("done")).body("externalRef", equalTo("msg_late"));
  }

  private static long first(Connection connection, String sql) throws SQLException {
    try (PreparedStatement statement = connection.prepareStatement(sql);
        ResultSet row = statement.executeQuery()) {
      assertThat(row.next()).as(sql).isTrue();
      return row.getLong(1);
    }
  }

  /** One thread's calls: each step picks a call at random and checks its answer. */
  final class Mix {
    static final List<String> KINDS =
        List.of(
            "enqueue",
            "enqueue:batch",
            "claim",
            "claim-next",
            "claim:batch",
            "heartbeat",
            "intent",
            "release",
            "complete",
            "complete+next",
            "fail",
            "fail+next",
            "items:complete",
            "items:fail",
            "retry",
            "cancel",
            "resolve",
            "items:retry",
            "items:cancel",
            "pause",
            "resume");

    private final String queue;
    private final Instant start;
    private final Map<Integer, List<String>> known;
    private final List<Claim> claims;
    private final Random random;
    private final String worker;

    /** This thread's own claims, most recent last: the ones it means to finish. */
    private final List<Claim> mine = new ArrayList<>();

    /**
     * This thread's claims that it failed or released: a complete of one with an externalRef is a
     * late success (the send went out after all), recorded on its attempt.
     */
    private final List<Claim> ended = new ArrayList<>();

    Mix(
        String queue,
        Instant start,
        Map<Integer, List<String>> known,
        List<Claim> claims,
        Random random,
        String worker) {
      this.queue = queue;
      this.start = start;
      this.known = known;
      this.claims = claims;
      this.random = random;
      this.worker = worker;
    }

    void step() {
      int roll = random.nextInt(100);
      if (roll < 5) {
        String key = key();
        Response answer =
            enqueue(
                queue,
                Map.of(
                    "dedupeKey", key, "payload", random.nextInt(10) == 0 ? "other" : payload(key)));
        check("enqueue", answer, Set.of(200, 201, 422));
        learn(answer, "id");
      } else if (roll < 10) {
        List<Map<String, Object>> entries = new ArrayList<>();
        for (int n = 1 + random.nextInt(8); n > 0; n--) {
          String key = key();
          entries.add(Map.of("dedupeKey", key, "payload", payload(key)));
        }
        Response answer =
            json().body(Map.of("items", entries)).post("/v1/queues/{q}/items:batch", queue);
        if (check("enqueue:batch", answer, Set.of(200))) {
          entryStatuses("enqueue:batch", answer, Set.of(200, 201, 422));
          for (String id : answer.<List<String>>path("results.item.id")) {
            learn(id);
          }
        }
      } else if (roll < 16) {
        Response answer = claim(id(), Map.of("worker", worker, "leaseSeconds", lease()));
        if (check("claim", answer, Set.of(200, 204))) {
          claimed(answer.path("id"), answer.path("claimToken"));
        }
      } else if (roll < 23) {
        Response answer = claimNext(queue, Map.of("worker", worker, "leaseSeconds", lease()));
        if (check("claim-next", answer, Set.of(200, 204))) {
          claimed(answer.path("id"), answer.path("claimToken"));
        }
      } else if (roll < 28) {
        Response answer =
            json()
                .body(
                    Map.of("worker", worker, "leaseSeconds", lease(), "max", 1 + random.nextInt(5)))
                .post("/v1/queues/{q}/claim:batch", queue);
        if (check("claim:batch", answer, Set.of(200, 204))) {
          List<String> claimedIds = answer.path("items.id");
          List<String> tokens = answer.path("items.claimToken");
          for (int i = 0; i < claimedIds.size(); i++) {
            claimed(claimedIds.get(i), tokens.get(i));
          }
        }
      } else if (roll < 30) {
        Claim c = claimToReport();
        check(
            "heartbeat",
            heartbeat(c.id(), Map.of("claimToken", c.token(), "leaseSeconds", lease())),
            Set.of(200, 409));
      } else if (roll < 33) {
        Claim c = claimToReport();
        check(
            "intent",
            json().body(Map.of("claimToken", c.token())).post("/v1/items/{id}/intent", c.id()),
            Set.of(200, 409));
      } else if (roll < 38) {
        Claim c = claimToReport();
        if (check("release", release(c.id(), Map.of("claimToken", c.token())), Set.of(200, 409))) {
          ended.add(c);
        }
      } else if (roll < 50) {
        Claim c = claimToReport();
        Map<String, Object> body = new HashMap<>();
        body.put("claimToken", c.token());
        if (random.nextInt(4) > 0) {
          body.put("externalRef", "ref-" + random.nextInt(3));
        }
        boolean next = random.nextBoolean();
        if (next) {
          body.put("next", Map.of("worker", worker, "leaseSeconds", lease()));
        }
        Response answer = complete(c.id(), body);
        if (check(next ? "complete+next" : "complete", answer, Set.of(200, 409)) && next) {
          claimed(answer.path("next.id"), answer.path("next.claimToken"));
        }
      } else if (roll < 58) {
        Claim c = claimToReport();
        Map<String, Object> body = failure(c);
        boolean next = random.nextInt(3) == 0;
        if (next) {
          body.put("next", Map.of("worker", worker, "leaseSeconds", lease()));
        }
        Response answer = fail(c.id(), body);
        if (check(next ? "fail+next" : "fail", answer, Set.of(200, 409))) {
          ended.add(c);
          if (next) {
            claimed(answer.path("next.id"), answer.path("next.claimToken"));
          }
        }
      } else if (roll < 71) {
        List<Map<String, Object>> entries = new ArrayList<>();
        for (Claim c : batchOfClaims()) {
          Map<String, Object> entry = new HashMap<>();
          entry.put("id", c.id());
          entry.put("claimToken", c.token());
          if (random.nextInt(4) > 0) {
            entry.put("externalRef", "ref-" + random.nextInt(3));
          }
          entries.add(entry);
        }
        Response answer = json().body(Map.of("items", entries)).post("/v1/items:complete");
        if (check("items:complete", answer, Set.of(200))) {
          entryStatuses("items:complete", answer, Set.of(200, 409));
        }
      } else if (roll < 79) {
        List<Map<String, Object>> entries = new ArrayList<>();
        List<Claim> batch = batchOfClaims();
        for (Claim c : batch) {
          Map<String, Object> entry = failure(c);
          entry.put("id", c.id());
          entries.add(entry);
        }
        Response answer = json().body(Map.of("items", entries)).post("/v1/items:fail");
        if (check("items:fail", answer, Set.of(200))) {
          entryStatuses("items:fail", answer, Set.of(200, 409));
          List<Integer> statuses = answer.path("results.status");
          for (int i = 0; i < statuses.size(); i++) {
            if (statuses.get(i) == 200) {
              ended.add(batch.get(i));
            }
          }
        }
      } else if (roll < 84) {
        check("retry", given().post("/v1/items/{id}/retry", id()), Set.of(200, 409));
      } else if (roll < 86) {
        check("cancel", given().post("/v1/items/{id}/cancel", id()), Set.of(200, 409));
      } else if (roll < 88) {
        Map<String, Object> body = new HashMap<>();
        if (random.nextBoolean()) {
          body.put("externalRef", "resolved-" + random.nextInt(3));
        }
        check("resolve", json().body(body).post("/v1/items/{id}/resolve", id()), Set.of(200, 409));
      } else if (roll < 92) {
        check(
            "items:retry",
            json()
                .body(bulk(random.nextBoolean() ? "failed" : "cancelled"))
                .post("/v1/items:retry"),
            Set.of(200));
      } else if (roll < 95) {
        check(
            "items:cancel",
            json()
                .body(bulk(random.nextInt(3) == 0 ? "pending" : "failed"))
                .post("/v1/items:cancel"),
            Set.of(200));
      } else if (roll < 97) {
        check("pause", given().post("/v1/queues/{q}/pause", queue), Set.of(200));
      } else {
        check("resume", given().post("/v1/queues/{q}/resume", queue), Set.of(200));
      }
    }

    private int round() {
      long round = Duration.between(start, Instant.now()).toMillis() / ROUND.toMillis();
      return (int) Math.min(round, ROUNDS - 1);
    }

    /** A key of this round, now and then of the one before. */
    private String key() {
      int round = round();
      return ConcurrentMixTest.key(
          round > 0 && random.nextInt(10) == 0 ? round - 1 : round, random.nextInt(ITEMS));
    }

    /** The id of an item of this round, now and then of an earlier one. */
    private String id() {
      for (int round = round(); round >= 0; round--) {
        List<String> ids = known.get(round);
        synchronized (ids) {
          if (!ids.isEmpty() && (round == 0 || random.nextInt(6) > 0)) {
            return ids.get(random.nextInt(ids.size()));
          }
        }
      }
      throw new IllegalStateException("no item known");
    }

    private void learn(Response answer, String path) {
      if (answer.statusCode() < 300) {
        learn(answer.<String>path(path));
      }
    }

    private void learn(String id) {
      List<String> ids = known.get(round());
      synchronized (ids) {
        if (id != null && known.values().stream().noneMatch(list -> list.contains(id))) {
          ids.add(id);
        }
      }
    }

    /** Mostly short leases, so that the reaper takes some claims back during the mix. */
    private int lease() {
      return random.nextInt(4) == 0 ? 1 + random.nextInt(2) : 30;
    }

    private void claimed(String id, String token) {
      if (id == null || token == null) {
        return;
      }
      Claim c = new Claim(id, token);
      mine.add(c);
      claims.add(c);
    }

    /**
     * Mostly this thread's latest claim (taken off its list, unless the call is to be repeated), or
     * one it failed or released; else a recent claim of any thread, current or stale; or a token
     * never issued.
     */
    private Claim claimToReport() {
      int pick = random.nextInt(20);
      if (!mine.isEmpty() && pick < 7) {
        int last = mine.size() - 1;
        return random.nextInt(3) == 0 ? mine.get(last) : mine.remove(last);
      }
      if (!ended.isEmpty() && pick < 13) {
        return ended.remove(random.nextInt(ended.size()));
      }
      synchronized (claims) {
        if (!claims.isEmpty() && pick < 19) {
          // Mostly recent ones: an old claim has usually been reported on already.
          int size = claims.size();
          return claims.get(size - 1 - random.nextInt(Math.min(size, 40)));
        }
      }
      return new Claim(id(), "never-issued-" + random.nextInt(1000));
    }

    /** A few claims in random order, with stale ones among them and one of them twice. */
    private List<Claim> batchOfClaims() {
      List<Claim> batch = new ArrayList<>();
      for (int n = 2 + random.nextInt(7); n > 0; n--) {
        batch.add(claimToReport());
      }
      if (random.nextBoolean()) {
        batch.add(batch.get(random.nextInt(batch.size())));
      }
      Collections.shuffle(batch, random);
      return batch;
    }

    private Map<String, Object> failure(Claim c) {
      Map<String, Object> body = new HashMap<>();
      body.put("claimToken", c.token());
      body.put("error", "boom " + random.nextInt(3));
      body.put("retryable", random.nextInt(4) > 0);
      body.put("sent", random.nextInt(3) == 0 ? "unknown" : "no");
      body.put("retryAfterSeconds", random.nextInt(3) == 0 ? 1 : 0);
      return body;
    }

    private Map<String, Object> bulk(String state) {
      Map<String, Object> body = new LinkedHashMap<>();
      body.put("queue", queue);
      body.put("state", state);
      body.put("limit", 1 + random.nextInt(10));
      if (random.nextInt(4) == 0) {
        body.put("dryRun", true);
      }
      return body;
    }

    /** Counts the call; true when it answered as documented, else records the answer. */
    private boolean check(String kind, Response answer, Set<Integer> documented) {
      calls.merge(kind, 1, Integer::sum);
      answers.merge(kind + " " + answer.statusCode(), 1, Integer::sum);
      if (documented.contains(answer.statusCode())) {
        return answer.statusCode() == 200 || answer.statusCode() == 201;
      }
      wrong.add(kind + " " + answer.statusCode() + " " + answer.asString());
      return false;
    }

    private void entryStatuses(String kind, Response answer, Set<Integer> documented) {
      List<Integer> statuses = answer.path("results.status");
      for (int i = 0; i < statuses.size(); i++) {
        answers.merge(kind + " entry " + statuses.get(i), 1, Integer::sum);
        if (!documented.contains(statuses.get(i))) {
          wrong.add(kind + " entry " + i + " " + statuses.get(i) + " " + answer.asString());
        }
      }
    }
  }

  private static String key(int round, int i) {
    return "r" + round + "-k" + i;
  }

  private static Map<String, Object> payload(String key) {
    return Map.of("key", key);
  }
}
