package dev.claimq.queue;

import dev.claimq.config.ClaimqConfig;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Event;
import java.util.Optional;

/** Agents' use case: put work in a queue, once per dedupe key. */
@ApplicationScoped
public class EnqueueService {

  /** The item, and whether this call created it (false: an earlier enqueue of the same work). */
  public record Enqueued(Item item, boolean created) {}

  // How often to go round when the existing row disappears between the insert and the read
  // (deleted by an operator or by retention). Twice in a row would take a very unlucky client.
  private static final int MAX_ROUNDS = 3;

  private final ItemRepository items;
  private final Event<ItemsEnqueued> enqueued;
  private final int defaultMaxAttempts;

  EnqueueService(ItemRepository items, Event<ItemsEnqueued> enqueued, ClaimqConfig config) {
    this.items = items;
    this.enqueued = enqueued;
    this.defaultMaxAttempts = config.retry().defaultMaxAttempts();
  }

  public Enqueued enqueue(NewItem request) {
    NewItem item =
        new NewItem(
            request.queue(),
            request.dedupeKey(),
            request.payload(),
            request.priority() == null ? 0 : request.priority(),
            request.maxAttempts() == null ? defaultMaxAttempts : request.maxAttempts(),
            request.runAt(),
            request.enqueuedBy());
    for (int round = 0; round < MAX_ROUNDS; round++) {
      Optional<Item> inserted = items.insertIfAbsent(item);
      if (inserted.isPresent()) {
        enqueued.fire(new ItemsEnqueued(item.queue()));
        return new Enqueued(inserted.get(), true);
      }
      // The insert did nothing, so the key was taken: by an equal item (a replay) or not.
      Optional<Item> existing =
          items.findWithEqualPayload(item.queue(), item.dedupeKey(), item.payload());
      if (existing.isPresent()) {
        return new Enqueued(existing.get(), false);
      }
      Optional<Item> other = items.findByDedupeKey(item.queue(), item.dedupeKey());
      if (other.isPresent()) {
        throw new DedupeConflictException(item.queue(), item.dedupeKey(), other.get().id);
      }
    }
    throw new IllegalStateException(
        "enqueue of " + item.queue() + "/" + item.dedupeKey() + " lost " + MAX_ROUNDS + " rounds");
  }
}
