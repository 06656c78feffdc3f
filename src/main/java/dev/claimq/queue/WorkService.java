package dev.claimq.queue;

import dev.claimq.config.ClaimqConfig;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Workers' use cases: claim, heartbeat, complete, fail. Each change is one statement and so its own
 * transaction (autocommit); a read after it only explains a statement that changed nothing.
 */
@ApplicationScoped
public class WorkService {

  /** A won claim: the item, and the token that proves it is this worker's. */
  public record Claim(Item item, String token) {}

  private final ItemRepository items;
  private final Backoff backoff;
  private final int defaultLeaseSeconds;

  WorkService(ItemRepository items, ClaimqConfig config) {
    this.items = items;
    this.defaultLeaseSeconds = (int) config.lease().defaultDuration().toSeconds();
    this.backoff = new Backoff(config.retry().backoffBase(), config.retry().backoffCap());
  }

  /** Claims the item if it is pending and due; empty when another worker won or it is not due. */
  public Optional<Claim> claim(long id, String worker, Integer leaseSeconds) {
    String token = ClaimTokens.next();
    Optional<Item> claimed = items.claim(id, token, worker, lease(leaseSeconds));
    if (claimed.isEmpty() && items.findCurrent(id).isEmpty()) {
      throw new ItemNotFoundException(Long.toString(id));
    }
    return claimed.map(item -> new Claim(item, token));
  }

  /** Claims the queue's next due item; empty when there is none. */
  public Optional<Claim> claimNext(String queue, String worker, Integer leaseSeconds) {
    String token = ClaimTokens.next();
    return items
        .claimNext(queue, token, worker, lease(leaseSeconds))
        .map(item -> new Claim(item, token));
  }

  private int lease(Integer requestedSeconds) {
    return requestedSeconds == null ? defaultLeaseSeconds : requestedSeconds;
  }

  /**
   * Marks the item done. Repeating an accepted complete with the same token answers the same item
   * again, so a worker may safely retry a complete whose answer it did not receive.
   */
  public Item complete(long id, String token, String externalRef, String actor) {
    return items
        .complete(id, token, externalRef, actor)
        .orElseGet(() -> replayOrReject(id, token, ItemState.DONE));
  }

  /**
   * Records a failed attempt and schedules the retry (the provider's Retry-After, when given,
   * replaces the computed backoff). Repeating an accepted fail answers the same item again.
   */
  public Item fail(
      long id,
      String token,
      String error,
      boolean retryable,
      Long retryAfterSeconds,
      String actor) {
    Optional<Integer> attempt = items.attemptsOfClaim(id, token);
    if (attempt.isEmpty()) {
      return replayOrReject(id, token, ItemState.PENDING, ItemState.FAILED);
    }
    long delay =
        retryAfterSeconds != null
            ? retryAfterSeconds
            : backoff.delaySeconds(attempt.get(), ThreadLocalRandom.current());
    String reason = FailureReason.sanitize(error);
    // The token pins the claim, and attempts only changes with a new claim (and a new token), so
    // the delay computed from the read above is the one for this attempt.
    return items
        .fail(id, token, reason, retryable, delay, actor)
        .orElseGet(() -> replayOrReject(id, token, ItemState.PENDING, ItemState.FAILED));
  }

  /** Extends the lease of a current claim; by its original length when none is given. */
  public Item heartbeat(long id, String token, Integer leaseSeconds) {
    return items.heartbeat(id, token, leaseSeconds).orElseGet(() -> replayOrReject(id, token));
  }

  /**
   * After a finishing statement changed nothing: the item as it is when this token's own finish was
   * already accepted (a retried request), otherwise the reason it was refused.
   */
  private Item replayOrReject(long id, String token, ItemState... acceptedStates) {
    Item item =
        items.findCurrent(id).orElseThrow(() -> new ItemNotFoundException(Long.toString(id)));
    if (item.alreadyFinishedBy(token, acceptedStates)) {
      return item;
    }
    throw new StaleClaimException(id, item.state);
  }
}
