package dev.claimq.queue;

/**
 * The claim token is not the item's current claim: its lease expired and the item was released or
 * claimed again, or the token was never this item's. The worker must stop working on the item.
 */
public class StaleClaimException extends RuntimeException {
  public StaleClaimException(long id, ItemState state) {
    super(
        "The claim token is not the current claim of item "
            + id
            + " (the item is now "
            + state.wireName()
            + "). Its lease may have expired; stop working on this item.");
  }
}
