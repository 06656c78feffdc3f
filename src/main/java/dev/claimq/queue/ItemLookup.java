package dev.claimq.queue;

import dev.claimq.store.Item;
import dev.claimq.store.ItemRepository;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Reading items, for every role: one item as it is now by id (or, for its agent, by dedupe key),
 * which queue items are in, and an agent's own items.
 */
@ApplicationScoped
public class ItemLookup {
  private final ItemRepository items;

  ItemLookup(ItemRepository items) {
    this.items = items;
  }

  public Optional<Item> get(long id) {
    return items.current(id);
  }

  /** The queues of these items, by id, in one statement; ids of no item are left out. */
  public Map<Long, String> queuesOf(Collection<Long> ids) {
    return items.queuesOf(ids);
  }

  public Optional<Item> byDedupeKey(String queue, String dedupeKey) {
    return items.byDedupeKey(queue, dedupeKey);
  }

  /**
   * A page of what the key of this name enqueued, newest first, below {@code beforeId} when given;
   * only in this state (a wire name) when given, and only in {@code queues} unless it is empty.
   */
  public OperatorService.Page enqueuedBy(
      String name, String state, Set<String> queues, Long beforeId, int limit) {
    // One row more than asked tells whether a next page exists without a count.
    return OperatorService.Page.of(
        items.enqueuedBy(name, state, queues, beforeId, limit + 1), limit);
  }
}
