package dev.claimq.api;

import dev.claimq.queue.Attempt;
import dev.claimq.queue.QueueStats;
import java.time.Instant;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** Response bodies other than the item itself. */
public final class Views {
  private Views() {}

  @Schema(name = "ItemPage")
  public record ItemPage(
      List<ItemView> items,
      @Schema(description = "Pass as cursor for the next page; null on the last page.")
          String nextCursor) {}

  @Schema(name = "Attempt", description = "One claim of an item and how it ended.")
  public record AttemptView(
      @Schema(description = "The item's attempt count when claimed (1 = first).") int attempt,
      String worker,
      Instant claimedAt,
      @Schema(description = "Null while the claim is still open.") Instant finishedAt,
      @Schema(
              description = "Null while open.",
              enumeration = {"done", "retry", "failed", "lease_expired"})
          String outcome,
      String error) {

    static AttemptView of(Attempt attempt) {
      return new AttemptView(
          attempt.attempt,
          attempt.worker,
          attempt.claimedAt,
          attempt.finishedAt,
          attempt.outcome,
          attempt.error);
    }
  }

  @Schema(name = "AttemptList")
  public record AttemptList(List<AttemptView> attempts) {}

  @Schema(name = "StateCounts")
  public record StateCounts(long pending, long sending, long done, long failed, long cancelled) {}

  @Schema(name = "Queue")
  public record QueueView(
      String queue,
      StateCounts counts,
      @Schema(
              description =
                  "Seconds the oldest due pending item has waited; null when none is due.")
          Double oldestDuePendingAgeSeconds) {

    static QueueView of(QueueStats stats) {
      return new QueueView(
          stats.queue(),
          new StateCounts(
              stats.pending(), stats.sending(), stats.done(), stats.failed(), stats.cancelled()),
          stats.oldestDuePendingAgeSeconds());
    }
  }

  @Schema(name = "QueueList")
  public record QueueList(List<QueueView> queues) {}
}
