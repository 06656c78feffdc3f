package dev.claimq.api;

import dev.claimq.queue.Answer;
import dev.claimq.store.Attempt;
import dev.claimq.store.ItemAction;
import dev.claimq.store.QueueStats;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** Response bodies other than the item itself. */
public final class Views {
  private Views() {}

  @Schema(
      name = "ClaimedItems",
      description = "The items claimed by one batch claim.",
      requiredProperties = "items")
  public record ClaimedItems(List<ClaimedItemView> items) {}

  @Schema(
      name = "BatchResult",
      description = "One entry's outcome, in the order sent.",
      requiredProperties = "status")
  @com.fasterxml.jackson.annotation.JsonInclude(
      com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
  public record BatchResultView(
      @Schema(description = "What the single call would have answered: 200, 201, 404, 409, 422.")
          int status,
      @Schema(
              description =
                  "When the entry did not succeed, the problem type the single call would have"
                      + " answered (a 409 may be a stale claim or a different report, say).",
              examples = "https://claimq.dev/problems/stale-claim")
          String type,
      @Schema(description = "The item, when the entry succeeded.") ItemView item,
      @Schema(description = "Why not, when it did not.") String detail) {

    /** An entry's answer; {@code id} is the entry's item id as sent (null for an enqueue). */
    static BatchResultView of(Answer answer, String id) {
      Outcomes.Status status = Outcomes.of(answer.outcome());
      return status.refusal()
          ? new BatchResultView(
              status.code(), Problem.TYPE_BASE + status.slug(), null, Outcomes.detail(answer, id))
          : new BatchResultView(status.code(), null, ItemView.of(answer.item()), null);
    }
  }

  @Schema(name = "BatchResults", requiredProperties = "results")
  public record BatchResults(List<BatchResultView> results) {

    static BatchResults of(List<Answer> answers) {
      return new BatchResults(answers.stream().map(a -> BatchResultView.of(a, null)).toList());
    }

    /** Answers to entries that name items: {@code ids}, as sent, in the same order. */
    static BatchResults of(List<Answer> answers, List<String> ids) {
      List<BatchResultView> results = new java.util.ArrayList<>();
      for (int i = 0; i < answers.size(); i++) {
        results.add(BatchResultView.of(answers.get(i), ids.get(i)));
      }
      return new BatchResults(results);
    }
  }

  @Schema(
      name = "ItemPage",
      requiredProperties = {"items", "nextCursor"})
  public record ItemPage(
      List<ItemView> items,
      @Schema(
              description = "Pass as cursor for the next page; null on the last page.",
              nullable = true)
          String nextCursor) {}

  @Schema(
      name = "Attempt",
      description = "One claim of an item and how it ended.",
      requiredProperties = {
        "attempt",
        "worker",
        "claimedAt",
        "intentAt",
        "finishedAt",
        "outcome",
        "sentUnknown",
        "error",
        "finishedBy"
      })
  public record AttemptView(
      @Schema(
              description =
                  "The item's attempt count when claimed (1 = first), as counted against"
                      + " maxAttempts: a released claim gives its count back and an operator's"
                      + " retry starts it at 1 again, so a number can appear twice. The list is"
                      + " in claim order.")
          int attempt,
      @Schema(description = "The name the worker gave, if any.", nullable = true) String worker,
      Instant claimedAt,
      @Schema(
              description = "When the worker declared it was about to send; null if it did not.",
              nullable = true)
          Instant intentAt,
      @Schema(description = "Null while the claim is still open.", nullable = true)
          Instant finishedAt,
      @Schema(
              description = "Null while open.",
              nullable = true,
              enumeration = {"done", "retry", "failed", "lease_expired", "released"})
          String outcome,
      @Schema(description = "A fail whose worker could not tell whether the provider acted.")
          boolean sentUnknown,
      @Schema(
              description = "The failure reason, secrets redacted; null unless it failed.",
              nullable = true)
          String error,
      @Schema(
              description = "The key that completed or failed it; null for an expired lease.",
              nullable = true)
          String finishedBy,
      @Schema(
              description =
                  "Only when a complete came after this claim had ended, saying its send"
                      + " happened.")
          @com.fasterxml.jackson.annotation.JsonInclude(
              com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
          LateSuccess lateSuccess) {

    static AttemptView of(Attempt attempt) {
      return new AttemptView(
          attempt.attempt,
          attempt.worker,
          attempt.claimedAt,
          attempt.intentAt,
          attempt.finishedAt,
          attempt.outcome,
          attempt.sentUnknown,
          attempt.error,
          attempt.finishedBy,
          attempt.lateReportedAt == null
              ? null
              : new LateSuccess(
                  attempt.lateExternalRef, attempt.lateReportedAt, attempt.lateReportedBy));
    }
  }

  @Schema(
      name = "LateSuccess",
      requiredProperties = {"externalRef", "reportedAt", "reportedBy"})
  public record LateSuccess(
      String externalRef,
      Instant reportedAt,
      @Schema(description = "The key that reported it.", nullable = true) String reportedBy) {}

  @Schema(name = "AttemptList", requiredProperties = "attempts")
  public record AttemptList(List<AttemptView> attempts) {}

  @Schema(
      name = "Action",
      description = "An operator's retry, cancel, resolve, approval or rejection.",
      requiredProperties = {"action", "actor", "at", "note"})
  public record ActionView(
      @Schema(enumeration = {"retry", "cancel", "resolve", "approve", "reject"}) String action,
      @Schema(description = "The name of the key that did it.") String actor,
      Instant at,
      @Schema(
              description =
                  "Why, as the operator said it; null unless given. An action of a bulk call"
                      + " says bulk (a bulk reject: its reason); a retry forced past the"
                      + " provider's idempotency horizon says so.",
              nullable = true)
          String note) {

    static ActionView of(ItemAction action) {
      return new ActionView(action.action, action.actor, action.at, action.note);
    }
  }

  @Schema(name = "ActionList", requiredProperties = "actions")
  public record ActionList(List<ActionView> actions) {}

  @Schema(
      name = "StateCounts",
      description =
          "Live items by state. Done and cancelled items are not counted: their number only"
              + " grows, and counting it would cost a scan of the table (throughput is in the"
              + " metrics).",
      requiredProperties = {"held", "pending", "sending", "failed"})
  public record StateCounts(
      @Schema(description = "Waiting for an operator's approval (a queue's requireApproval).")
          long held,
      long pending,
      long sending,
      long failed) {}

  @Schema(
      name = "Queue",
      requiredProperties = {
        "queue",
        "counts",
        "dueNextMinute",
        "oldestDuePendingAgeSeconds",
        "oldestHeldAgeSeconds",
        "paused",
        "doneLastMinute",
        "failedLastMinute"
      })
  public record QueueView(
      String queue,
      StateCounts counts,
      @Schema(description = "Pending items that come due within the next minute.")
          long dueNextMinute,
      @Schema(
              description =
                  "Seconds the oldest due pending item has waited, from its runAt, or from its"
                      + " enqueue when runAt was earlier; null when none is due.",
              nullable = true)
          Double oldestDuePendingAgeSeconds,
      @Schema(
              description =
                  "Seconds the oldest held item has waited for approval; null when none is held.",
              nullable = true)
          Double oldestHeldAgeSeconds,
      @Schema(description = "Claims answer 204 until an operator resumes the queue.")
          boolean paused,
      @Schema(
              description =
                  "Attempts completed by their claim in the last minute: the queue's throughput"
                      + " (a late success is not counted again).")
          long doneLastMinute,
      @Schema(
              description =
                  "Attempts that failed (retried or for good) or whose lease expired, in the last"
                      + " minute.")
          long failedLastMinute) {

    /** The queue's live state with its last minute's throughput ({done, failed}, or null). */
    static QueueView of(QueueStats stats, long[] lastMinute) {
      return new QueueView(
          stats.queue(),
          new StateCounts(stats.held(), stats.pending(), stats.sending(), stats.failed()),
          stats.dueNextMinute(),
          stats.oldestDuePendingAgeSeconds(),
          stats.oldestHeldAgeSeconds(),
          stats.paused(),
          lastMinute == null ? 0 : lastMinute[0],
          lastMinute == null ? 0 : lastMinute[1]);
    }
  }

  @Schema(
      name = "Me",
      description = "The key behind the request: its name, roles and the queues it may use.",
      requiredProperties = {"name", "roles", "queues"})
  public record Me(
      @Schema(description = "The key's name, recorded on what it does.") String name,
      @Schema(description = "agent, worker and/or operator.") List<String> roles,
      @Schema(description = "The queues it may use; [\"*\"] for every queue.")
          List<String> queues) {}

  @Schema(name = "ItemList", requiredProperties = "items")
  public record ItemList(List<ItemView> items) {}

  @Schema(
      name = "BulkResult",
      description =
          "The items an operator's filtered retry or cancel acted on, or with dryRun would.",
      requiredProperties = {"dryRun", "items", "more", "previewTag"})
  public record BulkResult(
      @Schema(description = "True: nothing was changed; items are what would be.") boolean dryRun,
      @Schema(description = "Newest first, at most the request's limit.") List<ItemView> items,
      @Schema(description = "More items match beyond the limit: call again for them.") boolean more,
      @Schema(
              description =
                  "Names the items picked, each as it was when picked. From a dry run, send it"
                      + " back with the same filter to act on exactly the items listed, unchanged"
                      + " (otherwise 409 preview-changed, and nothing done).",
              pattern = "^[0-9a-f]{32}$",
              examples = "5d41402abc4b2a76b9719d911017c592")
          String previewTag) {}

  @Schema(
      name = "QueueList",
      requiredProperties = {"queues", "nextCursor", "totals"})
  public record QueueList(
      @Schema(description = "This page's queues, by name.") List<QueueView> queues,
      @Schema(
              description = "Pass as cursor for the next page; null on the last page.",
              nullable = true)
          String nextCursor,
      QueueTotals totals) {}

  @Schema(
      name = "QueueTotals",
      description = "Every queue of the listing, on every page: how many, and their live counts.",
      requiredProperties = {"queues", "counts"})
  public record QueueTotals(long queues, StateCounts counts) {

    static QueueTotals of(Collection<QueueStats> all) {
      return new QueueTotals(
          all.size(),
          new StateCounts(
              all.stream().mapToLong(QueueStats::held).sum(),
              all.stream().mapToLong(QueueStats::pending).sum(),
              all.stream().mapToLong(QueueStats::sending).sum(),
              all.stream().mapToLong(QueueStats::failed).sum()));
    }
  }

  @Schema(
      name = "QueueAction",
      description = "An operator's policy change, pause or resume of a queue.",
      requiredProperties = {"action", "actor", "at", "policy"})
  public record QueueActionView(
      @Schema(enumeration = {"policy", "pause", "resume"}) String action,
      @Schema(description = "The name of the key that did it.") String actor,
      Instant at,
      @Schema(
              ref = "JsonValue",
              description = "The policy as it was set; null unless a policy change.",
              nullable = true)
          @com.fasterxml.jackson.annotation.JsonRawValue
          String policy) {

    static QueueActionView of(dev.claimq.store.QueueAction action) {
      return new QueueActionView(action.action, action.actor, action.at, action.policy);
    }
  }

  @Schema(name = "QueueActionList", requiredProperties = "actions")
  public record QueueActionList(List<QueueActionView> actions) {}
}
