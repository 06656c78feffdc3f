package dev.claimq.store;

import java.util.Optional;

/**
 * The statements of a finish and of the claim that may follow it: each on its own in autocommit
 * ({@link ItemRepository}), or together in one transaction ({@link
 * ItemRepository#inOneTransaction}).
 */
public interface FinishStatements {
  /**
   * What a fail records: the sanitized reason, whether to retry, whether the send may have gone
   * out, and the retry delays to choose from by attempt.
   */
  record Failure(String error, boolean retryable, boolean sentUnknown, long[] delays) {}

  /** Marks the claimed item done; empty when there is no such item. */
  Optional<ItemRepository.Changed> complete(
      long id, String token, String externalRef, String actor);

  /**
   * Records a failed attempt: back to pending after the schedule's delay for this attempt when
   * retryable and attempts remain, otherwise failed. Empty when there is no such item.
   */
  Optional<ItemRepository.Changed> fail(long id, String token, Failure failure, String actor);

  /** Claims the next due item of the queue; empty when there is none, or the queue is paused. */
  Optional<Item> claimNext(String queue, String token, String worker, Integer leaseSeconds);
}
