package dev.claimq.api;

import dev.claimq.queue.ItemLookup;
import dev.claimq.queue.Outcome;
import dev.claimq.security.Caller;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Keeps a key limited to some queues inside them. Roles are checked by @RolesAllowed; this is the
 * part that depends on data (an item's queue), so resources call it before acting. The caller is
 * the current request's (its proxy).
 */
@ApplicationScoped
class QueueGuard {
  private final Caller caller;
  private final ItemLookup lookup;

  QueueGuard(Caller caller, ItemLookup lookup) {
    this.caller = caller;
    this.lookup = lookup;
  }

  /** 403 unless the key may use this queue. */
  String queue(String queue) {
    caller.requireQueue(queue);
    return queue;
  }

  /**
   * 404 unless the key may use the item's queue: to a limited key, an item of another queue is no
   * such item, so it cannot learn which ids exist elsewhere. An unlimited key costs no lookup.
   */
  long item(long id) {
    if (!caller.queues().isEmpty() && !items(List.of(id)).contains(id)) {
      throw new Outcomes.RefusedException(Outcome.NOT_FOUND, Long.toString(id), null);
    }
    return id;
  }

  /**
   * For a batch: the id, or 0 (no such item, answered per entry) where the key may not use the
   * item's queue or there is no such item. One lookup for all of them (batches of 500).
   */
  List<Long> items(List<Long> ids) {
    if (caller.queues().isEmpty()) {
      return ids;
    }
    Map<Long, String> queues =
        lookup.queuesOf(ids.stream().filter(id -> id > 0).collect(Collectors.toSet()));
    return ids.stream()
        .map(id -> queues.containsKey(id) && mayUse(queues.get(id)) ? id : 0L)
        .toList();
  }

  /** The queues a listing may show: the one asked for, or all the key may see (empty: all). */
  Set<String> visible(String queue) {
    return queue != null ? Set.of(queue(queue)) : caller.queues();
  }

  boolean mayUse(String queue) {
    return caller.queues().isEmpty() || caller.queues().contains(queue);
  }

  String actor() {
    return caller.name();
  }
}
