package dev.claimq.queue;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.transaction.Transactional;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Operators' use cases: browse items and their history, retry or cancel, see queue health. */
@ApplicationScoped
public class OperatorService {

  /** A page of items, and the id below which the next page starts (null on the last page). */
  public record Page(List<Item> items, Long nextBeforeId) {}

  private final ItemRepository items;

  OperatorService(ItemRepository items) {
    this.items = items;
  }

  @Transactional
  public Item get(long id) {
    return items.findByIdOptional(id).orElseThrow(() -> notFound(id));
  }

  @Transactional
  public Page list(Set<String> queues, ItemState state, Long beforeId, int limit) {
    // One row more than asked tells whether a next page exists without a count.
    List<Item> rows = items.newestFirst(queues, state, beforeId, limit + 1);
    if (rows.size() <= limit) {
      return new Page(rows, null);
    }
    List<Item> page = rows.subList(0, limit);
    return new Page(page, page.get(limit - 1).id);
  }

  @Transactional
  public List<Attempt> attempts(long id) {
    get(id);
    return items.attempts(id);
  }

  @Transactional
  public List<ItemAction> actions(long id) {
    get(id);
    return items.actions(id);
  }

  /** The queue of the item, for access checks; 404 when there is no such item. */
  @Transactional
  public String queueOf(long id) {
    return items.queueOf(id).orElseThrow(() -> notFound(id));
  }

  /** The queues of these items, by id, in one statement; ids of no item are left out. */
  public Map<Long, String> queuesOf(Collection<Long> ids) {
    return items.queuesOf(ids);
  }

  @Transactional
  public Item retry(long id, String actor) {
    return items
        .retry(id, actor)
        .orElseThrow(
            () ->
                new StateConflictException(
                    id, get(id).state, "only failed or cancelled items can be retried."));
  }

  @Transactional
  public Item cancel(long id, String actor) {
    return items
        .cancel(id, actor)
        .orElseThrow(
            () ->
                new StateConflictException(
                    id, get(id).state, "only pending or failed items can be cancelled."));
  }

  @Transactional
  public List<QueueStats> queues() {
    return items.queueStats();
  }

  private static ItemNotFoundException notFound(long id) {
    return new ItemNotFoundException(Long.toString(id));
  }
}
