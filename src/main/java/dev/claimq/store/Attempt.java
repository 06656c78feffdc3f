package dev.claimq.store;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;

/** One claim of an item and how it ended; written only by {@link ItemRepository}'s statements. */
@Entity
@Table(name = "attempt")
public class Attempt {
  @Id public Long id;

  @Column(name = "item_id")
  public Long itemId;

  public int attempt;
  public String worker;

  @Column(name = "claimed_at")
  public Instant claimedAt;

  @Column(name = "finished_at")
  public Instant finishedAt;

  /** When the worker declared it was about to send; null when it did not. */
  @Column(name = "intent_at")
  public Instant intentAt;

  /** A retryable fail whose worker could not tell whether the provider acted. */
  @Column(name = "sent_unknown")
  public boolean sentUnknown;

  /** The SHA-256 (hex) of this attempt's claim token: the token itself is never kept. */
  @Column(name = "token_hash")
  public String tokenHash;

  /** A late success: the reference a complete reported after this claim had ended. */
  @Column(name = "late_external_ref")
  public String lateExternalRef;

  @Column(name = "late_reported_at")
  public Instant lateReportedAt;

  @Column(name = "late_reported_by")
  public String lateReportedBy;

  /** done, retry, failed, lease_expired or released; null while the claim is still open. */
  public String outcome;

  public String error;

  /** The key that completed or failed it; null when its lease expired. */
  @Column(name = "finished_by")
  public String finishedBy;
}
