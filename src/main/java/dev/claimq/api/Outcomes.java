package dev.claimq.api;

import dev.claimq.queue.Answer;
import dev.claimq.queue.Outcome;
import dev.claimq.store.Item;
import dev.claimq.store.ItemState;
import dev.claimq.telemetry.ItemLog;
import dev.claimq.telemetry.LogText;
import java.time.Duration;
import java.util.Set;

/**
 * The one table from what a use case did to what the client hears: the status, and for a refusal
 * its problem type, title and detail. Single calls and batch entries both answer from it.
 */
final class Outcomes {
  private Outcomes() {}

  /** A status, and for a refusal (4xx) the problem's slug and title. */
  record Status(int code, String slug, String title) {
    boolean refusal() {
      return code >= 400;
    }
  }

  static Status of(Outcome outcome) {
    return switch (outcome) {
      case CREATED -> new Status(201, null, null);
      case CHANGED, REPLAYED -> new Status(200, null, null);
      case NOT_CLAIMED -> new Status(204, null, null);
      case NOT_FOUND -> new Status(404, "item-not-found", "Item not found");
      case STALE_CLAIM, LATE_SUCCESS -> new Status(409, "stale-claim", "Stale claim");
      case NOT_RETRYABLE, NOT_CANCELLABLE, NOT_RESOLVABLE, NOT_HELD ->
          new Status(409, "state-conflict", "Not allowed in this state");
      case RELEASE_LIMIT -> new Status(409, "release-limit", "Release limit reached");
      case DIFFERENT_REPORT, DIFFERENT_FAIL, DIFFERENT_RELEASE ->
          new Status(409, "different-report", "Different report");
      case PAST_HORIZON ->
          new Status(409, "idempotency-horizon-passed", "Idempotency horizon passed");
      case RETRIED_PAST_HORIZON -> new Status(200, null, null);
      case POLICY_DOES_NOT_FIT -> new Status(422, "policy-does-not-fit", "Policy does not fit");
      case STALE_POLICY -> new Status(412, "policy-changed", "Policy changed since it was read");
      case STALE_ITEM -> new Status(412, "item-changed", "Item changed since it was read");
      case KEY_REUSED -> new Status(422, "dedupe-key-reused", "Dedupe key reused");
    };
  }

  /**
   * An operator's action refused for the item's state. The answer shows the item as it is after the
   * refusal, which can be a state the action takes (a concurrent change committed while the
   * action's statement ran, after it had judged the item): then that is what the detail says.
   */
  private static String notInThisState(
      Item item, Set<ItemState> takes, String rule, String action) {
    String state = item.state.wireName();
    if (takes.contains(item.state)) {
      return "Item "
          + item.id
          + " became "
          + state
          + " while this "
          + action
          + " ran, in a change made at the same moment: send the "
          + action
          + " again if it still applies.";
    }
    return "Item " + item.id + " is " + state + ": " + rule;
  }

  /** Why a refusal, in words a client can act on; {@code id} is the id as the client named it. */
  static String detail(Answer answer, String id) {
    Item item = answer.item();
    return switch (answer.outcome()) {
      case NOT_FOUND -> "No item has id '" + id + "'.";
      case STALE_CLAIM ->
          "The claim token is not the current claim of item "
              + item.id
              + " (the item is now "
              + item.state.wireName()
              + "). Its lease may have expired; stop working on this item.";
      case LATE_SUCCESS ->
          "The claim token is not the current claim of item "
              + item.id
              + " (the item is now "
              + item.state.wireName()
              + (item.externalRef == null
                  ? ""
                  : ", with externalRef '"
                      + LogText.oneLine(LogText.shortened(item.externalRef))
                      + "'")
              + "), but your externalRef was recorded as a late success of your attempt. Do not"
              + " resend. If the item is done with another externalRef than yours, the provider"
              + " took two sends, and claimq counts the second (duplicateSends).";
      case NOT_RETRYABLE ->
          item.prunedAt != null
              ? "Item "
                  + item.id
                  + " is a tombstone: its payload was pruned, so it cannot be sent again."
              : notInThisState(
                  item,
                  Set.of(ItemState.FAILED, ItemState.CANCELLED),
                  "only failed or cancelled items can be retried.",
                  "retry");
      case NOT_CANCELLABLE ->
          notInThisState(
              item,
              Set.of(ItemState.PENDING, ItemState.FAILED),
              "only pending or failed items can be cancelled.",
              "cancel");
      case NOT_RESOLVABLE ->
          notInThisState(
              item, Set.of(ItemState.FAILED), "only failed items can be resolved.", "resolve");
      case NOT_HELD ->
          notInThisState(
              item,
              Set.of(ItemState.HELD),
              "only held items can be approved or rejected (another operator may have decided"
                  + " first).",
              "decision");
      case RELEASE_LIMIT ->
          "Item "
              + item.id
              + " has been released "
              + item.releases
              + " times, its queue's limit: the claim is still yours; complete or fail it.";
      case DIFFERENT_REPORT ->
          "Item "
              + item.id
              + " was completed by this claim with "
              + (item.externalRef == null
                  ? "no externalRef"
                  : "externalRef '" + item.externalRef + "'")
              + ": a repeated complete must carry the same. The first report stands; do not"
              + " resend.";
      case DIFFERENT_FAIL ->
          "Item "
              + item.id
              + " was failed by this claim with another report (its error was '"
              + LogText.shortened(String.valueOf(answer.differs()))
              + "'): a repeated fail must carry the same error and sent, give no other"
              + " retryAfterSeconds than the first, and not be retryable false after a first"
              + " that retried. The first report stands.";
      case DIFFERENT_RELEASE ->
          "Item "
              + item.id
              + " was released by this claim to be due again after "
              + Duration.between(item.updatedAt, item.runAt).toSeconds()
              + " seconds: a repeated release must carry the same delaySeconds. The first report"
              + " stands; the claim is no longer yours.";
      case KEY_REUSED ->
          "Queue '"
              + item.queue
              + "' already has item "
              + item.id
              + " with dedupe key '"
              + item.dedupeKey
              + "' and "
              + reusedFor(answer.differs(), item)
              + ". A dedupe key names one piece of work: use a new key for different work.";
      case PAST_HORIZON ->
          "Item "
              + item.id
              + " is past its queue's providerKeyTtl: the provider may no longer know its"
              + " idempotency key, so a retry could be a second send. Check with the provider,"
              + " then retry with force=true (or resolve it if it was sent).";
      case POLICY_DOES_NOT_FIT -> "The policy does not fit in its providerKeyTtl.";
      case STALE_POLICY -> "The policy changed since the read If-Match names.";
      case STALE_ITEM ->
          "Item "
              + item.id
              + " is at "
              + EntityTags.of(item.version)
              + ", not at a version If-Match names: it changed since the read that ETag came"
              + " from (it is now "
              + item.state.wireName()
              + ", last changed at "
              + item.updatedAt
              + "). Nothing was done. Read it again, with its actions, and send the request"
              + " again if it still applies.";
      case CREATED, CHANGED, REPLAYED, NOT_CLAIMED, RETRIED_PAST_HORIZON -> null;
    };
  }

  /** What a reused dedupe key's item has that the enqueue asked otherwise. */
  private static String reusedFor(String differs, Item item) {
    return switch (differs) {
      case "priority" -> "priority " + item.priority + ": a replay that gives priority must match";
      case "maxAttempts" ->
          "maxAttempts " + item.maxAttempts + ": a replay that gives maxAttempts must match";
      case "runAt" ->
          "runAt " + item.enqueuedRunAt + " as enqueued: a replay that gives runAt must match";
      default -> "a different payload";
    };
  }

  /** The answer's item when the outcome is a success; a refusal is thrown, as its problem. */
  static Item itemOf(Answer answer, long id) {
    ItemLog.about(answer.item()); // a problem line about this item carries it as fields
    if (of(answer.outcome()).refusal()) {
      throw new RefusedException(answer, Long.toString(id));
    }
    return answer.item();
  }

  /** The same, for an answer that names its item whenever it refuses (an enqueue's). */
  static Item itemOf(Answer answer) {
    return itemOf(answer, answer.item() == null ? 0 : answer.item().id);
  }

  /** A refusal on its way to the client as problem+json (see ProblemMappers). */
  static final class RefusedException extends RuntimeException {
    final Status status;

    RefusedException(Outcome outcome, String id, Item item) {
      this(new Answer(outcome, item), id);
    }

    RefusedException(Answer answer, String id) {
      this(of(answer.outcome()), detail(answer, id));
    }

    RefusedException(Status status, String detail) {
      super(detail, null, false, false); // an answer, not a failure: no trace
      this.status = status;
    }
  }
}
