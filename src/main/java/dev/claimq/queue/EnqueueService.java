package dev.claimq.queue;

import dev.claimq.store.ItemRepository;
import dev.claimq.store.ItemRepository.KeyHolder;
import dev.claimq.store.ItemState;
import dev.claimq.store.NewItem;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Event;
import java.util.Optional;

/** Agents' use case: put work in a queue, once per dedupe key. */
@ApplicationScoped
public class EnqueueService {

  // How often to go round when the key's holder is not visible to the statement that found the
  // key taken: it committed after that statement began, or was deleted since (by an operator or by
  // retention). A third round would take a very unlucky client.
  private static final int MAX_ROUNDS = 3;

  private final ItemRepository items;
  private final Event<ItemsEnqueued> enqueued;

  EnqueueService(ItemRepository items, Event<ItemsEnqueued> enqueued) {
    this.items = items;
    this.enqueued = enqueued;
  }

  /**
   * CREATED with the new item, REPLAYED with the item of the same work, or KEY_REUSED. A replay
   * matches the item's payload, and its priority, maxAttempts and runAt where the request gives
   * them; what it leaves out is not compared.
   */
  public Answer enqueue(NewItem item) {
    for (int round = 0; round < MAX_ROUNDS; round++) {
      Optional<KeyHolder> holder = items.enqueue(item);
      if (holder.isPresent()) {
        Answer answer = answer(holder.get());
        // A held item is not claimable: only its approval wakes the workers (a trigger).
        if (answer.outcome() == Outcome.CREATED && answer.item().state == ItemState.PENDING) {
          enqueued.fire(new ItemsEnqueued(item.queue()));
        }
        return answer;
      }
    }
    throw new IllegalStateException(
        "enqueue of " + item.queue() + "/" + item.dedupeKey() + " lost " + MAX_ROUNDS + " rounds");
  }

  static Answer answer(KeyHolder holder) {
    if (holder.inserted()) {
      return new Answer(Outcome.CREATED, holder.item());
    }
    return holder.differs() == null
        ? new Answer(Outcome.REPLAYED, holder.item())
        : new Answer(Outcome.KEY_REUSED, holder.item(), holder.differs());
  }
}
