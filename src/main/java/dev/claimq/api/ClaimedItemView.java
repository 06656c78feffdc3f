package dev.claimq.api;

import com.fasterxml.jackson.annotation.JsonUnwrapped;
import dev.claimq.store.Item;
import java.util.List;
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
      "duplicateSends",
      "pruned",
      "traceparent",
      "claimToken",
      "possiblySent",
      "priorAttempts"
    })
public record ClaimedItemView(
    @JsonUnwrapped ItemView item,
    @Schema(
            description =
                "An earlier attempt may have sent: it declared a send intent and ended without a"
                    + " complete, or failed not knowing whether the provider acted, or reported"
                    + " its send late (alreadySent then names it). Before sending, ask the"
                    + " provider, by idempotencyKey, whether it already did.")
        boolean possiblySent,
    @Schema(description = "Every earlier attempt of this item, oldest first.")
        List<Views.AttemptView> priorAttempts,
    // Last, as before these fields: a client that reads the token from the end keeps working.
    @Schema(
            description =
                "Proof of this claim: send it with heartbeat, complete and fail. Shown only here.")
        String claimToken) {

  /** A claimed item: its claim token is the claimer's. */
  static ClaimedItemView of(Item item) {
    return new ClaimedItemView(
        ItemView.of(item),
        Boolean.TRUE.equals(item.possiblySent),
        item.priorAttempts == null
            ? List.of()
            : item.priorAttempts.stream().map(Views.AttemptView::of).toList(),
        item.claimToken);
  }
}
