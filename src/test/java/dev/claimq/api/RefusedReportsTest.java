package dev.claimq.api;

import static dev.claimq.Api.claim;
import static dev.claimq.Api.claimNext;
import static dev.claimq.Api.complete;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.fail;
import static dev.claimq.Api.json;
import static dev.claimq.Api.release;
import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.claimq.AsAdmin;
import dev.claimq.Locks;
import dev.claimq.Race;
import dev.claimq.store.Sql;
import dev.claimq.store.SqlFile;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * A worker's refused or repeated report changes nothing, and must not stand in anyone's way while
 * it runs: claims step past a locked row (SKIP LOCKED), so a report that locked the item it refuses
 * would hide a due item from them. The service's own statements run here in a transaction the test
 * keeps open, which makes the moment they run last as long as the test needs.
 */
@QuarkusTest
class RefusedReportsTest extends AsAdmin {
  private static final SqlFile FILE = SqlFile.load("db/item.sql");
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Sql HEARTBEAT = FILE.take("heartbeat", "id", "token", "leaseSeconds");
  private static final Sql COMPLETE = FILE.take("complete", "id", "token", "externalRef", "actor");
  private static final Sql COMPLETE_HELD =
      FILE.take("complete-held", "id", "token", "externalRef", "actor");
  private static final Sql INTENT = FILE.take("intent", "id", "token");
  private static final Sql FAIL =
      FILE.take(
          "fail",
          "id",
          "token",
          "error",
          "retryable",
          "sentUnknown",
          "delays",
          "defaultOnUnknownOutcome",
          "actor");
  private static final Sql RELEASE =
      FILE.take("release", "id", "token", "delaySeconds", "defaultMaxReleases", "actor");
  private static final Sql COMPLETE_BATCH = FILE.take("complete-batch", "batch", "actor");
  private static final Sql FAIL_BATCH =
      FILE.take("fail-batch", "batch", "defaultOnUnknownOutcome", "actor");

  @Inject DataSource dataSource;

  @Test
  void a_stale_heartbeat_running_leaves_the_due_item_to_a_claim() throws Exception {
    Due due = failedForRetryNow("stale-heartbeat");
    assertClaimableWhile(
        due,
        HEARTBEAT,
        Map.of("id", Long.parseLong(due.id), "token", due.token, "leaseSeconds", 30));
  }

  @Test
  void a_repeated_fail_running_leaves_the_due_item_to_a_claim() throws Exception {
    Due due = failedForRetryNow("repeated-fail");
    assertClaimableWhile(due, FAIL, failValues(due));
  }

  @Test
  void a_repeated_release_running_leaves_the_due_item_to_a_claim() throws Exception {
    String queue = uniqueQueue("repeated-release");
    String id = enqueued(queue, "k", 1);
    String token =
        claim(id, Map.of("worker", "w1")).then().statusCode(200).extract().path("claimToken");
    release(id, Map.of("claimToken", token, "delaySeconds", 0)).then().statusCode(200);
    Due due = new Due(queue, id, token);
    assertClaimableWhile(due, RELEASE, releaseValues(due));
  }

  @Test
  void a_stale_complete_running_leaves_the_due_item_to_a_claim() throws Exception {
    Due due = failedForRetryNow("stale-complete");
    Map<String, Object> values = new java.util.HashMap<>();
    values.put("id", Long.parseLong(due.id));
    values.put("token", due.token);
    values.put("externalRef", null);
    values.put("actor", "test");
    assertClaimableWhile(due, COMPLETE, values);
  }

  /** No attempt of the item was ever claimed with this token: there is no send to record. */
  @Test
  void a_made_up_complete_with_a_reference_running_leaves_the_due_item_to_a_claim()
      throws Exception {
    Due due = failedForRetryNow("made-up-complete");
    assertClaimableWhile(due, COMPLETE, completeValues(due.id, "made-up", "msg_1"));
  }

  /**
   * A late success is recorded once: its repeat, from a worker that did not get the first answer,
   * records nothing. Here the newer claim that held the item then failed, so it is due again.
   */
  @Test
  void a_repeated_late_success_running_leaves_the_due_item_to_a_claim() throws Exception {
    Due old = claimed("repeated-late");
    fail(old.id, Map.of("claimToken", old.token, "error", "timeout", "retryAfterSeconds", 0))
        .then()
        .statusCode(200);
    String newer =
        claim(old.id, Map.of("worker", "w1")).then().statusCode(200).extract().path("claimToken");
    complete(old.id, Map.of("claimToken", old.token, "externalRef", "msg_1"))
        .then()
        .statusCode(409)
        .body("detail", containsString("recorded as a late success"));
    fail(old.id, Map.of("claimToken", newer, "error", "timeout", "retryAfterSeconds", 0))
        .then()
        .statusCode(200)
        .body("state", equalTo("pending"));
    assertClaimableWhile(old, COMPLETE, completeValues(old.id, old.token, "msg_1"));
  }

  /** Batch entries with an ended claim's token or a made-up one change nothing, as single ones. */
  @Test
  void a_batch_complete_of_stale_and_made_up_tokens_running_leaves_the_due_items_to_a_claim()
      throws Exception {
    assertClaimableWhileBatch(
        COMPLETE_BATCH,
        Map.of("actor", "t"),
        (stale, other) ->
            List.of(
                completeEntry(stale.id, stale.token, "msg_1"),
                completeEntry(other.id, "made-up", "msg_2"),
                Map.of("id", Long.parseLong(other.id), "claim_token", "made-up-too")));
  }

  @Test
  void a_batch_fail_of_stale_and_made_up_tokens_running_leaves_the_due_items_to_a_claim()
      throws Exception {
    assertClaimableWhileBatch(
        FAIL_BATCH,
        Map.of("defaultOnUnknownOutcome", "retry", "actor", "t"),
        (stale, other) ->
            List.of(
                failEntry(stale.id, stale.token),
                failEntry(other.id, "made-up"),
                failEntry(other.id, other.token)));
  }

  @Test
  void a_stale_intent_running_leaves_the_due_item_to_a_claim() throws Exception {
    Due due = failedForRetryNow("stale-intent");
    assertClaimableWhile(due, INTENT, Map.of("id", Long.parseLong(due.id), "token", due.token));
  }

  /**
   * A report that waited for its own claim's first report to commit reads the item as its snapshot
   * had it, still sending under its token: it must answer as the repeat it is, from the item as the
   * first report left it, not refuse it as a stale claim.
   */
  @Test
  void a_fail_that_waited_for_the_same_fail_to_commit_answers_as_its_repeat() throws Exception {
    Due due = claimed("waited-fail");
    Response repeat =
        whileCommitting(
            FAIL,
            failValues(due),
            () ->
                fail(
                    due.id,
                    Map.of("claimToken", due.token, "error", "timeout", "retryAfterSeconds", 0)));
    repeat.then().statusCode(200).body("state", equalTo("pending"));
    assertThat(closedAttempts(due.id)).isEqualTo(1);
  }

  @Test
  void a_release_that_waited_for_the_same_release_to_commit_answers_as_its_repeat()
      throws Exception {
    Due due = claimed("waited-release");
    Response repeat =
        whileCommitting(
            RELEASE,
            releaseValues(due),
            () -> release(due.id, Map.of("claimToken", due.token, "delaySeconds", 0)));
    repeat.then().statusCode(200).body("state", equalTo("pending"));
    assertThat(closedAttempts(due.id)).isEqualTo(1);
    assertThat(column(due.id, "releases")).isEqualTo("1");
  }

  /** As above, for batch entries: each, the repeated one too, answers as the repeat it is. */
  @Test
  void batch_entries_that_waited_for_the_same_finish_to_commit_answer_as_its_repeats()
      throws Exception {
    Due failing = claimed("waited-fail-batch");
    Map<String, Object> failEntry =
        Map.of(
            "id",
            failing.id,
            "claimToken",
            failing.token,
            "error",
            "timeout",
            "retryAfterSeconds",
            0);
    Response fails =
        whileCommitting(
            FAIL,
            failValues(failing),
            () ->
                json().body(Map.of("items", List.of(failEntry, failEntry))).post("/v1/items:fail"));
    assertThat(fails.<List<Integer>>path("results.status"))
        .as(fails.asString())
        .containsExactly(200, 200);
    assertThat(closedAttempts(failing.id)).isEqualTo(1);

    Due completing = claimed("waited-complete-batch");
    Map<String, Object> held = new java.util.HashMap<>();
    held.put("id", Long.parseLong(completing.id));
    held.put("token", completing.token);
    held.put("externalRef", null);
    held.put("actor", "test");
    Map<String, Object> completeEntry = Map.of("id", completing.id, "claimToken", completing.token);
    Response completes =
        whileCommitting(
            COMPLETE_HELD,
            held,
            () ->
                json()
                    .body(Map.of("items", List.of(completeEntry, completeEntry)))
                    .post("/v1/items:complete"));
    assertThat(completes.<List<Integer>>path("results.status"))
        .as(completes.asString())
        .containsExactly(200, 200);
    assertThat(closedAttempts(completing.id)).isEqualTo(1);
  }

  /** The same fail, complete or release of one claim, four at once: one finishes, three repeat. */
  @Test
  void identical_finishes_of_one_claim_at_once_all_answer_200_and_finish_it_once()
      throws Exception {
    for (int round = 0; round < 20; round++) {
      Due failing = claimed("same-fail");
      Due completing = claimed("same-complete");
      Due releasing = claimed("same-release");
      List<Response> answers =
          Race.of(
              12,
              thread ->
                  switch (thread % 3) {
                    case 0 ->
                        fail(
                            failing.id,
                            Map.of(
                                "claimToken",
                                failing.token,
                                "error",
                                "timeout",
                                "retryAfterSeconds",
                                0));
                    case 1 ->
                        complete(
                            completing.id,
                            Map.of("claimToken", completing.token, "externalRef", "msg_1"));
                    default ->
                        release(
                            releasing.id, Map.of("claimToken", releasing.token, "delaySeconds", 0));
                  });
      for (int thread = 0; thread < answers.size(); thread++) {
        assertThat(answers.get(thread).statusCode())
            .as("round %d, thread %d: %s", round, thread, answers.get(thread).asString())
            .isEqualTo(200);
      }
      assertThat(closedAttempts(failing.id)).isEqualTo(1);
      assertThat(closedAttempts(completing.id)).isEqualTo(1);
      assertThat(closedAttempts(releasing.id)).isEqualTo(1);
      assertThat(column(failing.id, "attempts")).isEqualTo("1");
      assertThat(column(completing.id, "state")).isEqualTo("done");
      assertThat(column(releasing.id, "releases")).isEqualTo("1");
    }
  }

  private record Due(String queue, String id, String token) {}

  private static Due claimed(String prefix) {
    return claimed(uniqueQueue(prefix), "k");
  }

  private static Due claimed(String queue, String key) {
    String id = enqueued(queue, key, 1);
    String token =
        claim(id, Map.of("worker", "w1")).then().statusCode(200).extract().path("claimToken");
    return new Due(queue, id, token);
  }

  /** An item whose claim failed retryable, due again at once. */
  private static Due failedForRetryNow(String prefix) {
    return failedForRetryNow(uniqueQueue(prefix), "k");
  }

  private static Due failedForRetryNow(String queue, String key) {
    Due due = claimed(queue, key);
    fail(due.id, Map.of("claimToken", due.token, "error", "timeout", "retryAfterSeconds", 0))
        .then()
        .statusCode(200)
        .body("state", equalTo("pending"));
    return due;
  }

  private static Map<String, Object> failValues(Due due) {
    return Map.of(
        "id",
        Long.parseLong(due.id),
        "token",
        due.token,
        "error",
        "timeout",
        "retryable",
        true,
        "sentUnknown",
        false,
        "delays",
        "{0}",
        "defaultOnUnknownOutcome",
        "retry",
        "actor",
        "test");
  }

  private static Map<String, Object> completeValues(String id, String token, String externalRef) {
    return Map.of(
        "id", Long.parseLong(id), "token", token, "externalRef", externalRef, "actor", "test");
  }

  /** A complete-batch entry, as the service writes it. */
  private static Map<String, Object> completeEntry(String id, String token, String externalRef) {
    return Map.of("id", Long.parseLong(id), "claim_token", token, "external_ref", externalRef);
  }

  /** A fail-batch entry, as the service writes it: retryable, due again at once. */
  private static Map<String, Object> failEntry(String id, String token) {
    return Map.of(
        "id",
        Long.parseLong(id),
        "claim_token",
        token,
        "error",
        "timeout",
        "retryable",
        true,
        "sent_unknown",
        false,
        "delays",
        List.of(0));
  }

  private static Map<String, Object> releaseValues(Due due) {
    return Map.of(
        "id",
        Long.parseLong(due.id),
        "token",
        due.token,
        "delaySeconds",
        0,
        "defaultMaxReleases",
        10,
        "actor",
        "test");
  }

  /** While the statement's transaction is open, a claim of the queue takes the due item. */
  private void assertClaimableWhile(Due due, Sql statement, Map<String, Object> values)
      throws SQLException {
    whileOpen(
        statement,
        values,
        1,
        () ->
            claimNext(due.queue, Map.of("worker", "w2"))
                .then()
                .statusCode(200)
                .body("id", equalTo(due.id)));
  }

  /**
   * Two due items of one queue, and the batch's entries for them: while the batch's transaction is
   * open, a batch claim of the queue takes both.
   */
  private void assertClaimableWhileBatch(
      Sql statement,
      Map<String, Object> values,
      BiFunction<Due, Due, List<Map<String, Object>>> entries)
      throws Exception {
    String queue = uniqueQueue("stale-batch");
    Due stale = failedForRetryNow(queue, "a");
    Due other = failedForRetryNow(queue, "b");
    Map<String, Object> all = new HashMap<>(values);
    all.put("batch", JSON.writeValueAsString(entries.apply(stale, other)));
    whileOpen(
        statement,
        all,
        2,
        () ->
            assertThat(
                    json()
                        .body(Map.of("worker", "w2", "max", 10))
                        .post("/v1/queues/{q}/claim:batch", queue)
                        .then()
                        .statusCode(200)
                        .extract()
                        .<List<String>>path("items.id"))
                .containsExactlyInAnyOrder(stale.id, other.id));
  }

  /** The claim, run while the statement's transaction is open: its rows all changed nothing. */
  private void whileOpen(Sql statement, Map<String, Object> values, int rows, Runnable claim)
      throws SQLException {
    try (Connection report = dataSource.getConnection()) {
      report.setAutoCommit(false);
      try {
        assertThat(run(statement, values, report))
            .as("the report changes nothing")
            .containsOnly(false)
            .hasSize(rows);
        claim.run();
      } finally {
        report.rollback();
        report.setAutoCommit(true);
      }
    }
  }

  /** Runs the statement in a transaction, sends the request, and commits once it waits. */
  private Response whileCommitting(
      Sql statement, Map<String, Object> values, Supplier<Response> request) throws Exception {
    try (Connection first = dataSource.getConnection()) {
      first.setAutoCommit(false);
      try {
        assertThat(run(statement, values, first)).containsExactly(true);
        return Locks.sentWhileHeld(dataSource, first, request);
      } finally {
        first.rollback(); // nothing left to roll back once committed
        first.setAutoCommit(true);
      }
    }
  }

  private static List<Boolean> run(Sql statement, Map<String, Object> values, Connection on) {
    Sql.Call call = statement.on(on);
    values.forEach(call::set);
    return call.list(row -> row.getBoolean("changed"));
  }

  private long closedAttempts(String id) throws SQLException {
    return Long.parseLong(
        query("SELECT count(*) FROM attempt WHERE finished_at IS NOT NULL AND item_id = ?", id));
  }

  private String column(String id, String column) throws SQLException {
    return query("SELECT " + column + "::text FROM item WHERE id = ?", id);
  }

  private String query(String sql, String id) throws SQLException {
    try (Connection connection = dataSource.getConnection();
        PreparedStatement statement = connection.prepareStatement(sql)) {
      statement.setLong(1, Long.parseLong(id));
      try (ResultSet row = statement.executeQuery()) {
        assertThat(row.next()).isTrue();
        return row.getString(1);
      }
    }
  }
}
