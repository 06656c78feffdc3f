package dev.claimq.api;

import dev.claimq.queue.ItemNotFoundException;
import dev.claimq.queue.OperatorService;
import dev.claimq.security.Caller;
import jakarta.enterprise.context.RequestScoped;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Keeps a key limited to some queues inside them. Roles are checked by @RolesAllowed; this is the
 * part that depends on data (an item's queue), so resources call it before acting.
 */
@RequestScoped
class QueueGuard {
  private final Caller caller;
  private final OperatorService operators;

  QueueGuard(Caller caller, OperatorService operators) {
    this.caller = caller;
    this.operators = operators;
  }

  /** 403 unless the key may use this queue. */
  String queue(String queue) {
    caller.requireQueue(queue);
    return queue;
  }

  /** 403 unless the key may use the item's queue; an unlimited key costs no lookup. */
  long item(long id) {
    if (!caller.queues().isEmpty() && id > 0) {
      caller.requireQueue(operators.queueOf(id));
    }
    return id;
  }

  /** {@link #item} for each id in turn, with one lookup for all of them (batches of 500). */
  void items(List<Long> ids) {
    if (!caller.queues().isEmpty()) {
      Map<Long, String> queues =
          operators.queuesOf(ids.stream().filter(id -> id > 0).collect(Collectors.toSet()));
      for (long id : ids) {
        if (id > 0) {
          String queue = queues.get(id);
          if (queue == null) {
            throw new ItemNotFoundException(Long.toString(id));
          }
          caller.requireQueue(queue);
        }
      }
    }
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
