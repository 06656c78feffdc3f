package dev.claimq.queue;

import dev.claimq.config.ClaimqConfig;
import dev.claimq.policy.Backoff;
import dev.claimq.policy.FailureReason;
import dev.claimq.store.Item;
import dev.claimq.store.ItemRepository;
import dev.claimq.store.ItemRepository.Changed;
import dev.claimq.store.ItemState;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Workers' use cases: claim, heartbeat, complete, fail. Each is one statement, and so its own
 * transaction (autocommit), whose one answer decides the outcome.
 */
@ApplicationScoped
public class WorkService {
  private final ItemRepository items;
  private final Backoff backoff;
  private final int defaultLeaseSeconds;

  WorkService(ItemRepository items, ClaimqConfig config) {
    this.items = items;
    this.defaultLeaseSeconds = (int) config.lease().defaultDuration().toSeconds();
    this.backoff = new Backoff(config.retry().backoffBase(), config.retry().backoffCap());
  }

  /**
   * Claims the item if it is pending and due: CHANGED with the claimed item (its claimToken is this
   * worker's), NOT_CLAIMED when another worker won or it is not due, or NOT_FOUND.
   */
  public Answer claim(long id, String worker, Integer leaseSeconds) {
    return items
        .claim(id, ClaimTokens.next(), worker, lease(leaseSeconds))
        .map(row -> new Answer(row.changed() ? Outcome.CHANGED : Outcome.NOT_CLAIMED, row.item()))
        .orElseGet(Answer::notFound);
  }

  /**
   * Claims the queue's next due item (its claimToken is this worker's); empty when there is none.
   */
  public Optional<Item> claimNext(String queue, String worker, Integer leaseSeconds) {
    return items.claimNext(queue, ClaimTokens.next(), worker, lease(leaseSeconds));
  }

  int lease(Integer requestedSeconds) {
    return requestedSeconds == null ? defaultLeaseSeconds : requestedSeconds;
  }

  /**
   * Marks the item done. Repeating an accepted complete with the same token answers REPLAYED with
   * the item, so a worker may safely retry a complete whose answer it did not receive.
   */
  public Answer complete(long id, String token, String externalRef, String actor) {
    return finish(items.complete(id, token, externalRef, actor), token, ItemState.DONE);
  }

  /**
   * Records a failed attempt and schedules the retry (the provider's Retry-After, when given,
   * replaces the computed backoff). Repeating an accepted fail answers REPLAYED.
   */
  public Answer fail(
      long id,
      String token,
      String error,
      boolean retryable,
      Long retryAfterSeconds,
      String actor) {
    return finish(
        items.fail(
            id, token, FailureReason.sanitize(error), retryable, delays(retryAfterSeconds), actor),
        token,
        ItemState.PENDING,
        ItemState.FAILED);
  }

  /**
   * The retry delays to choose from by attempt: the provider's Retry-After for any attempt, or the
   * backoff schedule.
   */
  long[] delays(Long retryAfterSeconds) {
    return retryAfterSeconds != null
        ? new long[] {retryAfterSeconds}
        : backoff.scheduleSeconds(ThreadLocalRandom.current());
  }

  /** Extends the lease of a current claim; by its original length when none is given. */
  public Answer heartbeat(long id, String token, Integer leaseSeconds) {
    return finish(items.heartbeat(id, token, leaseSeconds), token);
  }

  private static Answer finish(Optional<Changed> row, String token, ItemState... replayStates) {
    return row.map(r -> finish(r, token, replayStates)).orElseGet(Answer::notFound);
  }

  /**
   * The outcome of a statement that only the current claim can make: CHANGED; REPLAYED when this
   * token's own earlier request already put the item where this one would (a retried request);
   * otherwise STALE_CLAIM.
   */
  static Answer finish(Changed row, String token, ItemState... replayStates) {
    Item item = row.item();
    // A batch may name one item twice: its row is changed by the other entry's token, not this one.
    if (row.changed() && token.equals(item.claimToken)) {
      return new Answer(Outcome.CHANGED, item);
    }
    for (ItemState state : replayStates) {
      if (item.state == state && token.equals(item.claimToken)) {
        return new Answer(Outcome.REPLAYED, item);
      }
    }
    return new Answer(Outcome.STALE_CLAIM, item);
  }
}
