package dev.claimq.api;

import static dev.claimq.Api.actionsOn;
import static dev.claimq.Api.claimNext;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.failedForGood;
import static dev.claimq.Api.item;
import static dev.claimq.Api.json;
import static dev.claimq.Api.problem;
import static dev.claimq.Api.retry;
import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import dev.claimq.AsAdmin;
import dev.claimq.Race;
import dev.claimq.store.Sql;
import dev.claimq.store.SqlFile;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.time.Instant;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * A filtered action confirmed with its dry run's previewTag acts on exactly the items the dry run
 * listed, each as it was then, or on none. Without it, the confirmation runs the filter again and
 * acts on whatever matches by then: a failure that arrived after the preview, or an item that was
 * retried and failed again since (retried once more: sent once more).
 */
@QuarkusTest
class BulkPreviewTest extends AsAdmin {
  private static final Sql PREVIEW =
      SqlFile.load("db/item.sql")
          .take(
              "preview-matching",
              "action",
              "state",
              "queues",
              "reason",
              "updatedAfter",
              "updatedBefore",
              "defaultLeaseSeconds",
              "limit");

  @Inject DataSource dataSource;

  @Test
  void a_confirmation_with_the_dry_runs_tag_acts_on_exactly_the_items_it_listed() {
    String queue = uniqueQueue("preview");
    List<String> failed = List.of(failedItem(queue, "a"), failedItem(queue, "b"));
    Response dry = bulk("retry", filter(queue, true, null));
    dry.then().statusCode(200).body("dryRun", equalTo(true)).body("items.size()", equalTo(2));
    String tag = dry.path("previewTag");
    assertThat(tag).matches("[0-9a-f]{32}");
    assertThat(bulk("retry", filter(queue, true, null)).<String>path("previewTag"))
        .as("a dry run changes nothing, so a second one has the same tag")
        .isEqualTo(tag);

    Response done = bulk("retry", filter(queue, false, tag));
    done.then().statusCode(200).body("dryRun", equalTo(false)).body("items.size()", equalTo(2));
    assertThat(done.<String>path("previewTag")).isEqualTo(tag);
    for (String id : failed) {
      item(id).then().body("state", equalTo("pending"));
      assertThat(actionsOn(id)).containsExactly("retry");
    }
  }

  @Test
  void a_failure_that_arrives_after_the_dry_run_refuses_the_confirmation_and_nothing_is_done() {
    String queue = uniqueQueue("preview");
    String listed = failedItem(queue, "a");
    String tag = bulk("retry", filter(queue, true, null)).path("previewTag");
    String late = failedItem(queue, "late");

    problem(bulk("retry", filter(queue, false, tag)), 409, "preview-changed")
        .body("detail", containsString("(2 items match)"))
        .body("detail", containsString("Nothing was done."));
    for (String id : List.of(listed, late)) {
      item(id).then().body("state", equalTo("failed"));
      assertThat(actionsOn(id)).isEmpty();
    }
  }

  @Test
  void an_updated_before_keeps_later_failures_out_so_the_listed_items_are_still_confirmed() {
    String queue = uniqueQueue("preview");
    String listed = failedItem(queue, "a");
    Response dry = bulk("retry", filter(queue, true, null));
    String upTo = Instant.parse(dry.path("items[0].updatedAt")).plusMillis(1).toString();
    String late = failedItem(queue, "late");

    Map<String, Object> confirm = filter(queue, false, dry.path("previewTag"));
    confirm.put("updatedBefore", upTo);
    bulk("retry", confirm).then().statusCode(200).body("items.id", equalTo(List.of(listed)));
    item(late).then().body("state", equalTo("failed"));
  }

  @Test
  void a_listed_item_retried_and_failed_again_since_refuses_the_confirmation() {
    String queue = uniqueQueue("preview");
    String again = failedItem(queue, "a");
    String other = failedItem(queue, "b");
    String tag = bulk("retry", filter(queue, true, null)).path("previewTag");
    // Another operator retries one; it is sent, and fails again: failed, as listed, but a retry
    // now would be its third send, which nobody previewed.
    retry(again).then().statusCode(200);
    failedForGood(again);

    problem(bulk("retry", filter(queue, false, tag)), 409, "preview-changed");
    assertThat(actionsOn(again)).containsExactly("retry");
    assertThat(actionsOn(other)).isEmpty();
    item(other).then().body("state", equalTo("failed"));
  }

  @Test
  void a_confirmation_repeated_because_its_answer_was_lost_is_a_409_and_does_nothing_more() {
    String queue = uniqueQueue("preview");
    String id = failedItem(queue, "a");
    String tag = bulk("retry", filter(queue, true, null)).path("previewTag");
    bulk("retry", filter(queue, false, tag)).then().statusCode(200); // its answer is lost
    failedForGood(id); // and the item, sent again, fails again: it matches the filter again

    // Without the tag the repeat would retry it once more (a third send nobody previewed).
    problem(bulk("retry", filter(queue, false, tag)), 409, "preview-changed")
        .body("detail", containsString("(1 item matches)"));
    assertThat(actionsOn(id)).containsExactly("retry");
    item(id).then().body("state", equalTo("failed"));
  }

  @Test
  void of_confirmations_of_one_dry_run_racing_exactly_one_acts() throws Exception {
    String queue = uniqueQueue("preview");
    List<String> failed = List.of(failedItem(queue, "a"), failedItem(queue, "b"));
    String tag = bulk("retry", filter(queue, true, null)).path("previewTag");

    List<Integer> statuses = Race.of(8, i -> bulk("retry", filter(queue, false, tag)).statusCode());

    assertThat(Collections.frequency(statuses, 200)).as(statuses.toString()).isEqualTo(1);
    assertThat(Collections.frequency(statuses, 409)).as(statuses.toString()).isEqualTo(7);
    for (String id : failed) {
      assertThat(actionsOn(id)).containsExactly("retry");
    }
  }

  @Test
  void a_dry_run_of_held_items_confirms_an_approval_and_refuses_it_once_one_was_decided() {
    String queue = ApprovalGateTest.gated("preview");
    String first = enqueued(queue, "a", 1);
    String second = enqueued(queue, "b", 1);
    Map<String, Object> held = new HashMap<>(Map.of("queue", queue, "dryRun", true));
    String tag = bulk("approve", held).path("previewTag");
    ApprovalGateTest.reject(second, Map.of("reason", "not this one")).then().statusCode(200);

    held.put("dryRun", false);
    held.put("previewTag", tag);
    problem(bulk("approve", held), 409, "preview-changed")
        .body("detail", containsString("(1 item matches)"));
    item(first).then().body("state", equalTo("held"));

    held.put("dryRun", true);
    held.remove("previewTag");
    String now = bulk("approve", held).path("previewTag");
    held.put("dryRun", false);
    held.put("previewTag", now);
    bulk("approve", held).then().statusCode(200).body("items.id", equalTo(List.of(first)));
    item(first).then().body("state", equalTo("pending"));
  }

  @Test
  void a_dry_run_of_nothing_confirms_nothing_and_refuses_once_something_matches() {
    String queue = uniqueQueue("preview");
    String tag = bulk("cancel", filter(queue, true, null)).path("previewTag");
    bulk("cancel", filter(queue, false, tag))
        .then()
        .statusCode(200)
        .body("items.size()", equalTo(0));
    String late = failedItem(queue, "late");
    problem(bulk("cancel", filter(queue, false, tag)), 409, "preview-changed");
    item(late).then().body("state", equalTo("failed"));
  }

  @Test
  void a_preview_tag_of_another_action_or_filter_is_not_this_ones() {
    String queue = uniqueQueue("preview");
    String id = failedItem(queue, "a");
    String retryTag = bulk("retry", filter(queue, true, null)).path("previewTag");
    // The same items, but previewed for a retry: a cancel is not what was previewed, and the
    // refusal says the tag may be another action's (it said only that items had changed).
    problem(bulk("cancel", filter(queue, false, retryTag)), 409, "preview-changed")
        .body("detail", containsString("not that of a dry run of this cancel"))
        .body("detail", containsString("from a dry run of another action or filter"));
    item(id).then().body("state", equalTo("failed"));
  }

  @Test
  void a_preview_tag_on_a_dry_run_or_malformed_is_a_400_naming_it() {
    String queue = uniqueQueue("preview");
    String id = failedItem(queue, "a");
    String tag = bulk("retry", filter(queue, true, null)).path("previewTag");
    problem(bulk("retry", filter(queue, true, tag)), 400, "invalid-request")
        .body("errors[0].field", equalTo("previewTag"));
    problem(bulk("retry", filter(queue, false, tag.toUpperCase())), 400, "invalid-request")
        .body("errors[0].field", equalTo("previewTag"));
    problem(bulk("retry", filter(queue, false, "")), 400, "invalid-request")
        .body("errors[0].field", equalTo("previewTag"));
    item(id).then().body("state", equalTo("failed"));
  }

  /**
   * A dry run of a cancel lists due pending items and must not stand in a claim's way: claims step
   * past locked rows (SKIP LOCKED), so a preview that locked what it lists would answer "nothing
   * due" to every worker while it ran. The service's dry-run statement runs here in a transaction
   * the test keeps open, which makes that moment last as long as the test needs.
   */
  @Test
  void a_dry_run_running_leaves_the_due_items_it_lists_to_claims() throws Exception {
    String queue = uniqueQueue("preview-claimable");
    String id = enqueued(queue, "a", 1);
    try (Connection preview = dataSource.getConnection()) {
      preview.setAutoCommit(false);
      try {
        List<String> listed =
            PREVIEW
                .on(preview)
                .set("action", "cancel")
                .set("state", "pending")
                .set("queues", new String[] {queue})
                .set("reason", null)
                .set("updatedAfter", null)
                .set("updatedBefore", null)
                .set("defaultLeaseSeconds", 30)
                .set("limit", 100)
                .list(row -> row.getString("id"));
        assertThat(listed).as("the dry run lists the pending item").containsExactly(id);
        claimNext(queue, Map.of("worker", "w1")).then().statusCode(200).body("id", equalTo(id));
      } finally {
        preview.rollback();
        preview.setAutoCommit(true);
      }
    }
  }

  /**
   * The dry run's statement is written out on its own, without the lock; its filter, order, limit
   * and tag must stay act-on-matching's, or a confirmation would never match its preview.
   */
  @Test
  void the_dry_run_picks_and_tags_as_the_action_does_clause_for_clause() {
    Map<String, SqlFile.Block> blocks = SqlFile.load("db/item.sql").blocks();
    String acting = blocks.get("act-on-matching").sql();
    String previewing = blocks.get("preview-matching").sql();
    String lock = "\n  FOR UPDATE OF i SKIP LOCKED\n";
    assertThat(acting).contains(lock);
    assertThat(until("\nchosen AS", previewing))
        .isEqualTo(until("\nchosen AS", acting).replace(lock, "\n"));
    assertThat(between("FROM (SELECT md5", "FROM chosen) tagged", previewing))
        .isEqualTo(between("FROM (SELECT md5", "FROM chosen) tagged", acting));
  }

  private static String until(String end, String sql) {
    return sql.substring(0, sql.indexOf(end));
  }

  private static String between(String start, String end, String sql) {
    return sql.substring(sql.indexOf(start), sql.indexOf(end));
  }

  private static Map<String, Object> filter(String queue, boolean dryRun, String previewTag) {
    Map<String, Object> body = new HashMap<>(Map.of("queue", queue, "dryRun", dryRun));
    if (previewTag != null) {
      body.put("previewTag", previewTag);
    }
    return body;
  }

  private static Response bulk(String action, Map<String, ?> body) {
    return json().body(body).post("/v1/items:" + action);
  }

  /** An item enqueued with one attempt and failed for good. */
  private static String failedItem(String queue, String key) {
    String id = enqueued(queue, key, 1);
    failedForGood(id);
    return id;
  }
}
