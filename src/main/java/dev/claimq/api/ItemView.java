package dev.claimq.api;

import com.fasterxml.jackson.annotation.JsonRawValue;
import dev.claimq.store.Item;
import dev.claimq.store.ItemState;
import java.time.Instant;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** An item as every response shows it. The claim token is never part of it. */
@Schema(
    name = "Item",
    description = "One piece of work and where it is in its life.",
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
public record ItemView(
    @Schema(description = "Opaque id.", examples = "4711") String id,
    @Schema(examples = "emails") String queue,
    @Schema(
            description = "The agent's key for this piece of work, unique in its queue.",
            examples = "welcome-email/user-42")
        String dedupeKey,
    ItemState state,
    @Schema(
            ref = "JsonValue",
            description =
                "The agent's JSON value, as stored; null once the item is pruned (a tombstone).",
            examples = "{\"to\":\"ada@example.com\",\"template\":\"welcome\"}")
        @JsonRawValue
        String payload,
    @Schema(description = "Higher is claimed first.") int priority,
    @Schema(description = "Claims so far (reset by an operator's retry).") int attempts,
    int maxAttempts,
    @Schema(description = "Not claimable before this time.") Instant runAt,
    @Schema(
            description =
                "Pass this to the downstream provider as its idempotency key. It never changes,"
                    + " so a send repeated after a crash is recognised as the same send.")
        String idempotencyKey,
    @Schema(description = "The worker that claimed it last.", nullable = true) String claimedBy,
    @Schema(
            description = "While sending: when the claim runs out unless heartbeated.",
            nullable = true)
        Instant leaseExpiresAt,
    @Schema(description = "What the provider returned for the completed send.", nullable = true)
        String externalRef,
    @Schema(description = "The last failure reason, secrets redacted.", nullable = true)
        String lastError,
    @Schema(
            description = "The name of the key that enqueued it; null when keys were off.",
            nullable = true)
        String enqueuedBy,
    Instant createdAt,
    Instant updatedAt,
    @Schema(
            description =
                "Only while sending, and only when an earlier claim's late complete says this item"
                    + " was sent already: complete with its externalRef; do not send.")
        @com.fasterxml.jackson.annotation.JsonInclude(
            com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
        AlreadySent alreadySent,
    @Schema(
            description =
                "Sends that went out twice: late successes reported after the item was done with"
                    + " another reference (or none), and completes with another reference (or"
                    + " none) after a late success had told the claim alreadySent. A late success"
                    + " with the item's own reference is the provider answering a repeat of the"
                    + " same send, and one on an item an operator resolved without a reference is"
                    + " the send they confirmed: neither is counted.")
        int duplicateSends,
    @Schema(
            description =
                "A tombstone: finished long ago, its payload, attempts and actions are gone, and"
                    + " its dedupe key still refuses to make new work.")
        boolean pruned,
    @Schema(
            description =
                "The W3C traceparent header its enqueue carried, exactly as sent (a replayed"
                    + " enqueue leaves the first one); null when it carried none. A worker sends it"
                    + " as the traceparent header on its call to the provider and on complete and"
                    + " fail, so the send is part of the agent's trace.",
            nullable = true,
            pattern = ItemTraces.FORMAT,
            examples = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
        String traceparent) {

  @Schema(
      name = "AlreadySent",
      requiredProperties = {"attempt", "externalRef"})
  public record AlreadySent(
      @Schema(
              description =
                  "The attempt count of the claim whose send it was (see Attempt.attempt);"
                      + " externalRef is what identifies the send.")
          int attempt,
      @Schema(description = "The provider's reference it reported.") String externalRef) {}

  static ItemView of(Item item) {
    return new ItemView(
        Long.toString(item.id),
        item.queue,
        item.dedupeKey,
        item.state,
        item.prunedAt != null ? null : item.payload,
        item.priority,
        item.attempts,
        item.maxAttempts,
        item.runAt,
        item.idempotencyKey,
        item.claimedBy,
        item.leaseExpiresAt,
        item.externalRef,
        item.lastError,
        item.enqueuedBy,
        item.createdAt,
        item.updatedAt,
        item.state == ItemState.SENDING && item.alreadySentAttempt != null
            ? new AlreadySent(item.alreadySentAttempt, item.alreadySentRef)
            : null,
        item.duplicateSends,
        item.prunedAt != null,
        item.traceparent);
  }
}
