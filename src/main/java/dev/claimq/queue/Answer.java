package dev.claimq.queue;

import dev.claimq.store.Item;

/**
 * A use case's outcome and the item as it is after it (null when there is no such item). For
 * KEY_REUSED, {@code differs} names the first of the enqueue's terms that the item does not match:
 * payload, priority, maxAttempts or runAt; for DIFFERENT_FAIL it is the first fail's reason; null
 * otherwise.
 */
public record Answer(Outcome outcome, Item item, String differs) {
  public Answer(Outcome outcome, Item item) {
    this(outcome, item, null);
  }

  static Answer notFound() {
    return new Answer(Outcome.NOT_FOUND, null);
  }
}
