package dev.claimq.queue;

import dev.claimq.store.Item;

/** A use case's outcome and the item as it is after it (null when there is no such item). */
public record Answer(Outcome outcome, Item item) {
  static Answer notFound() {
    return new Answer(Outcome.NOT_FOUND, null);
  }
}
