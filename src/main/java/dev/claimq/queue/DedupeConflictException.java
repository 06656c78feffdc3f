package dev.claimq.queue;

/** The (queue, dedupe key) already names an item whose payload differs from this one. */
public class DedupeConflictException extends RuntimeException {
  public DedupeConflictException(String queue, String dedupeKey, long existingId) {
    super(
        "Queue '"
            + queue
            + "' already has item "
            + existingId
            + " with dedupe key '"
            + dedupeKey
            + "' and a different payload. A dedupe key names one piece of work: use a new key"
            + " for different work.");
  }
}
