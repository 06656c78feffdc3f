package dev.claimq.queue;

import dev.claimq.store.Attempt;
import dev.claimq.store.Item;
import dev.claimq.store.ItemAction;
import dev.claimq.store.ItemFilter;
import dev.claimq.store.ItemRepository;
import dev.claimq.store.ItemState;
import dev.claimq.store.QueueStats;
import dev.claimq.telemetry.ItemLog;
import dev.claimq.telemetry.LogText;
import dev.claimq.telemetry.QueueMetrics;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.transaction.Transactional;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** Operators' use cases: browse items and their history, retry or cancel, see queue health. */
@ApplicationScoped
public class OperatorService {
  private static final org.jboss.logging.Logger LOG =
      org.jboss.logging.Logger.getLogger(OperatorService.class);

  /** A page of items, and the id below which the next page starts (null on the last page). */
  public record Page(List<Item> items, Long nextBeforeId) {
    /** The page of {@code limit} items in rows read with one more than that, if there was one. */
    static Page of(List<Item> rows, int limit) {
      if (rows.size() <= limit) {
        return new Page(rows, null);
      }
      List<Item> page = rows.subList(0, limit);
      return new Page(page, page.get(limit - 1).id);
    }
  }

  private final ItemRepository items;
  private final QueueMetrics metrics;

  OperatorService(ItemRepository items, QueueMetrics metrics) {
    this.items = items;
    this.metrics = metrics;
  }

  /** Counts and logs an operator's action that took effect. */
  private static Answer counted(QueueMetrics metrics, Answer answer, String action, String actor) {
    if (answer.outcome() == Outcome.CHANGED || answer.outcome() == Outcome.RETRIED_PAST_HORIZON) {
      metrics.operatorAction(answer.item().queue, action);
      ItemLog.info(LOG, answer.item(), "%s by %s", action, LogText.oneLine(actor));
    }
    return answer;
  }

  // Browsing reads through Hibernate, which wants a transaction around its session.
  @Transactional
  public Page list(ItemFilter filter, Long beforeId, int limit) {
    // One row more than asked tells whether a next page exists without a count.
    return Page.of(items.newestFirst(filter, beforeId, limit + 1), limit);
  }

  /** The item's attempts, oldest first; empty when there is no such item. */
  @Transactional
  public Optional<List<Attempt>> attempts(long id) {
    return items.current(id).map(item -> items.attempts(id));
  }

  /** The operators' retries and cancels of the item, oldest first; empty for no such item. */
  @Transactional
  public Optional<List<ItemAction>> actions(long id) {
    return items.current(id).map(item -> items.actions(id));
  }

  /**
   * CHANGED; RETRIED_PAST_HORIZON when forced past the provider's idempotency horizon; PAST_HORIZON
   * when past it and not forced; STALE_ITEM when {@code versions} (an If-Match; null for none) do
   * not name its version; NOT_RETRYABLE (not failed or cancelled) or NOT_FOUND.
   */
  public Answer retry(long id, boolean force, String actor, long[] versions) {
    return counted(metrics, retried(id, force, actor, versions), "retry", actor);
  }

  private Answer retried(long id, boolean force, String actor, long[] versions) {
    return items
        .retry(id, force, actor, versions)
        .map(
            row -> {
              ItemState state = row.item().state;
              Outcome outcome;
              if (row.changed()) {
                outcome = row.pastHorizon() ? Outcome.RETRIED_PAST_HORIZON : Outcome.CHANGED;
              } else if (!matches(versions, row.item())) {
                // Changed since the read the operator acted on: whatever it is now, not retried.
                outcome = Outcome.STALE_ITEM;
              } else if (row.pastHorizon()
                  && (state == ItemState.FAILED || state == ItemState.CANCELLED)) {
                outcome = Outcome.PAST_HORIZON;
              } else {
                outcome = Outcome.NOT_RETRYABLE;
              }
              return new Answer(outcome, row.item());
            })
        .orElseGet(Answer::notFound);
  }

  /** Whether an If-Match's versions (null: none) name the item's version. */
  public static boolean matches(long[] versions, Item item) {
    return versions == null || Arrays.stream(versions).anyMatch(v -> v == item.version);
  }

  /**
   * CHANGED; STALE_ITEM when {@code versions} (an If-Match; null for none) do not name its version;
   * NOT_CANCELLABLE (not pending or failed) or NOT_FOUND.
   */
  public Answer cancel(long id, String actor, long[] versions) {
    return acted(
        items.cancel(id, actor, versions), versions, Outcome.NOT_CANCELLABLE, "cancel", actor);
  }

  /** CHANGED (done by hand), STALE_ITEM, NOT_RESOLVABLE (not failed) or NOT_FOUND. */
  public Answer resolve(long id, String externalRef, String note, String actor, long[] versions) {
    return acted(
        items.resolve(id, externalRef, note, actor, versions),
        versions,
        Outcome.NOT_RESOLVABLE,
        "resolve",
        actor);
  }

  /** CHANGED (pending), STALE_ITEM, NOT_HELD or NOT_FOUND. */
  public Answer approve(long id, String note, String actor, long[] versions) {
    return acted(
        items.approve(id, note, actor, versions), versions, Outcome.NOT_HELD, "approve", actor);
  }

  /** CHANGED (cancelled, with the reason), STALE_ITEM, NOT_HELD or NOT_FOUND. */
  public Answer reject(long id, String reason, String actor, long[] versions) {
    return acted(
        items.reject(id, reason, actor, versions), versions, Outcome.NOT_HELD, "reject", actor);
  }

  /**
   * The answer to an operator's change of one item, counted and logged when it took effect:
   * CHANGED; else STALE_ITEM when the item is no longer at a version the If-Match named (whatever
   * it is now, it was not acted on as read); else {@code refused}.
   */
  private Answer acted(
      Optional<ItemRepository.Changed> row,
      long[] versions,
      Outcome refused,
      String action,
      String actor) {
    Answer answer =
        row.map(
                r ->
                    new Answer(
                        r.changed()
                            ? Outcome.CHANGED
                            : matches(versions, r.item()) ? refused : Outcome.STALE_ITEM,
                        r.item()))
            .orElseGet(Answer::notFound);
    return counted(metrics, answer, action, actor);
  }

  public List<QueueStats> queues() {
    return items.queueStats();
  }

  /** Per queue, the completes and fails of the last minute: {done, failed}. */
  public Map<String, long[]> throughput() {
    return items.throughput();
  }

  /** Items whose id, dedupe key, idempotency key or external reference is the text. */
  public List<Item> search(String text, Set<String> queues) {
    return items.search(text, queues);
  }

  /**
   * Retries the selected items (failed or cancelled), or on a dry run says which it would. Each is
   * audited, counted and logged as a single retry is.
   */
  public ItemRepository.Matching retryMatching(ItemRepository.Selection selection, String actor) {
    return recorded(items.retryMatching(selection, actor), "retry", actor);
  }

  /** Cancels the selected items (pending or failed), or previews it. */
  public ItemRepository.Matching cancelMatching(ItemRepository.Selection selection, String actor) {
    return recorded(items.cancelMatching(selection, actor), "cancel", actor);
  }

  /** Approves the selected held items, or previews it. */
  public ItemRepository.Matching approveMatching(ItemRepository.Selection selection, String actor) {
    return recorded(items.approveMatching(selection, actor), "approve", actor);
  }

  /** Rejects the selected held items, with the reason, or previews it. */
  public ItemRepository.Matching rejectMatching(
      ItemRepository.Selection selection, String reason, String actor) {
    return recorded(items.rejectMatching(selection, reason, actor), "reject", actor);
  }

  private ItemRepository.Matching recorded(
      ItemRepository.Matching matching, String action, String actor) {
    if (matching.changed()) {
      for (Item item : matching.items()) {
        counted(metrics, new Answer(Outcome.CHANGED, item), action, actor);
      }
    }
    return matching;
  }
}
