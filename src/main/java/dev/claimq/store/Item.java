package dev.claimq.store;

import jakarta.persistence.Column;
import jakarta.persistence.Convert;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import jakarta.persistence.Transient;
import java.time.Instant;

/**
 * One piece of work. Only ever changed by the conditional statements in {@link ItemRepository},
 * never persisted or dirtied through the entity. Its annotations are the one mapping of the item
 * table: Hibernate reads them for operators' browsing, {@link EntityRows} for the statements.
 */
@Entity
@Table(name = "item")
public class Item {
  @Id public Long id;
  public String queue;

  @Column(name = "dedupe_key")
  public String dedupeKey;

  @Convert(converter = ItemState.DatabaseConverter.class)
  public ItemState state;

  /** The JSON document as text: stored as jsonb, passed through to the wire untouched. */
  public String payload;

  public int priority;
  public int attempts;

  @Column(name = "max_attempts")
  public int maxAttempts;

  @Column(name = "run_at")
  public Instant runAt;

  /**
   * The runAt its enqueue gave it (now, when it gave none), which retries and releases leave alone:
   * replays are compared with it. Null for items enqueued before claimq kept it.
   */
  @Column(name = "enqueued_run_at")
  public Instant enqueuedRunAt;

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

  /** Claims handed back unused (release), bounded per item. */
  public int releases;

  /** A late success reported while this claim holds it: the attempt whose send it was. */
  @Column(name = "already_sent_attempt")
  public Integer alreadySentAttempt;

  /** That late success's reference. */
  @Column(name = "already_sent_ref")
  public String alreadySentRef;

  /**
   * When retention made it a tombstone: its payload is gone (only its SHA-256 is kept), and so are
   * its attempts and actions; its key still decides enqueues. Null for a live item.
   */
  @Column(name = "pruned_at")
  public Instant prunedAt;

  @Column(name = "payload_sha256")
  public String payloadSha256;

  /** Sends that went out twice, as late successes and completes reported them (see ItemView). */
  @Column(name = "duplicate_sends")
  public int duplicateSends;

  /** The W3C traceparent its enqueue carried, as sent; null when it carried none. */
  public String traceparent;

  /**
   * Set on a claimed item only: whether an earlier attempt may have sent (it declared an intent and
   * ended without a complete, or failed not knowing), and every earlier attempt. Not columns.
   */
  @Transient public Boolean possiblySent;

  @Transient public java.util.List<Attempt> priorAttempts;

  /** Set on an item a complete or fail just finished: when the finished claim began. */
  @Transient public Instant heldSince;

  /**
   * Set on an item read by id, changed by an operator or picked by a bulk action: its row's version
   * (the xmin of the row as it is, which every change of it replaces), answered as its ETag. Not a
   * column.
   */
  @Transient public Long version;
}
