package dev.claimq.queue;

/**
 * The outcome of one entry of a batch: the HTTP-like status it would have had as a single call, the
 * item when there is one, and otherwise why not.
 */
public record BatchResult(int status, Item item, String problem) {
  static BatchResult of(int status, Item item) {
    return new BatchResult(status, item, null);
  }

  static BatchResult refused(int status, String problem) {
    return new BatchResult(status, null, problem);
  }
}
