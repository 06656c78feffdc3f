package dev.claimq.queue;

/** No item has the id the caller named. */
public class ItemNotFoundException extends RuntimeException {
  public ItemNotFoundException(String id) {
    super("No item has id '" + id + "'.");
  }
}
