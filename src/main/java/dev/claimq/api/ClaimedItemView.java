package dev.claimq.api;

import com.fasterxml.jackson.annotation.JsonUnwrapped;
import dev.claimq.store.Item;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** The answer to a won claim: the item, plus the token only its holder ever sees. */
@Schema(
    name = "ClaimedItem",
    description = "An item this worker now holds, with its claim token.",
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
      "claimToken"
    })
public record ClaimedItemView(
    @JsonUnwrapped ItemView item,
    @Schema(
            description =
                "Proof of this claim: send it with heartbeat, complete and fail. Shown only here.")
        String claimToken) {

  /** A claimed item: its claim token is the claimer's. */
  static ClaimedItemView of(Item item) {
    return new ClaimedItemView(ItemView.of(item), item.claimToken);
  }
}
