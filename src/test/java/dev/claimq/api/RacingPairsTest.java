package dev.claimq.api;

import static dev.claimq.Api.cancel;
import static dev.claimq.Api.claim;
import static dev.claimq.Api.claimNext;
import static dev.claimq.Api.claimedNext;
import static dev.claimq.Api.complete;
import static dev.claimq.Api.enqueue;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.fail;
import static dev.claimq.Api.heartbeat;
import static dev.claimq.Api.item;
import static dev.claimq.Api.json;
import static dev.claimq.Api.problem;
import static dev.claimq.Api.release;
import static dev.claimq.Api.retry;
import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;

import dev.claimq.AsAdmin;
import dev.claimq.LogCapture;
import dev.claimq.Race;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;

/**
 * Two different operations on the same item at the same moment, on real threads, many times: each
 * pair leaves exactly the outcome one of them alone would have left, answers only what the README
 * documents, and logs no ERROR.
 */
@QuarkusTest
class RacingPairsTest extends AsAdmin {

  @Test
  void a_complete_with_next_sent_four_times_at_once_claims_one_next_item() throws Exception {
    try (LogCapture log = LogCapture.start(Level.SEVERE)) {
      for (int round = 0; round < 10; round++) {
        Claimed claimed = claimedBeforeASpare("next-replay", round);
        String id = claimed.id();
        String token = claimed.token();
        String spare = claimed.spare();
        Map<String, Object> body =
            Map.of("claimToken", token, "externalRef", "ref", "next", Map.of("worker", "n"));

        List<Response> answers = Race.of(4, thread -> complete(id, body));

        List<String> nexts = new ArrayList<>();
        for (Response answer : answers) {
          answer.then().statusCode(200);
          assertThat(answer.<String>path("state")).isEqualTo("done");
          String next = answer.path("next.id");
          if (next != null) {
            nexts.add(next);
          }
        }
        assertThat(nexts).as("round %d: the next items claimed", round).containsExactly(spare);
        item(spare).then().statusCode(200);
        assertThat(item(spare).<String>path("state")).isEqualTo("sending");
        assertThat(item(spare).<Integer>path("attempts")).isEqualTo(1);
        assertThat(attempts(spare).getList("attempts")).hasSize(1);
        assertThat(attempts(id).getList("attempts.outcome")).containsExactly("done");
      }
      assertThat(log.errors()).isEmpty();
    }
  }

  @Test
  void completes_with_next_and_plain_claims_of_one_queue_take_each_item_exactly_once()
      throws Exception {
    String queue = uniqueQueue("next-vs-claim");
    int count = 40;
    Set<String> all = new HashSet<>();
    for (int i = 0; i < count; i++) {
      all.add(enqueued(queue, "k" + i, i));
    }
    try (LogCapture log = LogCapture.start(Level.SEVERE)) {
      // Even threads chain completes with next; odd ones claim, then complete without next.
      List<List<String>> claimed =
          Race.of(
              6,
              thread -> {
                List<String> mine = new ArrayList<>();
                Response claim = claimNext(queue, Map.of("worker", "w" + thread));
                String id = claim.statusCode() == 200 ? claim.path("id") : null;
                String token = id == null ? null : claim.path("claimToken");
                while (id != null) {
                  mine.add(id);
                  if (thread % 2 == 0) {
                    Response done =
                        complete(
                            id,
                            Map.of("claimToken", token, "next", Map.of("worker", "w" + thread)));
                    done.then().statusCode(200);
                    id = done.path("next.id");
                    token = done.path("next.claimToken");
                  } else {
                    complete(id, Map.of("claimToken", token)).then().statusCode(200);
                    claim = claimNext(queue, Map.of("worker", "w" + thread));
                    assertThat(claim.statusCode()).isIn(200, 204);
                    id = claim.statusCode() == 200 ? claim.path("id") : null;
                    token = id == null ? null : claim.path("claimToken");
                  }
                }
                return mine;
              });
      List<String> every = claimed.stream().flatMap(List::stream).toList();
      assertThat(every).as("no item claimed twice").doesNotHaveDuplicates();
      assertThat(every).containsExactlyInAnyOrderElementsOf(all);
      for (String id : all) {
        assertThat(item(id).<Integer>path("attempts")).as("item %s", id).isEqualTo(1);
        assertThat(attempts(id).getList("attempts.outcome")).containsExactly("done");
      }
      assertThat(log.errors()).isEmpty();
    }
  }

  @Test
  void fail_release_and_complete_of_one_claim_at_once_let_exactly_one_take_effect()
      throws Exception {
    String queue = uniqueQueue("finish-race");
    Map<String, Integer> won = new HashMap<>();
    try (LogCapture log = LogCapture.start(Level.SEVERE)) {
      for (int round = 0; round < 15; round++) {
        String id = enqueued(queue, "k" + round, round);
        String token = claim(id, Map.of("worker", "w")).path("claimToken");

        List<Response> answers =
            Race.of(
                3,
                thread ->
                    switch (thread) {
                      case 0 -> complete(id, Map.of("claimToken", token));
                      case 1 -> fail(id, Map.of("claimToken", token, "error", "boom"));
                      default -> release(id, Map.of("claimToken", token));
                    });

        List<Integer> statuses = answers.stream().map(Response::statusCode).toList();
        assertThat(statuses).as("round %d", round).containsOnlyOnce(200).containsOnly(200, 409);
        for (Response answer : answers) {
          if (answer.statusCode() == 409) {
            assertThat(answer.<String>path("type")).endsWith("stale-claim");
          }
        }
        String winner = List.of("complete", "fail", "release").get(statuses.indexOf(200));
        won.merge(winner, 1, Integer::sum);
        Response now = item(id);
        List<String> outcomes = attempts(id).getList("attempts.outcome");
        switch (winner) {
          case "complete" -> {
            assertThat(now.<String>path("state")).isEqualTo("done");
            assertThat(now.<Integer>path("attempts")).isEqualTo(1);
            assertThat(outcomes).containsExactly("done");
          }
          case "fail" -> {
            assertThat(now.<String>path("state")).isEqualTo("pending");
            assertThat(now.<Integer>path("attempts")).isEqualTo(1);
            assertThat(outcomes).containsExactly("retry");
          }
          default -> {
            assertThat(now.<String>path("state")).isEqualTo("pending");
            assertThat(now.<Integer>path("attempts")).isZero();
            assertThat(outcomes).containsExactly("released");
          }
        }
      }
      assertThat(log.errors()).isEmpty();
    }
    assertThat(won.values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(15);
  }

  @Test
  void a_batch_complete_and_single_completes_of_the_same_claims_finish_each_item_once()
      throws Exception {
    String queue = uniqueQueue("batch-vs-single");
    int count = 30;
    for (int i = 0; i < count; i++) {
      enqueued(queue, "k" + i, i);
    }
    List<Map<String, Object>> claims =
        json()
            .body(Map.of("worker", "w", "max", count))
            .post("/v1/queues/{q}/claim:batch", queue)
            .path("items");
    assertThat(claims).hasSize(count);
    List<Map<String, Object>> entries = new ArrayList<>();
    for (Map<String, Object> c : claims) {
      entries.add(
          Map.of("id", c.get("id"), "claimToken", c.get("claimToken"), "externalRef", "batch"));
    }
    try (LogCapture log = LogCapture.start(Level.SEVERE)) {
      List<Object> answers =
          Race.of(
              3,
              thread -> {
                if (thread == 0) {
                  Response batch =
                      json()
                          .urlEncodingEnabled(false)
                          .body(Map.of("items", entries))
                          .post("/v1/items:complete");
                  batch.then().statusCode(200);
                  return batch.<List<Integer>>path("results.status");
                }
                // Two single completers, from either end.
                List<Integer> statuses = new ArrayList<>(java.util.Collections.nCopies(count, 0));
                for (int n = 0; n < count; n++) {
                  int i = thread == 1 ? n : count - 1 - n;
                  Map<String, Object> c = claims.get(i);
                  statuses.set(
                      i,
                      complete(
                              (String) c.get("id"),
                              Map.of("claimToken", c.get("claimToken"), "externalRef", "single"))
                          .statusCode());
                }
                return statuses;
              });
      @SuppressWarnings("unchecked")
      List<Integer> batch = (List<Integer>) answers.get(0);
      for (int i = 0; i < count; i++) {
        String id = (String) claims.get(i).get("id");
        List<Integer> singles = new ArrayList<>();
        for (int t = 1; t < 3; t++) {
          @SuppressWarnings("unchecked")
          List<Integer> statuses = (List<Integer>) answers.get(t);
          singles.add(statuses.get(i));
        }
        Response now = item(id);
        String ref = now.path("externalRef");
        // The first report stands; a repeat of it is a replay (200), the other one is refused.
        if (ref.equals("batch")) {
          assertThat(batch.get(i)).as("item %s's batch entry", id).isEqualTo(200);
          assertThat(singles).as("item %s's single completes", id).containsOnly(409);
        } else {
          assertThat(ref).isEqualTo("single");
          assertThat(batch.get(i)).as("item %s's batch entry", id).isEqualTo(409);
          assertThat(singles).as("item %s's single completes", id).containsOnly(200);
        }
        assertThat(now.<String>path("state")).isEqualTo("done");
        assertThat(now.<Integer>path("attempts")).isEqualTo(1);
        assertThat(attempts(id).getList("attempts.outcome")).containsExactly("done");
      }
      assertThat(log.errors()).isEmpty();
    }
  }

  @Test
  void a_fail_with_next_and_batch_finishes_of_its_claim_at_once_finish_it_once_and_claim_once()
      throws Exception {
    // Only a fail that takes effect may claim the queue's next item: a fail with next that lost to
    // a batch entry must not hand its worker the spare item. The batch complete brings no
    // externalRef: after the fail it would be a late success, which finishes the item too.
    List<String> finishes = List.of("fail-next", "batch-complete", "batch-fail");
    Map<String, Integer> won = new HashMap<>();
    try (LogCapture log = LogCapture.start(Level.SEVERE)) {
      for (int round = 0; round < 20; round++) {
        Claimed claimed = claimedBeforeASpare("fail-next-vs-batch", round);
        String id = claimed.id();
        String token = claimed.token();
        String spare = claimed.spare();
        Map<String, Object> failNext = new HashMap<>();
        failNext.put("claimToken", token);
        failNext.put("error", "single");
        // Due again only in a minute: the next claim cannot take the item back.
        failNext.put("retryAfterSeconds", 60);
        failNext.put("next", Map.of("worker", "after-fail"));

        List<Response> answers =
            Race.of(
                3,
                thread ->
                    switch (thread) {
                      case 0 -> fail(id, failNext);
                      case 1 -> batchFinish("complete", Map.of("id", id, "claimToken", token));
                      default -> batchFinish("fail", failForGoodEntry(id, token));
                    });

        List<Integer> statuses = new ArrayList<>(List.of(answers.get(0).statusCode()));
        for (Response batch : answers.subList(1, 3)) {
          batch.then().statusCode(200);
          statuses.add(batch.path("results[0].status"));
        }
        assertThat(statuses).as("round %d", round).containsOnlyOnce(200).containsOnly(200, 409);
        String winner = finishes.get(statuses.indexOf(200));
        won.merge(winner, 1, Integer::sum);
        Response now = item(id);
        assertThat(now.<Integer>path("attempts")).isEqualTo(1);
        List<String> outcomes = attempts(id).getList("attempts.outcome");
        Response next = item(spare);
        List<Object> spareTries = attempts(spare).getList("attempts");
        switch (winner) {
          case "fail-next" -> {
            assertThat(now.<String>path("state")).isEqualTo("pending");
            assertThat(now.<String>path("lastError")).isEqualTo("single");
            assertThat(outcomes).as("round %d", round).containsExactly("retry");
            assertThat(answers.get(0).<String>path("next.id")).isEqualTo(spare);
            assertThat(next.<String>path("state")).isEqualTo("sending");
            assertThat(next.<String>path("claimedBy")).isEqualTo("after-fail");
            assertThat(spareTries).as("round %d", round).hasSize(1);
          }
          case "batch-complete" -> {
            assertThat(now.<String>path("state")).isEqualTo("done");
            assertThat(outcomes).as("round %d", round).containsExactly("done");
          }
          default -> {
            assertThat(now.<String>path("state")).isEqualTo("failed");
            assertThat(now.<String>path("lastError")).isEqualTo("batch");
            assertThat(outcomes).as("round %d", round).containsExactly("failed");
          }
        }
        if (!winner.equals("fail-next")) {
          // Stale after a complete; after the batch's fail, another report of the same claim.
          problem(
              answers.get(0),
              409,
              winner.equals("batch-complete") ? "stale-claim" : "different-report");
          assertThat(next.<String>path("state")).as("round %d", round).isEqualTo("pending");
          assertThat(spareTries).as("round %d", round).isEmpty();
        }
      }
      assertThat(log.errors()).isEmpty();
    }
    System.out.printf("a fail with next vs batch finishes, winners: %s%n", won);
  }

  @Test
  void a_complete_with_next_that_loses_to_a_fail_is_a_late_success_that_claims_nothing()
      throws Exception {
    // Whoever wins, the send happened: the complete's reference ends on the item. But only a
    // complete that finished the claim itself may claim the queue's next item; one that came
    // after a fail is a late success, recorded, and its worker gets no next item.
    List<String> finishes = List.of("complete-next", "fail", "batch-fail");
    Map<String, Integer> won = new HashMap<>();
    try (LogCapture log = LogCapture.start(Level.SEVERE)) {
      for (int round = 0; round < 20; round++) {
        Claimed claimed = claimedBeforeASpare("complete-next-vs-fail", round);
        String id = claimed.id();
        String token = claimed.token();

        List<Response> answers =
            Race.of(
                3,
                thread ->
                    switch (thread) {
                      case 0 ->
                          complete(
                              id,
                              Map.of(
                                  "claimToken",
                                  token,
                                  "externalRef",
                                  "sent",
                                  "next",
                                  Map.of("worker", "after-complete")));
                      // Due again only in a minute, were it not for the late success.
                      case 1 ->
                          fail(
                              id,
                              Map.of(
                                  "claimToken", token, "error", "single", "retryAfterSeconds", 60));
                      default -> batchFinish("fail", failForGoodEntry(id, token));
                    });

        List<Integer> statuses =
            new ArrayList<>(List.of(answers.get(0).statusCode(), answers.get(1).statusCode()));
        answers.get(2).then().statusCode(200);
        statuses.add(answers.get(2).path("results[0].status"));
        assertThat(statuses).as("round %d", round).containsOnlyOnce(200).containsOnly(200, 409);
        String winner = finishes.get(statuses.indexOf(200));
        won.merge(winner, 1, Integer::sum);
        Response now = item(id);
        assertThat(now.<String>path("state")).as("round %d", round).isEqualTo("done");
        assertThat(now.<String>path("externalRef")).as("round %d", round).isEqualTo("sent");
        assertThat(now.<Integer>path("attempts")).isEqualTo(1);
        assertThat(now.<Integer>path("duplicateSends")).isZero();
        List<Map<String, Object>> tries = attempts(id).getList("attempts");
        assertThat(tries).as("round %d", round).hasSize(1);
        Response next = item(claimed.spare());
        List<Object> spareTries = attempts(claimed.spare()).getList("attempts");
        if (winner.equals("complete-next")) {
          assertThat(tries.get(0)).containsEntry("outcome", "done");
          assertThat(answers.get(0).<String>path("next.id")).isEqualTo(claimed.spare());
          assertThat(next.<String>path("state")).isEqualTo("sending");
          assertThat(next.<String>path("claimedBy")).isEqualTo("after-complete");
          assertThat(spareTries).as("round %d", round).hasSize(1);
          problem(answers.get(1), 409, "stale-claim");
        } else {
          assertThat(tries.get(0))
              .as("round %d", round)
              .containsEntry("outcome", winner.equals("fail") ? "retry" : "failed");
          assertThat(attempts(id).getString("attempts[0].lateSuccess.externalRef"))
              .isEqualTo("sent");
          problem(answers.get(0), 409, "stale-claim")
              .body("detail", org.hamcrest.Matchers.containsString("recorded as a late success"));
          assertThat(next.<String>path("state")).as("round %d", round).isEqualTo("pending");
          assertThat(spareTries).as("round %d", round).isEmpty();
          if (winner.equals("batch-fail")) {
            // Another report of the failed claim; or stale, once the late success made it done.
            assertThat(answers.get(1).<String>path("type"))
                .as("round %d", round)
                .matches(".*/(different-report|stale-claim)");
          }
        }
      }
      assertThat(log.errors()).isEmpty();
    }
    System.out.printf("a complete with next vs fails, winners: %s%n", won);
  }

  @Test
  void single_and_batch_enqueues_of_one_key_from_sixteen_threads_make_one_item() throws Exception {
    try (LogCapture log = LogCapture.start(Level.SEVERE)) {
      for (int round = 0; round < 6; round++) {
        String queue = uniqueQueue("enqueue-mix");
        Map<String, Object> entry = Map.of("dedupeKey", "k", "payload", Map.of("n", 1));
        List<Map<String, Object>> batch =
            List.of(Map.of("dedupeKey", "other-" + round, "payload", 2), entry);

        // Even threads enqueue the key alone, odd ones in a batch after another key.
        List<Integer> statuses = new ArrayList<>();
        List<String> ids = new ArrayList<>();
        for (Response answer :
            Race.of(
                16,
                thread ->
                    thread % 2 == 0
                        ? enqueue(queue, entry)
                        : json()
                            .urlEncodingEnabled(false)
                            .body(Map.of("items", batch))
                            .post("/v1/queues/" + queue + "/items:batch"))) {
          if (answer.path("results") != null) {
            answer.then().statusCode(200);
            statuses.add(answer.path("results[1].status"));
            ids.add(answer.path("results[1].item.id"));
          } else {
            statuses.add(answer.statusCode());
            ids.add(answer.path("id"));
          }
        }
        assertThat(statuses).as("round %d", round).containsOnlyOnce(201).containsOnly(201, 200);
        assertThat(new HashSet<>(ids)).hasSize(1);
        assertThat(
                json()
                    .queryParam("queue", queue)
                    .get("/v1/items")
                    .jsonPath()
                    .getList("items.dedupeKey"))
            .containsExactlyInAnyOrder("k", "other-" + round);
      }
      assertThat(log.errors()).isEmpty();
    }
  }

  @Test
  void single_approvals_racing_a_bulk_reject_decide_each_held_item_once() throws Exception {
    String queue = ApprovalGateTest.gated("approve-vs-bulk");
    int count = 30;
    List<String> held = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      held.add(enqueued(queue, "k" + i, i));
    }
    try (LogCapture log = LogCapture.start(Level.SEVERE)) {
      List<Object> answers =
          Race.of(
              3,
              thread -> {
                if (thread == 0) {
                  Response rejected =
                      json()
                          .urlEncodingEnabled(false)
                          .body(Map.of("queue", queue, "reason", "no"))
                          .post("/v1/items:reject");
                  rejected.then().statusCode(200);
                  return rejected.jsonPath().getList("items.id", String.class);
                }
                List<String> approved = new ArrayList<>();
                for (int n = 0; n < count; n++) {
                  String id = held.get(thread == 1 ? n : count - 1 - n);
                  int status =
                      json().body(Map.of()).post("/v1/items/{id}/approve", id).statusCode();
                  assertThat(status).isIn(200, 409);
                  if (status == 200) {
                    approved.add(id);
                  }
                }
                return approved;
              });
      @SuppressWarnings("unchecked")
      List<String> rejected = (List<String>) answers.get(0);
      List<String> approved = new ArrayList<>();
      for (Object some : answers.subList(1, 3)) {
        @SuppressWarnings("unchecked")
        List<String> ids = (List<String>) some;
        approved.addAll(ids);
      }
      List<String> decided = new ArrayList<>(rejected);
      decided.addAll(approved);
      // Each item once, by one of them; the bulk stepped past what an approval had locked, and
      // nothing stays held for longer than the approvals took.
      assertThat(decided).doesNotHaveDuplicates().containsExactlyInAnyOrderElementsOf(held);
      for (String id : held) {
        JsonPath actions = actions(id);
        assertThat(actions.getList("actions")).as("item %s's actions", id).hasSize(1);
        boolean wasApproved = approved.contains(id);
        assertThat(actions.getString("actions[0].action"))
            .isEqualTo(wasApproved ? "approve" : "reject");
        assertThat(item(id).<String>path("state")).isEqualTo(wasApproved ? "pending" : "cancelled");
      }
      assertThat(log.errors()).isEmpty();
    }
  }

  @Test
  void an_approval_a_rejection_a_cancel_and_claims_of_one_held_item_at_once_never_claim_it_held()
      throws Exception {
    // Of the approval and the rejection exactly one decides. Only an approved item can then be
    // cancelled or claimed, and by one of them: a cancel cannot take a held item out of the
    // operators' hands, and no claim takes a proposal nobody approved.
    List<String> calls = List.of("approve", "reject", "cancel", "claim", "claim-next");
    Map<String, Integer> seen = new HashMap<>();
    try (LogCapture log = LogCapture.start(Level.SEVERE)) {
      for (int round = 0; round < 20; round++) {
        // A queue per round, so that the claim of the queue's next item can only take this one.
        String queue = ApprovalGateTest.gated("held-vs-all");
        String id = enqueued(queue, "k", round);

        List<Response> answers =
            Race.of(
                5,
                thread ->
                    switch (thread) {
                      case 0 -> ApprovalGateTest.approve(id, Map.of());
                      case 1 -> ApprovalGateTest.reject(id, Map.of("reason", "no"));
                      case 2 -> cancel(id);
                      case 3 -> claim(id, Map.of("worker", "by-id"));
                      default -> claimNext(queue, Map.of("worker", "next"));
                    });

        List<Integer> statuses = answers.stream().map(Response::statusCode).toList();
        List<String> took = new ArrayList<>();
        for (int call = 0; call < calls.size(); call++) {
          if (statuses.get(call) == 200) {
            took.add(calls.get(call));
          } else if (call < 3) {
            problem(answers.get(call), 409, "state-conflict");
          } else {
            assertThat(statuses.get(call))
                .as("round %d: %s", round, calls.get(call))
                .isEqualTo(204);
          }
        }
        seen.merge(String.join("+", took), 1, Integer::sum);
        Response now = item(id);
        List<String> actions = actions(id).getList("actions.action");
        List<Map<String, Object>> tries = attempts(id).getList("attempts");
        if (took.contains("reject")) {
          assertThat(took).as("round %d", round).containsExactly("reject");
          assertThat(now.<String>path("state")).isEqualTo("cancelled");
          assertThat(now.<String>path("lastError")).isEqualTo("no");
          assertThat(actions).containsExactly("reject");
          assertThat(tries).isEmpty();
          continue;
        }
        // Approved; then at most one of the cancel and the claims came after it and took it.
        assertThat(took).as("round %d", round).hasSizeBetween(1, 2).startsWith("approve");
        String after = took.size() == 2 ? took.get(1) : "none";
        assertThat(now.<String>path("lastError")).isNull();
        switch (after) {
          case "cancel" -> {
            assertThat(now.<String>path("state")).isEqualTo("cancelled");
            assertThat(actions).containsExactly("approve", "cancel");
            assertThat(tries).isEmpty();
          }
          case "none" -> {
            assertThat(now.<String>path("state")).isEqualTo("pending");
            assertThat(actions).containsExactly("approve");
            assertThat(tries).isEmpty();
          }
          default -> {
            assertThat(now.<String>path("state")).isEqualTo("sending");
            assertThat(now.<String>path("claimedBy"))
                .isEqualTo(after.equals("claim") ? "by-id" : "next");
            assertThat(actions).containsExactly("approve");
            assertThat(tries).hasSize(1);
          }
        }
      }
      assertThat(log.errors()).isEmpty();
    }
    System.out.printf("approve, reject, cancel and claims of a held item, took it: %s%n", seen);
  }

  @Test
  void an_operators_cancels_and_claims_of_one_pending_item_at_once_let_exactly_one_take_it()
      throws Exception {
    Map<String, Integer> won = new HashMap<>();
    try (LogCapture log = LogCapture.start(Level.SEVERE)) {
      for (int round = 0; round < 20; round++) {
        // A queue per round, so that the claim of the queue's next item can only take this one.
        String queue = uniqueQueue("cancel-vs-claim");
        String id = enqueued(queue, "k", round);

        List<Response> answers =
            Race.of(
                4,
                thread ->
                    switch (thread) {
                      case 0, 1 -> cancel(id);
                      case 2 -> claim(id, Map.of("worker", "by-id"));
                      default -> claimNext(queue, Map.of("worker", "next"));
                    });

        List<Integer> statuses = answers.stream().map(Response::statusCode).toList();
        assertThat(statuses).as("round %d", round).containsOnlyOnce(200);
        String winner =
            List.of("cancel", "cancel", "claim", "claim-next").get(statuses.indexOf(200));
        won.merge(winner, 1, Integer::sum);
        Response now = item(id);
        List<String> actions = actions(id).getList("actions.action");
        if (winner.equals("cancel")) {
          // The other cancel finds it cancelled; neither claim takes a cancelled item.
          assertThat(statuses).as("round %d", round).containsExactlyInAnyOrder(200, 409, 204, 204);
          problem(answers.get(1 - statuses.indexOf(200)), 409, "state-conflict");
          assertThat(now.<String>path("state")).isEqualTo("cancelled");
          assertThat(now.<Integer>path("attempts")).isZero();
          assertThat(attempts(id).getList("attempts")).isEmpty();
          assertThat(actions).containsExactly("cancel");
        } else {
          // Claimed: out with a worker, so both cancels are refused, and the other claim lost.
          assertThat(statuses).as("round %d", round).containsExactlyInAnyOrder(409, 409, 200, 204);
          problem(answers.get(0), 409, "state-conflict");
          problem(answers.get(1), 409, "state-conflict");
          Response claimed = answers.get(statuses.indexOf(200));
          assertThat(now.<String>path("state")).isEqualTo("sending");
          assertThat(now.<Integer>path("attempts")).isEqualTo(1);
          assertThat(now.<String>path("claimedBy")).isEqualTo(claimed.<String>path("claimedBy"));
          List<Map<String, Object>> tries = attempts(id).getList("attempts");
          assertThat(tries).hasSize(1);
          assertThat(tries.get(0)).containsEntry("outcome", null);
          assertThat(actions).isEmpty();
          complete(id, Map.of("claimToken", claimed.path("claimToken"))).then().statusCode(200);
        }
      }
      assertThat(log.errors()).isEmpty();
    }
    System.out.printf("cancel vs claim, winners: %s%n", won);
  }

  @Test
  void a_late_complete_and_claims_of_its_pending_item_at_once_never_send_it_unannounced()
      throws Exception {
    Map<String, Integer> won = new HashMap<>();
    try (LogCapture log = LogCapture.start(Level.SEVERE)) {
      for (int round = 0; round < 20; round++) {
        String queue = uniqueQueue("late-vs-claim");
        String id = enqueued(queue, "k", round);
        String early = claim(id, Map.of("worker", "slow")).path("claimToken");
        // The slow worker timed out and said so; the item is due again at once.
        fail(id, Map.of("claimToken", early, "error", "timeout", "retryAfterSeconds", 0))
            .then()
            .statusCode(200)
            .body("state", org.hamcrest.Matchers.equalTo("pending"));

        List<Response> answers =
            Race.of(
                3,
                thread ->
                    switch (thread) {
                      case 0 -> complete(id, Map.of("claimToken", early, "externalRef", "late"));
                      case 1 -> claim(id, Map.of("worker", "by-id"));
                      default -> claimNext(queue, Map.of("worker", "next"));
                    });

        // The late report is a fact whoever came first: recorded, and the worker told so.
        problem(answers.get(0), 409, "stale-claim")
            .body("detail", org.hamcrest.Matchers.containsString("recorded as a late success"));
        List<Integer> claims = List.of(answers.get(1).statusCode(), answers.get(2).statusCode());
        Response now = item(id);
        List<Map<String, Object>> tries = attempts(id).getList("attempts");
        assertThat(tries.get(0)).containsEntry("outcome", "retry");
        assertThat(tries.get(0).get("lateSuccess")).isNotNull();
        assertThat(now.<Integer>path("duplicateSends")).isZero();
        if (claims.contains(200)) {
          // Claimed before the report: the claimer is told, and must not send.
          won.merge("claim", 1, Integer::sum);
          assertThat(claims).as("round %d", round).containsExactlyInAnyOrder(200, 204);
          assertThat(now.<String>path("state")).isEqualTo("sending");
          assertThat(now.<Integer>path("attempts")).isEqualTo(2);
          assertThat(now.<Integer>path("alreadySent.attempt")).isEqualTo(1);
          assertThat(now.<String>path("alreadySent.externalRef")).isEqualTo("late");
          assertThat(tries).hasSize(2);
          assertThat(tries.get(1)).containsEntry("outcome", null);
          String token = answers.get(claims.indexOf(200) + 1).path("claimToken");
          heartbeat(id, Map.of("claimToken", token))
              .then()
              .statusCode(200)
              .body("alreadySent.externalRef", org.hamcrest.Matchers.equalTo("late"));
        } else {
          // The report first: done with its reference, and no claim ever takes it again.
          won.merge("late", 1, Integer::sum);
          assertThat(claims).as("round %d", round).containsOnly(204);
          assertThat(now.<String>path("state")).isEqualTo("done");
          assertThat(now.<String>path("externalRef")).isEqualTo("late");
          assertThat(now.<Integer>path("attempts")).isEqualTo(1);
          assertThat(tries).hasSize(1);
        }
      }
      assertThat(log.errors()).isEmpty();
    }
    System.out.printf("late complete vs claim, winners: %s%n", won);
  }

  @Test
  void a_bulk_cancel_and_claims_of_the_same_pending_items_take_each_item_once() throws Exception {
    String queue = uniqueQueue("bulk-cancel-vs-claim");
    int count = 40;
    List<String> pending = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      pending.add(enqueued(queue, "k" + i, i));
    }
    try (LogCapture log = LogCapture.start(Level.SEVERE)) {
      List<List<String>> answers =
          Race.of(
              4,
              thread -> {
                if (thread == 0) {
                  return inSteps("cancel", Map.of("queue", queue, "state", "pending", "limit", 3));
                }
                List<String> claimed = new ArrayList<>();
                if (thread == 3) {
                  // The queue's next item, until there is none: steps past what the bulk locked.
                  Response next;
                  while ((next = claimNext(queue, Map.of("worker", "next"))).statusCode() == 200) {
                    claimed.add(next.path("id"));
                  }
                  assertThat(next.statusCode()).isEqualTo(204);
                  return claimed;
                }
                // By id, from either end: waits for what the bulk locked, then finds it cancelled.
                for (int n = 0; n < count; n++) {
                  String id = pending.get(thread == 1 ? n : count - 1 - n);
                  int status = claim(id, Map.of("worker", "w" + thread)).statusCode();
                  assertThat(status).isIn(200, 204);
                  if (status == 200) {
                    claimed.add(id);
                  }
                }
                return claimed;
              });
      List<String> cancelled = answers.get(0);
      List<String> claimed = new ArrayList<>();
      answers.subList(1, 4).forEach(claimed::addAll);
      List<String> decided = new ArrayList<>(cancelled);
      decided.addAll(claimed);
      assertThat(decided).doesNotHaveDuplicates().containsExactlyInAnyOrderElementsOf(pending);
      for (String id : pending) {
        Response now = item(id);
        List<Object> tries = attempts(id).getList("attempts");
        List<String> actions = actions(id).getList("actions.action");
        if (cancelled.contains(id)) {
          assertThat(now.<String>path("state")).as("item %s", id).isEqualTo("cancelled");
          assertThat(tries).as("item %s's attempts", id).isEmpty();
          assertThat(actions).as("item %s's actions", id).containsExactly("cancel");
        } else {
          assertThat(now.<String>path("state")).as("item %s", id).isEqualTo("sending");
          assertThat(now.<Integer>path("attempts")).as("item %s", id).isEqualTo(1);
          assertThat(tries).as("item %s's attempts", id).hasSize(1);
          assertThat(actions).as("item %s's actions", id).isEmpty();
        }
      }
      assertThat(log.errors()).isEmpty();
      System.out.printf(
          "bulk cancel vs claims: %d cancelled, %d claimed%n", cancelled.size(), claimed.size());
    }
  }

  @Test
  void no_claim_of_any_kind_sent_after_a_pause_was_answered_takes_an_item() throws Exception {
    // Each claim statement reads the pause itself (claim, claim-next, claim-next-batch and
    // complete-held-claim-next), so a pause holds from the next statement: a claim sent once the
    // pause has been answered finds the queue paused, whichever way it claims.
    int count = 60;
    int claimedBeforePause = 0;
    try (LogCapture log = LogCapture.start(Level.SEVERE)) {
      for (int round = 0; round < 4; round++) {
        String queue = uniqueQueue("pause-vs-claims");
        List<Map<String, Object>> entries = new ArrayList<>();
        for (int i = 0; i < count; i++) {
          entries.add(Map.of("dedupeKey", "k" + i, "payload", i));
        }
        List<String> ids =
            json()
                .body(Map.of("items", entries))
                .post("/v1/queues/{q}/items:batch", queue)
                .then()
                .statusCode(200)
                .extract()
                .jsonPath()
                .getList("results.item.id", String.class);
        AtomicLong pausedAt = new AtomicLong(Long.MAX_VALUE);
        CountDownLatch claiming = new CountDownLatch(12);
        List<List<Took>> answers =
            Race.of(
                5,
                thread -> {
                  if (thread == 0) {
                    // Pauses once the claimers are well under way.
                    try {
                      claiming.await(10, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                      throw new IllegalStateException(e);
                    }
                    io.restassured.RestAssured.post("/v1/queues/{q}/pause", queue)
                        .then()
                        .statusCode(200);
                    pausedAt.set(System.nanoTime());
                    return List.of();
                  }
                  return claimsUntilPaused(thread, queue, ids, pausedAt, claiming);
                });
        List<Took> took = new ArrayList<>();
        answers.forEach(took::addAll);
        assertThat(took.stream().filter(t -> t.sentAt() > pausedAt.get()).toList())
            .as("round %d: claims sent after the pause was answered", round)
            .isEmpty();
        List<String> claimed = took.stream().map(Took::id).toList();
        assertThat(claimed).as("round %d", round).doesNotHaveDuplicates().isNotEmpty();
        claimedBeforePause += claimed.size();
        Map<String, Map<String, Object>> rows = rows(queue);
        for (String id : ids) {
          Map<String, Object> now = rows.get(id);
          if (claimed.contains(id)) {
            assertThat(now).as("item %s", id).containsEntry("attempts", 1);
            assertThat((String) now.get("state")).as("item %s", id).isIn("sending", "done");
          } else {
            assertThat(now).as("item %s", id).containsEntry("state", "pending");
            assertThat(now).as("item %s", id).containsEntry("attempts", 0);
          }
        }
      }
      assertThat(log.errors()).isEmpty();
    }
    System.out.printf("claims racing a pause: %d taken before it%n", claimedBeforePause);
  }

  /** An item a claim took, and when the call that took it was sent (System.nanoTime). */
  private record Took(String id, long sentAt) {}

  /**
   * One claimer's calls, by thread: 1 claims the queue's next item, 2 a batch of up to three, 3
   * completes each item it holds with next, 4 claims the items by id from the last; until three of
   * its calls sent after the pause was answered have taken nothing. What it took.
   */
  private static List<Took> claimsUntilPaused(
      int thread, String queue, List<String> ids, AtomicLong pausedAt, CountDownLatch claiming) {
    List<Took> took = new ArrayList<>();
    String held = null;
    String heldToken = null;
    int byId = ids.size() - 1;
    for (int emptyAfterPause = 0; emptyAfterPause < 3 && byId >= 0; ) {
      long sentAt = System.nanoTime();
      // Where the answer has the claimed item: itself, or the next item of a complete.
      String at = "";
      Response answer;
      switch (thread) {
        case 1 -> answer = claimNext(queue, Map.of("worker", "next"));
        case 2 ->
            answer =
                json()
                    .body(Map.of("worker", "batch", "max", 3))
                    .post("/v1/queues/{q}/claim:batch", queue);
        case 3 -> {
          if (held == null) {
            answer = claimNext(queue, Map.of("worker", "chain"));
          } else {
            answer =
                complete(held, Map.of("claimToken", heldToken, "next", Map.of("worker", "chain")));
            answer.then().statusCode(200);
            at = "next.";
          }
        }
        default -> answer = claim(ids.get(byId--), Map.of("worker", "by-id"));
      }
      assertThat(answer.statusCode()).as("thread %d", thread).isIn(200, 204);
      List<String> got = new ArrayList<>();
      if (thread == 2 && answer.statusCode() == 200) {
        got.addAll(answer.jsonPath().getList("items.id", String.class));
      } else if (answer.statusCode() == 200 && answer.path(at + "id") != null) {
        got.add(answer.path(at + "id"));
      }
      if (thread == 3) {
        held = got.isEmpty() ? null : got.get(0);
        heldToken = got.isEmpty() ? null : answer.path(at + "claimToken");
      }
      if (got.isEmpty() && sentAt > pausedAt.get()) {
        emptyAfterPause++;
      }
      for (String id : got) {
        took.add(new Took(id, sentAt));
        claiming.countDown();
      }
    }
    return took;
  }

  @Test
  void a_policy_change_and_a_pause_of_a_new_queue_at_once_both_stick() throws Exception {
    try (LogCapture log = LogCapture.start(Level.SEVERE)) {
      for (int round = 0; round < 20; round++) {
        // A new queue: both requests race to insert its one policy row.
        String queue = uniqueQueue("policy-vs-pause");
        List<Response> answers =
            Race.of(
                2,
                thread ->
                    thread == 0
                        ? json()
                            .body(Map.of("maxAttempts", 7, "leaseSeconds", 99))
                            .put("/v1/queues/{q}/policy", queue)
                        : io.restassured.RestAssured.post("/v1/queues/{q}/pause", queue));
        answers.forEach(answer -> answer.then().statusCode(200));

        Response policy = json().get("/v1/queues/{q}/policy", queue);
        policy.then().statusCode(200);
        assertThat(policy.<Boolean>path("paused")).as("round %d: paused", round).isTrue();
        assertThat(policy.<Integer>path("maxAttempts")).as("round %d", round).isEqualTo(7);
        assertThat(policy.<Integer>path("leaseSeconds")).as("round %d", round).isEqualTo(99);
        assertThat(
                json()
                    .get("/v1/queues/{q}/actions", queue)
                    .then()
                    .extract()
                    .jsonPath()
                    .getList("actions.action"))
            .containsExactlyInAnyOrder("policy", "pause");
      }
      assertThat(log.errors()).isEmpty();
    }
  }

  @Test
  void a_resolve_a_retry_and_a_late_complete_of_one_failed_item_at_once_send_it_once()
      throws Exception {
    Map<String, Integer> won = new HashMap<>();
    try (LogCapture log = LogCapture.start(Level.SEVERE)) {
      for (int round = 0; round < 10; round++) {
        String queue = uniqueQueue("resolve-vs-retry");
        String id = failedForGood(queue, 1).get(0);
        String token = tokens.get(id);
        // The operator resolves with another reference than the late report's (a resolve
        // without one races a late complete in the test below).
        Map<String, Object> resolveBody =
            Map.of("note", "the provider has it", "externalRef", "op");

        List<Response> answers =
            Race.of(
                3,
                thread ->
                    switch (thread) {
                      case 0 -> json().body(resolveBody).post("/v1/items/{id}/resolve", id);
                      case 1 -> retry(id);
                      default -> complete(id, Map.of("claimToken", token, "externalRef", "late"));
                    });

        // The late report is a fact whoever came first: recorded on the one attempt, once.
        problem(answers.get(2), 409, "stale-claim")
            .body("detail", org.hamcrest.Matchers.containsString("recorded as a late success"));
        List<Integer> operators = List.of(answers.get(0).statusCode(), answers.get(1).statusCode());
        assertThat(operators).as("round %d", round).isSubsetOf(200, 409);
        // At most one of the operators: each refuses the state the other leaves.
        assertThat(operators).as("round %d", round).contains(409);
        for (Response answer : answers.subList(0, 2)) {
          if (answer.statusCode() == 409) {
            problem(answer, 409, "state-conflict");
          }
        }
        List<Map<String, Object>> tries = attempts(id).getList("attempts");
        assertThat(tries).as("round %d", round).hasSize(1);
        assertThat(tries.get(0)).containsEntry("worker", "early");
        assertThat(tries.get(0)).containsEntry("outcome", "failed");
        assertThat(attempts(id).getString("attempts[0].lateSuccess.externalRef"))
            .as("round %d", round)
            .isEqualTo("late");
        List<String> actions = actions(id).getList("actions.action");
        Response now = item(id);
        assertThat(now.<String>path("state")).as("round %d", round).isEqualTo("done");
        String winner =
            operators.get(0) == 200 ? "resolve" : operators.get(1) == 200 ? "retry" : "late";
        won.merge(winner, 1, Integer::sum);
        switch (winner) {
          case "resolve" -> {
            // Resolved first, with another reference: the late success is a second send.
            assertThat(actions).as("round %d", round).containsExactly("resolve");
            assertThat(now.<String>path("externalRef")).as("round %d", round).isEqualTo("op");
            assertThat(now.<Integer>path("duplicateSends"))
                .as("round %d: duplicate sends", round)
                .isEqualTo(1);
          }
          case "retry" -> {
            // Retried first: pending again, and the late success made it done before any claim.
            assertThat(actions).as("round %d", round).containsExactly("retry");
            assertThat(now.<String>path("externalRef")).isEqualTo("late");
            assertThat(now.<Integer>path("duplicateSends")).isZero();
            assertThat(now.<Integer>path("attempts")).isZero();
          }
          default -> {
            // The late success first: done with it, and neither operator could act after.
            assertThat(actions).as("round %d", round).isEmpty();
            assertThat(now.<String>path("externalRef")).isEqualTo("late");
            assertThat(now.<Integer>path("duplicateSends")).isZero();
          }
        }
      }
      assertThat(log.errors()).isEmpty();
    }
    System.out.printf("resolve vs retry vs late complete, winners: %s%n", won);
  }

  @Test
  void a_resolve_a_cancel_and_a_retry_of_one_failed_item_at_once_leave_what_their_order_would()
      throws Exception {
    // Each decides on the failed item's state: a resolve only takes it failed, so it is never
    // done after a cancel or a retry; a retry may follow a cancel and a cancel a retry. The
    // item's state and its audited actions are those of the calls that answered 200, in the
    // order the actions were recorded.
    // Two operators resolve, and the cancel and the retry start up to 3 ms late: a resolve's call
    // takes longer than theirs, and would otherwise seldom come first.
    List<String> calls = List.of("resolve", "resolve", "cancel", "retry");
    Map<String, Integer> seen = new HashMap<>();
    try (LogCapture log = LogCapture.start(Level.SEVERE)) {
      for (int round = 0; round < 30; round++) {
        String id = failedForGood(uniqueQueue("resolve-vs-cancel"), 1).get(0);

        List<Response> answers =
            Race.of(
                4,
                thread ->
                    switch (thread) {
                      case 0, 1 -> json().body(Map.of()).post("/v1/items/{id}/resolve", id);
                      case 2 -> {
                        jitter();
                        yield cancel(id);
                      }
                      default -> {
                        jitter();
                        yield retry(id);
                      }
                    });

        Set<String> took = new HashSet<>();
        for (int call = 0; call < calls.size(); call++) {
          if (answers.get(call).statusCode() == 200) {
            took.add(calls.get(call));
          } else {
            problem(answers.get(call), 409, "state-conflict");
          }
        }
        List<String> actions = actions(id).getList("actions.action");
        seen.merge(String.join("+", actions), 1, Integer::sum);
        assertThat(new HashSet<>(actions)).as("round %d", round).isEqualTo(took);
        assertThat(actions)
            .as("round %d", round)
            .isIn(
                List.of("resolve"),
                List.of("cancel"),
                List.of("retry"),
                List.of("cancel", "retry"),
                List.of("retry", "cancel"));
        String last = actions.get(actions.size() - 1);
        Response now = item(id);
        assertThat(now.<String>path("state"))
            .as("round %d", round)
            .isEqualTo(
                switch (last) {
                  case "resolve" -> "done";
                  case "cancel" -> "cancelled";
                  default -> "pending";
                });
        assertThat(now.<Integer>path("attempts")).isEqualTo(took.contains("retry") ? 0 : 1);
        assertThat(attempts(id).getList("attempts.outcome")).containsExactly("failed");
      }
      assertThat(log.errors()).isEmpty();
    }
    System.out.printf("resolve vs cancel vs retry, actions: %s%n", seen);
  }

  @Test
  void a_resolve_without_a_reference_and_a_late_complete_at_once_end_as_one_send_either_way()
      throws Exception {
    // Whichever commits first, the item ends done with the late reference and no duplicate send:
    // the late success first leaves nothing to resolve; the resolve first is the send the
    // operator confirmed, and takes the reference the late report brings.
    Map<Integer, Integer> resolveAnswers = new HashMap<>();
    try (LogCapture log = LogCapture.start(Level.SEVERE)) {
      for (int round = 0; round < 40; round++) {
        String id = failedForGood(uniqueQueue("resolve-vs-late"), 1).get(0);
        String token = tokens.get(id);

        List<Response> answers =
            Race.of(
                2,
                thread ->
                    thread == 0
                        ? json()
                            .body(Map.of("note", "the provider has it"))
                            .post("/v1/items/{id}/resolve", id)
                        : complete(id, Map.of("claimToken", token, "externalRef", "late")));

        resolveAnswers.merge(answers.get(0).statusCode(), 1, Integer::sum);
        if (answers.get(0).statusCode() != 200) {
          problem(answers.get(0), 409, "state-conflict");
        }
        problem(answers.get(1), 409, "stale-claim");
        Response now = item(id);
        assertThat(now.<String>path("state")).as("round %d", round).isEqualTo("done");
        assertThat(now.<String>path("externalRef")).as("round %d", round).isEqualTo("late");
        assertThat(now.<Integer>path("duplicateSends")).as("round %d", round).isZero();
      }
      assertThat(log.errors()).isEmpty();
    }
    System.out.printf("resolve without a reference vs late complete: %s%n", resolveAnswers);
  }

  @Test
  void a_bulk_retry_and_single_retries_of_the_same_failed_items_retry_each_once() throws Exception {
    String queue = uniqueQueue("bulk-retry-vs-single");
    int count = 20;
    List<String> failed = failedForGood(queue, count);
    try (LogCapture log = LogCapture.start(Level.SEVERE)) {
      List<List<String>> answers =
          Race.of(
              3,
              thread -> {
                if (thread == 0) {
                  return inSteps("retry", Map.of("queue", queue, "limit", 3));
                }
                // By id, from either end: a retried item is pending, which no retry takes again.
                List<String> retried = new ArrayList<>();
                for (int n = 0; n < count; n++) {
                  String id = failed.get(thread == 1 ? n : count - 1 - n);
                  Response answer = retry(id);
                  if (answer.statusCode() == 200) {
                    retried.add(id);
                  } else {
                    problem(answer, 409, "state-conflict");
                  }
                }
                return retried;
              });
      List<String> decided = new ArrayList<>();
      answers.forEach(decided::addAll);
      assertThat(decided).doesNotHaveDuplicates().containsExactlyInAnyOrderElementsOf(failed);
      Map<String, Map<String, Object>> rows = rows(queue);
      for (String id : failed) {
        assertThat(rows.get(id)).as("item %s", id).containsEntry("state", "pending");
        assertThat(rows.get(id)).as("item %s", id).containsEntry("attempts", 0);
        assertThat(attempts(id).getList("attempts.outcome"))
            .as("item %s's attempts", id)
            .containsExactly("failed");
        JsonPath actions = actions(id);
        assertThat(actions.getList("actions.action"))
            .as("item %s's actions", id)
            .containsExactly("retry");
        assertThat(actions.getString("actions[0].note"))
            .as("item %s's retry", id)
            .isEqualTo(answers.get(0).contains(id) ? "bulk" : null);
      }
      assertThat(log.errors()).isEmpty();
      System.out.printf(
          "bulk retry vs single retries: %d by the bulk, %d singly%n",
          answers.get(0).size(), decided.size() - answers.get(0).size());
    }
  }

  @Test
  void a_batch_claim_and_a_bulk_cancel_of_the_same_pending_items_take_each_item_once()
      throws Exception {
    int cancelledCount = 0;
    int claimedCount = 0;
    try (LogCapture log = LogCapture.start(Level.SEVERE)) {
      for (int round = 0; round < 8; round++) {
        String queue = uniqueQueue("batch-claim-vs-bulk-cancel");
        int count = 6;
        List<String> pending = new ArrayList<>();
        for (int i = 0; i < count; i++) {
          // The newer the item, the higher its priority: the claims take the newest first, as
          // the bulk cancel does, so that all three start on the same items.
          pending.add(enqueued(queue, Map.of("dedupeKey", "k" + i, "payload", i, "priority", i)));
        }
        List<List<String>> answers =
            Race.of(
                3,
                thread -> {
                  if (thread == 0) {
                    // Stepping past what a batch claim locked.
                    return inSteps(
                        "cancel", Map.of("queue", queue, "state", "pending", "limit", 2));
                  }
                  List<String> mine = new ArrayList<>();
                  Response some;
                  // Two batch claimers, a few at a time, until nothing is due.
                  while ((some =
                              json()
                                  .body(Map.of("worker", "w" + thread, "max", 2))
                                  .post("/v1/queues/{q}/claim:batch", queue))
                          .statusCode()
                      == 200) {
                    List<String> ids = some.jsonPath().getList("items.id", String.class);
                    assertThat(ids).isNotEmpty().hasSizeLessThanOrEqualTo(2);
                    mine.addAll(ids);
                  }
                  assertThat(some.statusCode()).isEqualTo(204);
                  return mine;
                });
        List<String> cancelled = answers.get(0);
        List<String> decided = new ArrayList<>();
        answers.forEach(decided::addAll);
        assertThat(decided)
            .as("round %d", round)
            .doesNotHaveDuplicates()
            .containsExactlyInAnyOrderElementsOf(pending);
        cancelledCount += cancelled.size();
        claimedCount += decided.size() - cancelled.size();
        Map<String, Map<String, Object>> rows = rows(queue);
        for (String id : pending) {
          Map<String, Object> now = rows.get(id);
          List<Object> tries = attempts(id).getList("attempts");
          List<String> actions = actions(id).getList("actions.action");
          if (cancelled.contains(id)) {
            assertThat(now).as("item %s", id).containsEntry("state", "cancelled");
            assertThat(now).as("item %s", id).containsEntry("attempts", 0);
            assertThat(tries).as("item %s's attempts", id).isEmpty();
            assertThat(actions).as("item %s's actions", id).containsExactly("cancel");
          } else {
            String worker = answers.get(1).contains(id) ? "w1" : "w2";
            assertThat(now).as("item %s", id).containsEntry("state", "sending");
            assertThat(now).as("item %s", id).containsEntry("claimedBy", worker);
            assertThat(now).as("item %s", id).containsEntry("attempts", 1);
            assertThat(tries).as("item %s's attempts", id).hasSize(1);
            assertThat(actions).as("item %s's actions", id).isEmpty();
          }
        }
      }
      assertThat(log.errors()).isEmpty();
    }
    System.out.printf(
        "batch claims vs bulk cancel: %d cancelled, %d claimed%n", cancelledCount, claimedCount);
  }

  /** Every item of the queue, as the list shows it, by id. */
  private static Map<String, Map<String, Object>> rows(String queue) {
    List<Map<String, Object>> items =
        json()
            .queryParam("queue", queue)
            .queryParam("limit", 100)
            .get("/v1/items")
            .then()
            .statusCode(200)
            .extract()
            .jsonPath()
            .getList("items");
    Map<String, Map<String, Object>> byId = new HashMap<>();
    items.forEach(row -> byId.put((String) row.get("id"), row));
    return byId;
  }

  private final Map<String, String> tokens = new HashMap<>();

  /**
   * {@code count} new items of the queue, each claimed once and failed for good (no attempts left);
   * their claims' tokens are kept in {@link #tokens}.
   */
  private List<String> failedForGood(String queue, int count) {
    for (int i = 0; i < count; i++) {
      enqueued(queue, Map.of("dedupeKey", "k" + i, "payload", i, "maxAttempts", 1));
    }
    List<Map<String, Object>> claims =
        json()
            .body(Map.of("worker", "early", "max", count))
            .post("/v1/queues/{q}/claim:batch", queue)
            .path("items");
    assertThat(claims).hasSize(count);
    List<Map<String, Object>> entries = new ArrayList<>();
    List<String> ids = new ArrayList<>();
    for (Map<String, Object> c : claims) {
      String id = (String) c.get("id");
      ids.add(id);
      tokens.put(id, (String) c.get("claimToken"));
      entries.add(
          Map.of("id", id, "claimToken", c.get("claimToken"), "error", "boom", "retryable", false));
    }
    json()
        .urlEncodingEnabled(false)
        .body(Map.of("items", entries))
        .post("/v1/items:fail")
        .then()
        .statusCode(200)
        .body("results.status", org.hamcrest.Matchers.everyItem(org.hamcrest.Matchers.is(200)));
    return ids;
  }

  private static JsonPath attempts(String id) {
    return json().get("/v1/items/{id}/attempts", id).then().statusCode(200).extract().jsonPath();
  }

  private static JsonPath actions(String id) {
    return json().get("/v1/items/{id}/actions", id).then().statusCode(200).extract().jsonPath();
  }

  /** An item claimed by worker "w", and a spare item behind it, due, in a queue of their own. */
  private record Claimed(String id, String token, String spare) {}

  private static Claimed claimedBeforeASpare(String queuePrefix, int round) {
    String queue = uniqueQueue(queuePrefix);
    String id = enqueued(queue, "k", round);
    String token = claimedNext(queue, "w").path("claimToken");
    return new Claimed(id, token, enqueued(queue, "spare", round));
  }

  /** Waits up to 3 ms, at random. */
  private static void jitter() {
    java.util.concurrent.locks.LockSupport.parkNanos(
        java.util.concurrent.ThreadLocalRandom.current().nextLong(3_000_000));
  }

  /** A batch fail's entry that fails the claim for good, with the error "batch". */
  private static Map<String, Object> failForGoodEntry(String id, String token) {
    return Map.of("id", id, "claimToken", token, "error", "batch", "retryable", false);
  }

  /** A batch complete or fail ({@code kind}) of the one entry. */
  private static Response batchFinish(String kind, Map<String, Object> entry) {
    return json()
        .urlEncodingEnabled(false)
        .body(Map.of("items", List.of(entry)))
        .post("/v1/items:" + kind);
  }

  /**
   * An operator's bulk action on the items matching {@code filter}, a few calls at a time (the
   * filter's limit) while the answer says there are more, so that its calls interleave with the
   * race's other side all along. The ids it acted on.
   */
  private static List<String> inSteps(String action, Map<String, Object> filter) {
    List<String> acted = new ArrayList<>();
    Response some;
    do {
      some = json().urlEncodingEnabled(false).body(filter).post("/v1/items:" + action);
      some.then().statusCode(200);
      acted.addAll(some.jsonPath().getList("items.id", String.class));
    } while (some.<Boolean>path("more"));
    return acted;
  }
}
