package dev.claimq.queue;

import dev.claimq.store.ItemRepository;
import dev.claimq.store.QueueAction;
import dev.claimq.store.QueuePolicy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Event;
import java.util.List;

/** Operators' settings of a queue: its policy, pause and resume, and the log of those changes. */
@ApplicationScoped
public class QueuePolicies {
  private final ItemRepository items;
  private final Event<ItemsEnqueued> claimable;

  QueuePolicies(ItemRepository items, Event<ItemsEnqueued> claimable) {
    this.items = items;
    this.claimable = claimable;
  }

  /** The queue's policy as set: one with every setting null (the defaults) when none was. */
  public QueuePolicy get(String queue) {
    return items
        .policy(queue)
        .orElseGet(
            () -> {
              QueuePolicy none = new QueuePolicy();
              none.queue = queue;
              return none;
            });
  }

  /** Replaces the queue's settings; {@code asSent} is the request, for the action log. */
  public QueuePolicy set(QueuePolicy policy, String asSent, String actor) {
    return items.setPolicy(policy, asSent, actor);
  }

  /** Claims of the queue answer 204 until it is resumed; enqueues are still accepted. */
  public QueuePolicy pause(String queue, String actor) {
    return items.setPaused(queue, true, actor);
  }

  /** Claims resume, and parked long-polls of the queue are woken at once. */
  public QueuePolicy resume(String queue, String actor) {
    QueuePolicy policy = items.setPaused(queue, false, actor);
    claimable.fire(new ItemsEnqueued(queue));
    return policy;
  }

  public List<QueueAction> actions(String queue) {
    return items.queueActions(queue);
  }
}
