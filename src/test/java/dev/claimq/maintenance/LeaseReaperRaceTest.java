package dev.claimq.maintenance;

import static dev.claimq.Api.claim;
import static dev.claimq.Api.complete;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.json;
import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;

import dev.claimq.AsAdmin;
import dev.claimq.Race;
import dev.claimq.queue.Outcome;
import dev.claimq.queue.WorkService;
import dev.claimq.store.Attempt;
import dev.claimq.store.Item;
import dev.claimq.store.ItemRepository;
import dev.claimq.store.ItemState;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The reaper racing workers and other instances' reapers (River #1302): a complete that commits
 * first must win, an expired claim is released once, and a finished item is never overwritten. The
 * scheduled reaper is off here so the tests decide exactly when reaping happens. The reaps run as
 * the reaper runs them, each statement in autocommit, not inside a test's transaction.
 */
@QuarkusTest
@TestProfile(LeaseReaperRaceTest.ReaperOff.class)
class LeaseReaperRaceTest extends AsAdmin {

  public static class ReaperOff implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      return Map.of("claimq.reaper.interval", "off");
    }
  }

  @Inject ItemRepository items;
  @Inject WorkService work;
  @Inject EntityManager entityManager;

  @Test
  void complete_racing_the_reaper_ends_done_or_released_never_both() throws Exception {
    String queue = uniqueQueue("reaprace");
    int count = 200;
    Map<String, String> tokens = claimAll(queue, count);
    expireLeases(queue);

    Map<String, Integer> completeStatus = new ConcurrentHashMap<>();
    AtomicInteger released = new AtomicInteger();
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(6);
    try {
      List<Future<?>> running = new ArrayList<>();
      List<List<String>> slices = slices(new ArrayList<>(tokens.keySet()), 4);
      for (List<String> slice : slices) {
        running.add(
            pool.submit(
                () -> {
                  start.await();
                  for (String id : slice) {
                    completeStatus.put(
                        id, complete(id, Map.of("claimToken", tokens.get(id))).statusCode());
                  }
                  return null;
                }));
      }
      for (int reaper = 0; reaper < 2; reaper++) {
        running.add(
            pool.submit(
                () -> {
                  start.await();
                  for (int round = 0; round < 50; round++) {
                    released.addAndGet(released(items.reapExpiredLeases(7)));
                  }
                  return null;
                }));
      }
      start.countDown();
      for (Future<?> task : running) {
        task.get();
      }
    } finally {
      pool.shutdownNow();
    }
    released.addAndGet(released(items.reapExpiredLeases(1000)));

    int done = 0;
    for (String id : tokens.keySet()) {
      Item item = QuarkusTransaction.requiringNew().call(() -> items.findById(Long.parseLong(id)));
      List<Attempt> attempts =
          QuarkusTransaction.requiringNew().call(() -> items.attempts(Long.parseLong(id)));
      assertThat(attempts).hasSize(1);
      int status = completeStatus.get(id);
      if (status == 200) {
        done++;
        assertThat(item.state).as("item %s completed", id).isEqualTo(ItemState.DONE);
        assertThat(attempts.get(0).outcome).isEqualTo("done");
      } else {
        assertThat(status).as("complete of item %s", id).isEqualTo(409);
        assertThat(item.state).as("item %s released", id).isEqualTo(ItemState.PENDING);
        assertThat(attempts.get(0).outcome).isEqualTo("lease_expired");
      }
    }
    assertThat(done + released.get()).isEqualTo(count);
  }

  @Test
  void heartbeats_releases_and_fails_racing_the_reaper_each_leave_one_outcome() throws Exception {
    // A heartbeat the reaper overrides would tell a worker to go on sending an item that is due
    // again; a release or fail it overrides would count the attempt twice, or not at all. As for
    // intents, the raced claims are the last the reaper locks, so that reports commit after its
    // statement began and before it gets to their items, as well as before and after it.
    int rounds = 4;
    int expired = 500;
    int raced = 48;
    int reporters = 6;
    Map<String, Integer> outcomes = new java.util.TreeMap<>();
    for (int round = 0; round < rounds; round++) {
      String queue = uniqueQueue("reportreap");
      List<Long> ids = new ArrayList<>();
      Map<Long, String> tokens = claimInBatches(queue, expired, ids);
      expireLeasesInIdOrder(queue);
      List<Long> last = ids.subList(expired - raced, expired);
      // The reaper's one statement is quicker than the reports' requests: it starts once the
      // first report has been answered, and meets the others on their way, from the last claim
      // it locks towards the first.
      CountDownLatch reporting = new CountDownLatch(1);
      List<Object> answers =
          Race.of(
              reporters + 1,
              thread -> {
                if (thread == 0) {
                  try {
                    reporting.await(10, java.util.concurrent.TimeUnit.SECONDS);
                  } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                  }
                  return released(items.reapExpiredLeases(1000));
                }
                Map<Long, Integer> statuses = new HashMap<>();
                for (int i = raced - thread; i >= 0; i -= reporters) {
                  long id = last.get(i);
                  statuses.put(id, report(id, tokens.get(id)).statusCode());
                  reporting.countDown();
                }
                return statuses;
              });
      Map<Long, Integer> reported = new HashMap<>();
      for (Object answer : answers.subList(1, answers.size())) {
        @SuppressWarnings("unchecked")
        Map<Long, Integer> some = (Map<Long, Integer>) answer;
        reported.putAll(some);
      }
      assertThat(reported).hasSize(raced);
      int released = (Integer) answers.get(0);

      int won = 0;
      for (long id : last) {
        Item item = QuarkusTransaction.requiringNew().call(() -> items.findById(id));
        List<Attempt> attempts = QuarkusTransaction.requiringNew().call(() -> items.attempts(id));
        assertThat(attempts).as("item %s's attempts", id).hasSize(1);
        Attempt attempt = attempts.get(0);
        int status = reported.get(id);
        String report = report(id);
        outcomes.merge(report + " " + status, 1, Integer::sum);
        if (status == 409) {
          // The reaper came first: the report found the claim gone and changed nothing.
          assertThat(item.state).as("item %s, reaped", id).isEqualTo(ItemState.PENDING);
          assertThat(item.attempts).as("item %s, reaped", id).isEqualTo(1);
          assertThat(item.releases).as("item %s, reaped", id).isZero();
          assertThat(item.claimToken).as("item %s, reaped", id).isNull();
          assertThat(attempt.outcome).as("item %s, reaped", id).isEqualTo("lease_expired");
          continue;
        }
        assertThat(status).as("%s of item %s", report, id).isEqualTo(200);
        won++;
        switch (report) {
          case "heartbeat" -> {
            assertThat(item.state).as("item %s, heartbeat", id).isEqualTo(ItemState.SENDING);
            assertThat(item.claimToken).isEqualTo(tokens.get(id));
            assertThat(item.leaseExpiresAt).isAfter(java.time.Instant.now());
            assertThat(attempt.finishedAt).as("item %s's attempt", id).isNull();
          }
          case "release" -> {
            assertThat(item.state).as("item %s, released", id).isEqualTo(ItemState.PENDING);
            assertThat(item.attempts).as("item %s, released", id).isZero();
            assertThat(item.releases).as("item %s, released", id).isEqualTo(1);
            // The token stays, so that a repeat of the release is known; no reaper's reason.
            assertThat(item.claimToken).as("item %s, released", id).isEqualTo(tokens.get(id));
            assertThat(item.lastError).as("item %s, released", id).isNull();
            assertThat(attempt.outcome).as("item %s, released", id).isEqualTo("released");
          }
          default -> {
            assertThat(item.state).as("item %s, failed", id).isEqualTo(ItemState.PENDING);
            assertThat(item.attempts).as("item %s, failed", id).isEqualTo(1);
            assertThat(item.releases).as("item %s, failed", id).isZero();
            assertThat(item.claimToken).as("item %s, failed", id).isEqualTo(tokens.get(id));
            assertThat(item.lastError).as("item %s, failed", id).isEqualTo("boom");
            assertThat(attempt.outcome).as("item %s, failed", id).isEqualTo("retry");
            assertThat(attempt.error).as("item %s, failed", id).isEqualTo("boom");
          }
        }
      }
      // Every expired claim ended once: by its report, or by the reaper (now, or on its next run
      // for what it stepped past while a report held the item).
      assertThat(won + released + released(items.reapExpiredLeases(1000)))
          .as("round %d: reports that won plus claims reaped", round)
          .isEqualTo(expired);
    }
    System.out.printf("reports racing the reaper: %s%n", outcomes);
  }

  /** Which report the test sends for an item, by its id: a third of each. */
  private static String report(long id) {
    return List.of("heartbeat", "release", "fail").get((int) (id % 3));
  }

  private static Response report(long id, String token) {
    String item = Long.toString(id);
    return switch (report(id)) {
      case "heartbeat" -> dev.claimq.Api.heartbeat(item, Map.of("claimToken", token));
      case "release" -> dev.claimq.Api.release(item, Map.of("claimToken", token));
      default ->
          dev.claimq.Api.fail(
              item, Map.of("claimToken", token, "error", "boom", "retryAfterSeconds", 0));
    };
  }

  @Test
  void concurrent_reapers_release_each_expired_claim_exactly_once() throws Exception {
    String queue = uniqueQueue("reapers");
    int count = 300;
    claimAll(queue, count);
    expireLeases(queue);

    AtomicInteger released = new AtomicInteger();
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<?>> reapers = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        reapers.add(
            pool.submit(
                () -> {
                  start.await();
                  int batch;
                  do {
                    batch = released(items.reapExpiredLeases(25));
                    released.addAndGet(batch);
                  } while (batch > 0);
                  return null;
                }));
      }
      start.countDown();
      for (Future<?> reaper : reapers) {
        reaper.get();
      }
    } finally {
      pool.shutdownNow();
    }

    assertThat(released.get()).isEqualTo(count);
    Number closed =
        QuarkusTransaction.requiringNew()
            .call(
                () ->
                    (Number)
                        entityManager
                            .createNativeQuery(
                                "SELECT count(*) FROM attempt a JOIN item i ON i.id = a.item_id"
                                    + " WHERE i.queue = :queue AND a.outcome = 'lease_expired'")
                            .setParameter("queue", queue)
                            .getSingleResult());
    assertThat(closed.intValue()).isEqualTo(count);
  }

  @Test
  void an_intent_racing_the_reaper_under_hold_is_refused_or_seen_and_held_for_a_human()
      throws Exception {
    // An intent the reaper's statement cannot see yet (committed after the statement began, before
    // it locked the item) must still hold the item: its 200 told the worker to send, and under
    // hold an item that may have sent is never sent again by itself.
    int rounds = 3;
    int expired = 300;
    int raced = 30;
    int intentThreads = 3;
    int accepted = 0;
    List<String> resent = new ArrayList<>();
    for (int round = 0; round < rounds; round++) {
      String queue = uniqueQueue("intentreap");
      json()
          .body(Map.of("onUnknownOutcome", "hold"))
          .put("/v1/queues/{queue}/policy", queue)
          .then()
          .statusCode(200);
      // The reaper locks the expired claims in lease order: the raced ones, last, meet their
      // intents while it is still locking the ones before them.
      List<Long> ids = new ArrayList<>();
      Map<Long, String> tokens = claimInBatches(queue, expired, ids);
      expireLeasesInIdOrder(queue);
      List<Long> last = ids.subList(expired - raced, expired);
      List<Object> answers =
          Race.of(
              intentThreads + 1,
              thread -> {
                if (thread == 0) {
                  return released(items.reapExpiredLeases(1000));
                }
                Map<Long, Outcome> intents = new HashMap<>();
                for (int i = raced - thread; i >= 0; i -= intentThreads) {
                  long id = last.get(i);
                  intents.put(id, work.intent(id, tokens.get(id)).outcome());
                }
                return intents;
              });
      Map<Long, Outcome> intents = new HashMap<>();
      for (Object answer : answers.subList(1, answers.size())) {
        @SuppressWarnings("unchecked")
        Map<Long, Outcome> some = (Map<Long, Outcome>) answer;
        intents.putAll(some);
      }
      // What it stepped past, locked by an intent in flight, the next run releases.
      assertThat((Integer) answers.get(0) + released(items.reapExpiredLeases(1000)))
          .isEqualTo(expired);

      for (long id : last) {
        Item item = QuarkusTransaction.requiringNew().call(() -> items.findById(id));
        List<Attempt> attempts = QuarkusTransaction.requiringNew().call(() -> items.attempts(id));
        assertThat(attempts).hasSize(1);
        Attempt attempt = attempts.get(0);
        assertThat(attempt.outcome).isEqualTo("lease_expired");
        Outcome intent = intents.get(id);
        if (intent == Outcome.CHANGED) {
          accepted++;
          assertThat(attempt.intentAt).as("item %s's intent", id).isNotNull();
          if (item.state != ItemState.FAILED
              || !item.lastError.startsWith("outcome unknown: lease expired")) {
            resent.add(
                "item "
                    + id
                    + ": intent at "
                    + attempt.intentAt
                    + ", reaped at "
                    + attempt.finishedAt
                    + ", "
                    + item.state);
          }
        } else {
          assertThat(intent).as("item %s's intent", id).isEqualTo(Outcome.STALE_CLAIM);
          assertThat(attempt.intentAt).as("item %s's intent", id).isNull();
          assertThat(item.state).as("item %s, its intent refused", id).isEqualTo(ItemState.PENDING);
        }
      }
    }
    assertThat(resent)
        .as("of %d intents accepted, items released to be sent again", accepted)
        .isEmpty();
  }

  /** Enqueues and claims count items (lease 600 s); their ids in id order, each with its token. */
  private static Map<Long, String> claimInBatches(String queue, int count, List<Long> ids) {
    List<Map<String, Object>> entries = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      entries.add(Map.of("dedupeKey", "k" + i, "payload", i));
    }
    json()
        .body(Map.of("items", entries))
        .post("/v1/queues/" + queue + "/items:batch")
        .then()
        .statusCode(200);
    Map<Long, String> tokens = new HashMap<>();
    while (tokens.size() < count) {
      Response claimed =
          json()
              .body(Map.of("worker", "w", "max", 100, "leaseSeconds", 600))
              .post("/v1/queues/" + queue + "/claim:batch");
      claimed.then().statusCode(200);
      List<String> claimedIds = claimed.path("items.id");
      List<String> claimTokens = claimed.path("items.claimToken");
      for (int i = 0; i < claimedIds.size(); i++) {
        tokens.put(Long.parseLong(claimedIds.get(i)), claimTokens.get(i));
      }
    }
    ids.addAll(new TreeSet<>(tokens.keySet()));
    return tokens;
  }

  /** As expireLeases, each item a millisecond later than the one before, so reaped in id order. */
  private void expireLeasesInIdOrder(String queue) {
    QuarkusTransaction.requiringNew()
        .run(
            () ->
                entityManager
                    .createNativeQuery(
                        "UPDATE item SET lease_expires_at = now() - interval '1 hour'"
                            + " + id * interval '1 millisecond'"
                            + " WHERE queue = :queue AND state = 'sending'")
                    .setParameter("queue", queue)
                    .executeUpdate());
  }

  @Test
  void a_lease_that_has_not_expired_is_left_alone() {
    String queue = uniqueQueue("notexpired");
    String id = enqueued(queue, "k", 1);
    claim(id, Map.of("leaseSeconds", 600)).then().statusCode(200);
    QuarkusTransaction.requiringNew().run(() -> items.reapExpiredLeases(1000));
    Item item = QuarkusTransaction.requiringNew().call(() -> items.findById(Long.parseLong(id)));
    assertThat(item.state).isEqualTo(ItemState.SENDING);
  }

  private static Map<String, String> claimAll(String queue, int count) {
    Map<String, String> tokens = new ConcurrentHashMap<>();
    for (int i = 0; i < count; i++) {
      String id = enqueued(queue, "k" + i, i);
      tokens.put(id, claim(id, Map.of("worker", "w", "leaseSeconds", 600)).path("claimToken"));
    }
    return tokens;
  }

  /** Moves the queue's leases into the past, as if the workers had stalled. */
  private void expireLeases(String queue) {
    QuarkusTransaction.requiringNew()
        .run(
            () ->
                entityManager
                    .createNativeQuery(
                        "UPDATE item SET lease_expires_at = now() - interval '1 second'"
                            + " WHERE queue = :queue AND state = 'sending'")
                    .setParameter("queue", queue)
                    .executeUpdate());
  }

  private static <T> List<List<T>> slices(List<T> all, int parts) {
    List<List<T>> slices = new ArrayList<>();
    for (int p = 0; p < parts; p++) {
      List<T> slice = new ArrayList<>();
      for (int i = p; i < all.size(); i += parts) {
        slice.add(all.get(i));
      }
      slices.add(slice);
    }
    return slices;
  }

  /** How many claims one reaper batch released, over all queues. */
  private static int released(java.util.Map<String, Integer> byQueue) {
    return byQueue.values().stream().mapToInt(Integer::intValue).sum();
  }
}
