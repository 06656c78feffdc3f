package dev.claimq.api;

import static dev.claimq.Api.awaitState;
import static dev.claimq.Api.cancel;
import static dev.claimq.Api.claim;
import static dev.claimq.Api.complete;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.fail;
import static dev.claimq.Api.heartbeat;
import static dev.claimq.Api.item;
import static dev.claimq.Api.problem;
import static dev.claimq.Api.retry;
import static dev.claimq.Api.uniqueQueue;
import static dev.claimq.api.SendSafetyTest.attempts;
import static dev.claimq.api.SendSafetyTest.intent;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;

import dev.claimq.AsAdmin;
import io.quarkus.test.junit.QuarkusTest;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A complete that comes after its claim ended, but with the provider's reference, says the send
 * happened: it is recorded on its attempt and acts on the item, and only a token the item really
 * issued counts. Each test lets a 1 s lease expire first.
 */
@QuarkusTest
class LateSuccessTest extends AsAdmin {

  @Test
  void a_late_complete_finishes_a_pending_item_and_says_so_in_its_409() throws Exception {
    String id = enqueued(uniqueQueue("late-pending"), "k", 1);
    String stale = claim(id, Map.of("worker", "slow", "leaseSeconds", 1)).path("claimToken");
    awaitState(id, "pending");

    problem(
            complete(id, Map.of("claimToken", stale, "externalRef", "msg_late")),
            409,
            "stale-claim")
        .body("detail", containsString("recorded as a late success"));

    item(id).then().body("state", equalTo("done")).body("externalRef", equalTo("msg_late"));
    Map<String, Object> late = lateSuccess(id, 0);
    assertThat(late)
        .containsEntry("externalRef", "msg_late")
        .containsEntry("reportedBy", "dev-admin");
    claim(id, Map.of()).then().statusCode(204); // nothing is sent again
  }

  @Test
  void a_late_complete_while_another_claim_holds_the_item_tells_that_claimer_it_was_sent()
      throws Exception {
    String id = enqueued(uniqueQueue("late-sending"), "k", 1);
    String stale = claim(id, Map.of("leaseSeconds", 1)).path("claimToken");
    awaitState(id, "pending");
    String current = claim(id, Map.of("worker", "newer")).path("claimToken");

    problem(complete(id, Map.of("claimToken", stale, "externalRef", "msg_1")), 409, "stale-claim");

    heartbeat(id, Map.of("claimToken", current))
        .then()
        .statusCode(200)
        .body("alreadySent.attempt", equalTo(1))
        .body("alreadySent.externalRef", equalTo("msg_1"));
    intent(id, current).then().statusCode(200).body("alreadySent.externalRef", equalTo("msg_1"));
    complete(id, Map.of("claimToken", current, "externalRef", "msg_1"))
        .then()
        .statusCode(200)
        .body("alreadySent", nullValue())
        .body("duplicateSends", equalTo(0));
  }

  @Test
  void a_claim_after_a_newer_claim_that_never_completed_is_told_the_send_went_out()
      throws Exception {
    String id = enqueued(uniqueQueue("late-then-fail"), "k", 1);
    String stale = claim(id, Map.of("leaseSeconds", 1)).path("claimToken");
    awaitState(id, "pending");
    String newer = claim(id, Map.of("worker", "newer")).path("claimToken");
    problem(complete(id, Map.of("claimToken", stale, "externalRef", "msg_1")), 409, "stale-claim");

    // The newer claim fails before a heartbeat could tell it: the item goes back to pending, and
    // the next claim, which said possiblySent false, was sent again by a worker that obeys it.
    fail(id, Map.of("claimToken", newer, "error", "provider 503", "retryAfterSeconds", 0))
        .then()
        .statusCode(200)
        .body("state", equalTo("pending"));
    claim(id, Map.of("worker", "third"))
        .then()
        .statusCode(200)
        .body("possiblySent", equalTo(true))
        .body("alreadySent.attempt", equalTo(1))
        .body("alreadySent.externalRef", equalTo("msg_1"));
  }

  @Test
  void a_claims_prior_attempts_are_the_items_attempts_as_its_history_reads_them() {
    // Attempt 1 failed (finishedBy its key), then reported late as sent while attempt 2 held the
    // item; attempt 2 failed too. The third claim's priorAttempts must say all of it, as
    // GET /attempts does: they once left out who finished each attempt and its late success.
    String id = enqueued(uniqueQueue("late-prior"), "k", 1);
    String first = claim(id, Map.of("worker", "first")).path("claimToken");
    fail(id, Map.of("claimToken", first, "error", "timeout", "retryAfterSeconds", 0))
        .then()
        .statusCode(200);
    String second = claim(id, Map.of("worker", "second")).path("claimToken");
    problem(complete(id, Map.of("claimToken", first, "externalRef", "msg_1")), 409, "stale-claim");
    fail(id, Map.of("claimToken", second, "error", "again", "retryAfterSeconds", 0))
        .then()
        .statusCode(200);

    List<Map<String, Object>> prior = claim(id, Map.of("worker", "third")).path("priorAttempts");

    List<Map<String, Object>> history = attempts(id);
    assertThat(history).hasSize(3);
    assertThat(prior).isEqualTo(history.subList(0, 2));
    assertThat(prior.get(0)).containsEntry("finishedBy", "dev-admin").containsKey("lateSuccess");
  }

  @Test
  void a_late_complete_turns_a_failed_item_done() throws Exception {
    String id = enqueued(uniqueQueue("late-failed"), "k", 1);
    String stale = claim(id, Map.of("leaseSeconds", 1)).path("claimToken");
    awaitState(id, "pending");
    String current = claim(id, Map.of()).path("claimToken");
    fail(id, Map.of("claimToken", current, "error", "rejected", "retryable", false));

    problem(complete(id, Map.of("claimToken", stale, "externalRef", "msg_2")), 409, "stale-claim");

    item(id).then().body("state", equalTo("done")).body("externalRef", equalTo("msg_2"));
  }

  @Test
  void a_late_complete_of_a_cancelled_item_makes_it_done_so_a_retry_cannot_send_it_again()
      throws Exception {
    String id = enqueued(uniqueQueue("late-cancelled"), "k", 1);
    String stale = claim(id, Map.of("leaseSeconds", 1)).path("claimToken");
    awaitState(id, "pending");
    cancel(id).then().statusCode(200).body("state", equalTo("cancelled"));

    problem(complete(id, Map.of("claimToken", stale, "externalRef", "msg_3")), 409, "stale-claim")
        .body("detail", containsString("recorded as a late success"));

    item(id).then().body("state", equalTo("done")).body("externalRef", equalTo("msg_3"));
    assertThat(lateSuccess(id, 0)).containsEntry("externalRef", "msg_3");
    // Left cancelled, the item could be retried, and the send that went out made again.
    problem(retry(id), 409, "state-conflict");
  }

  @Test
  void a_claim_told_already_sent_that_completes_with_another_reference_is_a_duplicate_send()
      throws Exception {
    // The late success came first this time: the newer claim was told, and still finished with a
    // send of its own. Counted as when the late success comes after, in every form of complete.
    for (String form : List.of("single", "with next", "batch")) {
      String id = enqueued(uniqueQueue("late-first"), "k", 1);
      String stale = claim(id, Map.of("leaseSeconds", 1)).path("claimToken");
      awaitState(id, "pending");
      String current = claim(id, Map.of()).path("claimToken");
      problem(
          complete(id, Map.of("claimToken", stale, "externalRef", "msg_1")), 409, "stale-claim");

      Map<String, Object> report =
          new HashMap<>(Map.of("claimToken", current, "externalRef", "msg_2"));
      switch (form) {
        case "single" -> complete(id, report).then().statusCode(200);
        case "with next" -> {
          report.put("next", Map.of());
          complete(id, report).then().statusCode(200);
        }
        default -> {
          report.put("id", id);
          dev.claimq.Api.json()
              .body(Map.of("items", List.of(report)))
              .post("/v1/items:complete")
              .then()
              .statusCode(200)
              .body("results[0].status", equalTo(200));
        }
      }

      item(id)
          .then()
          .body("state", equalTo("done"))
          .body("externalRef", equalTo("msg_2"))
          .body("duplicateSends", equalTo(1));
    }
  }

  @Test
  void a_late_complete_of_a_done_item_is_a_duplicate_send_counted_once_with_both_refs()
      throws Exception {
    OutlivedClaim done = doneByANewerClaim("late-done", "msg_new");
    String id = done.id();
    String stale = done.staleToken();

    // Not "the send is not repeated": it was, and the answer says how to tell.
    problem(complete(id, Map.of("claimToken", stale, "externalRef", "msg_old")), 409, "stale-claim")
        .body("detail", containsString("(the item is now done, with externalRef 'msg_new')"))
        .body("detail", containsString("the provider took two sends"))
        .body("detail", org.hamcrest.Matchers.not(containsString("not repeated")));
    // Its repeat records nothing more.
    problem(
        complete(id, Map.of("claimToken", stale, "externalRef", "msg_old")), 409, "stale-claim");

    item(id)
        .then()
        .body("state", equalTo("done"))
        .body("externalRef", equalTo("msg_new"))
        .body("duplicateSends", equalTo(1));
    assertThat(lateSuccess(id, 0)).containsEntry("externalRef", "msg_old");
  }

  @Test
  void a_late_complete_with_the_done_items_own_reference_is_recorded_but_no_duplicate_send()
      throws Exception {
    // The newer claim asked the provider by idempotency key and got the same send back: the
    // provider kept it to one send, and the item must not say it went out twice.
    OutlivedClaim done = doneByANewerClaim("late-same-ref", "msg_1");

    assertSameSendReportedLate(done.id(), done.staleToken(), "msg_1");
  }

  @Test
  void a_late_complete_of_an_item_resolved_without_a_reference_gives_it_one_and_no_duplicate()
      throws Exception {
    // The worker timed out, said it could not tell whether it sent, and an operator confirmed
    // with the provider that it had: the send the worker later learns of is that same one.
    String queue = uniqueQueue("late-resolved");
    SendSafetyTest.policy(queue, Map.of("onUnknownOutcome", "hold"));
    String id = enqueued(queue, "k", 1);
    String token = claim(id, Map.of()).path("claimToken");
    fail(id, Map.of("claimToken", token, "error", "timeout", "sent", "unknown"))
        .then()
        .body("state", equalTo("failed"));
    dev.claimq.Api.json()
        .body(Map.of("note", "the provider has it"))
        .post("/v1/items/{id}/resolve", id)
        .then()
        .statusCode(200)
        .body("state", equalTo("done"))
        .body("externalRef", nullValue());

    assertSameSendReportedLate(id, token, "msg_1");
  }

  /** A late complete with {@code ref}: recorded, the item done with it, and no duplicate send. */
  private static void assertSameSendReportedLate(String id, String staleToken, String ref)
      throws Exception {
    problem(complete(id, Map.of("claimToken", staleToken, "externalRef", ref)), 409, "stale-claim")
        .body("detail", containsString("recorded as a late success"));

    item(id)
        .then()
        .body("state", equalTo("done"))
        .body("externalRef", equalTo(ref))
        .body("duplicateSends", equalTo(0));
    assertThat(lateSuccess(id, 0)).containsEntry("externalRef", ref);
  }

  @Test
  void a_batch_complete_records_a_late_success_as_the_single_complete_does() throws Exception {
    String id = enqueued(uniqueQueue("late-batch"), "k", 1);
    String stale = claim(id, Map.of("leaseSeconds", 1)).path("claimToken");
    awaitState(id, "pending");

    dev.claimq.Api.json()
        .body(
            Map.of(
                "items",
                java.util.List.of(Map.of("id", id, "claimToken", stale, "externalRef", "msg_b"))))
        .post("/v1/items:complete")
        .then()
        .statusCode(200)
        .body("results[0].status", equalTo(409))
        .body("results[0].detail", containsString("recorded as a late success"));

    item(id).then().body("state", equalTo("done")).body("externalRef", equalTo("msg_b"));
  }

  @Test
  void only_a_token_the_item_issued_with_an_external_ref_counts() throws Exception {
    String id = enqueued(uniqueQueue("late-forged"), "k", 1);
    String stale = claim(id, Map.of("leaseSeconds", 1)).path("claimToken");
    awaitState(id, "pending");

    problem(complete(id, Map.of("claimToken", "forged", "externalRef", "x")), 409, "stale-claim")
        .body("detail", org.hamcrest.Matchers.not(containsString("late success")));
    problem(complete(id, Map.of("claimToken", stale)), 409, "stale-claim"); // no reference

    item(id).then().body("state", equalTo("pending")).body("duplicateSends", equalTo(0));
    assertThat(attempts(id).get(0).get("lateSuccess")).isNull();
  }

  /** An item whose first claim's lease ran out, then done by a newer claim with {@code ref}. */
  private static OutlivedClaim doneByANewerClaim(String queue, String ref) throws Exception {
    String id = enqueued(uniqueQueue(queue), "k", 1);
    String stale = claim(id, Map.of("leaseSeconds", 1)).path("claimToken");
    awaitState(id, "pending");
    String current = claim(id, Map.of()).path("claimToken");
    complete(id, Map.of("claimToken", current, "externalRef", ref)).then().statusCode(200);
    return new OutlivedClaim(id, stale);
  }

  private record OutlivedClaim(String id, String staleToken) {}

  @SuppressWarnings("unchecked")
  private static Map<String, Object> lateSuccess(String id, int attempt) {
    return (Map<String, Object>) attempts(id).get(attempt).get("lateSuccess");
  }
}
