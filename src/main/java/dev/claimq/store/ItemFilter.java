package dev.claimq.store;

import java.time.Instant;
import java.util.Set;

/**
 * Which items an operator means: in these queues (empty: every queue), in this state, whose last
 * error contains this text (any case), last changed in [updatedAfter, updatedBefore). Null: any.
 */
public record ItemFilter(
    Set<String> queues,
    ItemState state,
    String reason,
    Instant updatedAfter,
    Instant updatedBefore) {

  public ItemFilter {
    queues = queues == null ? Set.of() : Set.copyOf(queues);
  }

  /** The filter as one text, the same for the same filter in any instance (queues sorted). */
  public String canonical() {
    return String.join(
        "|",
        String.join(",", new java.util.TreeSet<>(queues)),
        String.valueOf(state),
        String.valueOf(reason),
        String.valueOf(updatedAfter),
        String.valueOf(updatedBefore));
  }

  /** The queues as a text[] parameter: null for every queue. */
  String[] queueArray() {
    return queues.isEmpty() ? null : queues.toArray(String[]::new);
  }
}
