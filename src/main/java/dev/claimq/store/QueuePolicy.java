package dev.claimq.store;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;

/**
 * A queue's settings as an operator set them; a null one means the service's configured default.
 * Written only by {@link ItemRepository}'s statements, which also read it where they act.
 */
@Entity
@Table(name = "queue_policy")
public class QueuePolicy {
  @Id public String queue;

  @Column(name = "max_attempts")
  public Integer maxAttempts;

  @Column(name = "lease_seconds")
  public Integer leaseSeconds;

  @Column(name = "crash_loop_after")
  public Integer crashLoopAfter;

  /** retry or hold. */
  @Column(name = "on_unknown_outcome")
  public String onUnknownOutcome;

  @Column(name = "max_releases")
  public Integer maxReleases;

  /** How long the provider remembers an idempotency key; null when it does not matter. */
  @Column(name = "provider_key_ttl_seconds")
  public Long providerKeyTtlSeconds;

  /** The first retry's delay, doubling up to the cap; null: the service's default. */
  @Column(name = "backoff_base_seconds")
  public Integer backoffBaseSeconds;

  @Column(name = "backoff_cap_seconds")
  public Integer backoffCapSeconds;

  /** New items wait, held, for an operator's approval; null: the default, off. */
  @Column(name = "require_approval")
  public Boolean requireApproval;

  public boolean paused;

  @Column(name = "updated_at")
  public Instant updatedAt;

  @Column(name = "updated_by")
  public String updatedBy;

  /** Counts up with every change of the row; 0 for a queue without one. Its entity tag. */
  public long version;
}
