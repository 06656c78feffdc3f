package dev.claimq.queue;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;

/**
 * One piece of work. Read through Hibernate, but only ever changed by the conditional statements in
 * {@link ItemRepository}: never persisted or dirtied through the entity.
 */
@Entity
@Table(name = "item")
public class Item {
  @Id public Long id;
  public String queue;

  @Column(name = "dedupe_key")
  public String dedupeKey;

  public ItemState state;

  /** The JSON document as text: stored as jsonb, passed through to the wire untouched. */
  public String payload;

  public int priority;
  public int attempts;

  @Column(name = "max_attempts")
  public int maxAttempts;

  @Column(name = "run_at")
  public Instant runAt;

  @Column(name = "idempotency_key")
  public String idempotencyKey;

  @Column(name = "claim_token")
  public String claimToken;

  @Column(name = "claimed_by")
  public String claimedBy;

  @Column(name = "lease_seconds")
  public Integer leaseSeconds;

  @Column(name = "lease_expires_at")
  public Instant leaseExpiresAt;

  @Column(name = "external_ref")
  public String externalRef;

  @Column(name = "last_error")
  public String lastError;

  @Column(name = "enqueued_by")
  public String enqueuedBy;

  @Column(name = "created_at")
  public Instant createdAt;

  @Column(name = "updated_at")
  public Instant updatedAt;

  /**
   * Whether this token's own complete or fail already put the item in one of these states: a
   * repeated request, to be answered like the first.
   */
  boolean alreadyFinishedBy(String token, ItemState... acceptedStates) {
    for (ItemState accepted : acceptedStates) {
      if (state == accepted && token.equals(claimToken)) {
        return true;
      }
    }
    return false;
  }
}
