package dev.claimq.api;

import com.fasterxml.jackson.annotation.JsonUnwrapped;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/**
 * The answer to a complete or fail that asked for the next claim: the finished item, then the
 * queue's next item as claimNext answers it, or null when none was claimable in time.
 */
@Schema(
    name = "FinishedItem",
    description =
        "The finished item; with next only when the request asked for the next claim (a request"
            + " without next is answered exactly as the item).",
    requiredProperties = {
      "id",
      "queue",
      "dedupeKey",
      "state",
      "payload",
      "priority",
      "attempts",
      "maxAttempts",
      "runAt",
      "idempotencyKey",
      "claimedBy",
      "leaseExpiresAt",
      "externalRef",
      "lastError",
      "enqueuedBy",
      "createdAt",
      "updatedAt",
      "duplicateSends",
      "pruned",
      "traceparent"
    })
public record FinishedItemView(
    @JsonUnwrapped ItemView item,
    // Last: the finished item's own properties come first, as in a finish without next.
    @Schema(
            nullable = true,
            description =
                "The next item this worker now holds, with its claim token, as claimNext answers"
                    + " it; null when nothing was claimable within next.waitSeconds, and always"
                    + " null when this finish was a repeat of an accepted one.")
        ClaimedItemView next) {}
