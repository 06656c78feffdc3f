package dev.claimq.queue;

/** An operator action that the item's current state does not allow. */
public class StateConflictException extends RuntimeException {
  public StateConflictException(long id, ItemState state, String rule) {
    super("Item " + id + " is " + state.wireName() + ": " + rule);
  }
}
