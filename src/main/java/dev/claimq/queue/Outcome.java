package dev.claimq.queue;

/**
 * What a use case did, in the queue's words. The api turns each into an HTTP status and, for the
 * refusals, a problem type, in one table (api.Outcomes), for single and batch answers alike.
 */
public enum Outcome {
  /** An enqueue made a new item. */
  CREATED,
  /** The change was made: claimed, extended, completed, failed, released, retried, ... */
  CHANGED,
  /** The same request was accepted before (an enqueue of the same work, a repeated finish). */
  REPLAYED,
  /** A claim that did not win: another worker holds the item, it is finished, or not due yet. */
  NOT_CLAIMED,
  /**
   * The enqueue's dedupe key already names an item with a different payload, or with another
   * priority, maxAttempts or runAt than the enqueue gives.
   */
  KEY_REUSED,
  /** No item has the id, or none the caller may see. */
  NOT_FOUND,
  /** The claim token is not the item's current claim. */
  STALE_CLAIM,
  /**
   * A complete with an ended claim's token and the provider's reference: still a stale claim to its
   * sender, but the send is recorded as a late success of that claim's attempt.
   */
  LATE_SUCCESS,
  /**
   * A complete with the token that completed the item but another externalRef: not a repeat of that
   * report, and the first one stands.
   */
  DIFFERENT_REPORT,
  /**
   * A fail with the token that failed the item but another report (error, sent, retryable or
   * delay): not a repeat of that report, and the first one stands. The answer's {@code differs} is
   * the first report's reason, as the claim's attempt keeps it: the item may have been claimed and
   * finished by others since.
   */
  DIFFERENT_FAIL,
  /**
   * A release with the token that released the item but another delay: not a repeat of that
   * release, and the first one stands.
   */
  DIFFERENT_RELEASE,
  /** An operator's retry of an item that is neither failed nor cancelled. */
  NOT_RETRYABLE,
  /** An operator's retry past the provider's idempotency horizon, not forced. */
  PAST_HORIZON,
  /** An operator's forced retry past the horizon: done, with a warning. */
  RETRIED_PAST_HORIZON,
  /** A queue policy whose worst-case schedule does not fit in its providerKeyTtl. */
  POLICY_DOES_NOT_FIT,
  /**
   * A policy change made from a read the policy has changed since (its If-Match names another
   * version), which would overwrite that change: not made.
   */
  STALE_POLICY,
  /**
   * An operator's retry, cancel, resolve, approval or rejection made from a read the item has
   * changed since (its If-Match names another version): not made, whatever the item's state now.
   */
  STALE_ITEM,
  /** An operator's cancel of an item that is neither pending nor failed. */
  NOT_CANCELLABLE,
  /** An operator's resolve of an item that is not failed. */
  NOT_RESOLVABLE,
  /** An operator's approval or rejection of an item that is not held. */
  NOT_HELD,
  /** A release of a claim whose item has used up its releases: the claim is still held. */
  RELEASE_LIMIT
}
