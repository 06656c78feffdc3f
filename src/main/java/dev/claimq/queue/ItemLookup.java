package dev.claimq.queue;

import dev.claimq.store.Item;
import dev.claimq.store.ItemRepository;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;

/** Reading items by id, for every role: one item as it is now, and which queue items are in. */
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
}
