package dev.claimq.queue;

import dev.claimq.config.ClaimqConfig;
import dev.claimq.policy.Backoff;
import dev.claimq.policy.FailureReason;
import dev.claimq.store.FinishStatements;
import dev.claimq.store.FinishStatements.Failure;
import dev.claimq.store.Item;
import dev.claimq.store.ItemRepository;
import dev.claimq.store.ItemRepository.Changed;
import dev.claimq.store.ItemState;
import dev.claimq.telemetry.ItemLog;
import dev.claimq.telemetry.LogText;
import dev.claimq.telemetry.QueueMetrics;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;
import java.util.function.Predicate;
import org.jboss.logging.Logger;

/**
 * Workers' use cases: claim, heartbeat, complete, fail. Each is one statement, and so its own
 * transaction (autocommit), whose one answer decides the outcome. A holder's complete that also
 * claims the next item is one statement too; any other finish that claims the next item runs its
 * statements in one transaction, the claim only when the finish changed the item.
 */
@ApplicationScoped
public class WorkService {
  private static final Logger LOG = Logger.getLogger(WorkService.class);

  private final ItemRepository items;
  private final QueueMetrics metrics;
  private final Backoff backoff;

  WorkService(ItemRepository items, QueueMetrics metrics, ClaimqConfig config) {
    this.items = items;
    this.metrics = metrics;
    this.backoff = new Backoff(config.retry().backoffBase(), config.retry().backoffCap());
  }

  /**
   * Claims the item if it is pending and due: CHANGED with the claimed item (its claimToken is this
   * worker's), NOT_CLAIMED when another worker won or it is not due, or NOT_FOUND.
   */
  public Answer claim(long id, String worker, Integer leaseSeconds) {
    Answer answer =
        items
            .claim(id, ClaimTokens.next(), worker, leaseSeconds)
            .map(
                row ->
                    new Answer(row.changed() ? Outcome.CHANGED : Outcome.NOT_CLAIMED, row.item()))
            .orElseGet(Answer::notFound);
    if (answer.outcome() == Outcome.CHANGED) {
      claimed(answer.item());
    } else if (answer.outcome() == Outcome.NOT_CLAIMED) {
      metrics.claimLost(answer.item().queue);
    }
    return answer;
  }

  /**
   * Claims the queue's next due item (its claimToken is this worker's); empty when there is none.
   */
  public Optional<Item> claimNext(String queue, String worker, Integer leaseSeconds) {
    Optional<Item> item = items.claimNext(queue, ClaimTokens.next(), worker, leaseSeconds);
    item.ifPresent(this::claimed);
    return item;
  }

  /**
   * Counts a won claim, with how long the item had been due (both times the database's): from its
   * runAt, or from its enqueue when runAt was earlier (an agent may name a time long past).
   */
  void claimed(Item item) {
    Instant due = item.runAt.isAfter(item.createdAt) ? item.runAt : item.createdAt;
    metrics.claimed(item.queue, Duration.between(due, item.updatedAt));
  }

  /**
   * Counts what a report did: a complete or fail that finished the item (with how long its claim
   * held it), a late success, or a stale report.
   */
  Answer counted(Answer answer, String externalRef) {
    Item item = answer.item();
    switch (answer.outcome()) {
      case CHANGED -> {
        Duration held =
            item.heldSince == null ? null : Duration.between(item.heldSince, item.updatedAt);
        switch (item.state) {
          case DONE -> {
            metrics.completed(item.queue, held);
            if (item.alreadySentAttempt != null
                && !Objects.equals(item.alreadySentRef, item.externalRef)) {
              // Counted on the item by the statement, on the same condition.
              metrics.duplicateSend(item.queue);
              ItemLog.warn(
                  LOG,
                  item,
                  "a send went out twice: done with \"%s\" after attempt %d's send came back with"
                      + " \"%s\"",
                  LogText.oneLine(item.externalRef),
                  item.alreadySentAttempt,
                  LogText.oneLine(item.alreadySentRef));
            }
          }
          case PENDING -> metrics.failed(item.queue, true, held);
          case FAILED -> {
            metrics.failed(item.queue, false, held);
            // Not the reason: providers' errors name recipients, and the log is kept and shipped
            // where the item's readers are not. Operators read it on the item.
            ItemLog.info(LOG, item, "failed, for an operator");
          }
          default -> {} // a heartbeat or an intent: the claim goes on
        }
      }
      case LATE_SUCCESS -> {
        metrics.staleReport(item.queue);
        // Done already with another reference (or none): the send went out twice, as the
        // statement counts it on the item. An item resolved without one has just taken this one.
        boolean duplicate =
            item.state == ItemState.DONE && !Objects.equals(item.externalRef, externalRef);
        metrics.lateSuccess(item.queue, duplicate);
        if (duplicate) {
          ItemLog.warn(
              LOG,
              item,
              "a send went out twice: an earlier claim reported \"%s\" after the item was done"
                  + " with \"%s\"",
              LogText.oneLine(externalRef),
              LogText.oneLine(item.externalRef));
        } else {
          ItemLog.info(LOG, item, "late success recorded: \"%s\"", LogText.oneLine(externalRef));
        }
      }
      case STALE_CLAIM -> metrics.staleReport(item.queue);
      default -> {}
    }
    return answer;
  }

  /**
   * Marks the item done. Repeating an accepted complete with the same token answers REPLAYED with
   * the item, so a worker may safely retry a complete whose answer it did not receive. With an
   * ended claim's token (an earlier claim's, or this one's after its own fail or release) and an
   * externalRef, the send happened: LATE_SUCCESS, recorded.
   */
  public Answer complete(long id, String token, String externalRef, String actor) {
    return complete(id, token, externalRef, actor, null).answer();
  }

  /** A claim that a finish asks for: of its queue's next due item, for this worker and lease. */
  public record NextClaim(String worker, Integer leaseSeconds) {}

  /** A finish's answer, and the claim of its queue's next item made in the same transaction. */
  public record Finished(Answer answer, Optional<Item> next) {}

  /**
   * A complete, as above, and with {@code next} (null: none), when it finished the item, the claim
   * of its queue's next due item in the same transaction: the holder's complete and the claim as
   * one statement, any other answer as {@link #finishing} gives it.
   */
  public Finished complete(
      long id, String token, String externalRef, String actor, NextClaim next) {
    if (next != null) {
      // The common case in one statement: the holder finishing its claim, and the next claim.
      Optional<ItemRepository.HeldAndNext> held =
          items.completeHeldAndClaimNext(
              id,
              token,
              externalRef,
              actor,
              ClaimTokens.next(),
              next.worker(),
              next.leaseSeconds());
      if (held.isPresent()) {
        Finished finished =
            new Finished(
                finish(held.get().finished(), token, Repeat.COMPLETE, sameComplete(externalRef)),
                held.get().next());
        counted(finished.answer(), externalRef);
        finished.next().ifPresent(this::claimed);
        return finished;
      }
      // It finished nothing: the transaction below says why (a replay, a late success, a stale
      // token, no such item), and claims nothing then.
    }
    return finishing(
        next,
        externalRef,
        statements -> {
          Optional<Changed> row = statements.complete(id, token, externalRef, actor);
          if (row.isPresent() && row.get().late()) {
            return new Answer(Outcome.LATE_SUCCESS, row.get().item());
          }
          return finish(row, token, Repeat.COMPLETE, sameComplete(externalRef));
        });
  }

  /**
   * Records a failed attempt and schedules the retry (the provider's Retry-After, when given,
   * replaces the computed backoff). {@code sentUnknown}: the worker cannot tell whether the
   * provider acted; the queue's policy then decides between a flagged retry and a hold. Repeating
   * an accepted fail answers REPLAYED. With {@code next} (null: none), as for complete.
   */
  public Finished fail(
      long id,
      String token,
      String error,
      boolean retryable,
      boolean sentUnknown,
      Long retryAfterSeconds,
      String actor,
      NextClaim next) {
    // Reading the queue's backoff comes first, outside any transaction of the finish.
    long[] delays =
        retryAfterSeconds != null
            ? delays(retryAfterSeconds, null)
            : delays(null, items.backoffOf(java.util.List.of(id)).get(id));
    Failure failure = new Failure(FailureReason.sanitize(error), retryable, sentUnknown, delays);
    return finishing(
        next,
        null,
        statements ->
            finish(
                statements.fail(id, token, failure, actor),
                token,
                Repeat.FAIL,
                sameFail(token, failure.error(), retryable, sentUnknown, retryAfterSeconds)));
  }

  /**
   * Runs a finish on its own (autocommit), or, with {@code next}, in one transaction with the claim
   * of its queue's next due item: one commit instead of two, and should the claim fail, the finish
   * is undone with it (the worker's retry then finds the item as it was). Only a finish that
   * changed the item claims, so a repeated request (REPLAYED) never claims a second item. What was
   * done is counted once it has committed.
   */
  private Finished finishing(
      NextClaim next, String externalRef, Function<FinishStatements, Answer> finish) {
    Finished finished =
        next == null
            ? new Finished(finish.apply(items), Optional.empty())
            : items.inOneTransaction(
                statements -> {
                  Answer answer = finish.apply(statements);
                  if (answer.outcome() != Outcome.CHANGED) {
                    return new Finished(answer, Optional.empty());
                  }
                  return new Finished(
                      answer,
                      statements.claimNext(
                          answer.item().queue,
                          ClaimTokens.next(),
                          next.worker(),
                          next.leaseSeconds()));
                });
    counted(finished.answer(), externalRef);
    finished.next().ifPresent(this::claimed);
    return finished;
  }

  /**
   * The retry delays to choose from by attempt: the provider's Retry-After for any attempt, or the
   * backoff schedule of the item's queue (its policy's base and cap, else the service's).
   */
  long[] delays(Long retryAfterSeconds, ItemRepository.QueueBackoff queue) {
    if (retryAfterSeconds != null) {
      return new long[] {retryAfterSeconds};
    }
    return backoffOf(queue).scheduleSeconds(ThreadLocalRandom.current());
  }

  /**
   * The queue's backoff: its own base and cap where set. A policy is refused when its cap would be
   * below its base; a cap below the base here (the service's default changed since the policy was
   * set) is the base.
   */
  Backoff backoffOf(ItemRepository.QueueBackoff queue) {
    if (queue == null || queue.baseSeconds() == null && queue.capSeconds() == null) {
      return backoff;
    }
    java.time.Duration base =
        queue.baseSeconds() != null
            ? java.time.Duration.ofSeconds(queue.baseSeconds())
            : backoff.base();
    java.time.Duration cap =
        queue.capSeconds() != null
            ? java.time.Duration.ofSeconds(queue.capSeconds())
            : backoff.cap();
    return new Backoff(base, cap.compareTo(base) < 0 ? base : cap);
  }

  /** Extends the lease of a current claim; by the length it last set when none is given. */
  public Answer heartbeat(long id, String token, Integer leaseSeconds) {
    return counted(
        finish(items.heartbeat(id, token, leaseSeconds), token, Repeat.NONE, ANY_REPORT), null);
  }

  /**
   * Records that the current attempt is about to send: CHANGED (also when repeated), STALE_CLAIM or
   * NOT_FOUND.
   */
  public Answer intent(long id, String token) {
    return counted(finish(items.intent(id, token), token, Repeat.NONE, ANY_REPORT), null);
  }

  /**
   * Hands the claim back without using up an attempt, due again after {@code delaySeconds}:
   * CHANGED, REPLAYED for a repeat (DIFFERENT_RELEASE for one with another delay), RELEASE_LIMIT
   * when the item's releases are used up (the claim stays this worker's), STALE_CLAIM or NOT_FOUND.
   */
  public Answer release(long id, String token, long delaySeconds, String actor) {
    Answer answer =
        items
            .release(id, token, delaySeconds, actor)
            .map(
                row -> {
                  Item item = row.item();
                  boolean mine = token.equals(item.claimToken);
                  if (!row.changed() && mine && item.state == ItemState.SENDING) {
                    return new Answer(Outcome.RELEASE_LIMIT, item);
                  }
                  return finish(row, token, Repeat.RELEASE, sameRelease(token, delaySeconds));
                })
            .orElseGet(Answer::notFound);
    if (answer.outcome() == Outcome.CHANGED) {
      metrics.released(answer.item().queue);
    } else if (answer.outcome() == Outcome.STALE_CLAIM) {
      metrics.staleReport(answer.item().queue);
    }
    return answer;
  }

  /**
   * What a repeat of a finish finds: the claim's attempt ended the way that finish ends it. The
   * attempt tells finishes of one claim apart: a fail after the claim's own release, say, finds the
   * item pending under its token as a repeated fail would, but the attempt released, not failed. A
   * complete also finds the item done under its token (done is final, so its latest attempt is the
   * claim's). A fail or release leaves the item due, so it may be claimed again before the repeat
   * (by the fail's own next, or anyone): their statements report the outcome of the attempt their
   * token opened, and the item may be in any state (states null).
   */
  enum Repeat {
    /** Heartbeat and intent: changes that end nothing, repeat-safe by their statements. */
    NONE(Set.of(), Set.of(), Outcome.DIFFERENT_REPORT),
    COMPLETE(Set.of(ItemState.DONE), Set.of("done"), Outcome.DIFFERENT_REPORT),
    FAIL(null, Set.of("retry", "failed"), Outcome.DIFFERENT_FAIL),
    RELEASE(null, Set.of("released"), Outcome.DIFFERENT_RELEASE);

    private final Set<ItemState> states;
    private final Set<String> outcomes;

    /** What a repeat with another report is. */
    private final Outcome different;

    Repeat(Set<ItemState> states, Set<String> outcomes, Outcome different) {
      this.states = states;
      this.outcomes = outcomes;
      this.different = different;
    }

    boolean of(Changed row, String token) {
      boolean ended = row.lastOutcome() != null && outcomes.contains(row.lastOutcome());
      return states == null
          ? ended
          : ended && token.equals(row.item().claimToken) && states.contains(row.item().state);
    }
  }

  /** A report that any repeat matches: heartbeat and intent, which end nothing. */
  static final Predicate<Changed> ANY_REPORT = row -> true;

  /**
   * A release's report: its delay, as the item keeps it. The release statement sets runAt to its
   * own now() plus the delay and updatedAt to that now(), and nothing changes a pending item under
   * this token afterwards but a claim, which ends the token. Once claimed again, the item no longer
   * keeps the delay, and any delay matches.
   */
  static Predicate<Changed> sameRelease(String token, long delaySeconds) {
    return row ->
        !stillLeftBy(token, row.item())
            || Duration.between(row.item().updatedAt, row.item().runAt)
                .equals(Duration.ofSeconds(delaySeconds));
  }

  /** The item pending under this token, as its fail or release left it: not claimed since. */
  private static boolean stillLeftBy(String token, Item item) {
    return item.state == ItemState.PENDING && token.equals(item.claimToken);
  }

  /** A complete's report: its externalRef, as the item keeps it. */
  static Predicate<Changed> sameComplete(String externalRef) {
    return row -> Objects.equals(externalRef, row.item().externalRef);
  }

  /**
   * A fail's report: its reason (sanitized), as the claim's attempt keeps it (the item, which a
   * later claim's fail changes, only for the row this fail changed), behind the prefix item.sql's
   * fail puts before a held or past-horizon reason; a fail that retries was retryable; its sent, as
   * the attempt keeps it; and one that names retryAfterSeconds (null: the service's backoff, which
   * any delay matches) finds its retry due that long after the fail, as the fail statement sets
   * runAt and updatedAt from one now(), while the item is pending under this token (once claimed
   * again, it no longer keeps the delay, and any delay matches).
   */
  static Predicate<Changed> sameFail(
      String token, String error, boolean retryable, boolean sentUnknown, Long retryAfterSeconds) {
    return row -> {
      Item item = row.item();
      String kept = row.changed() ? item.lastError : row.attemptError();
      boolean sameReason =
          error.equals(kept)
              || ("outcome unknown: " + error).equals(kept)
              || ("idempotency horizon passed: " + error).equals(kept);
      boolean sameDelay =
          retryAfterSeconds == null
              || !stillLeftBy(token, item)
              || Duration.between(item.updatedAt, item.runAt)
                  .equals(Duration.ofSeconds(retryAfterSeconds));
      return sameReason
          && sameDelay
          && sentUnknown == row.lastSentUnknown()
          && (retryable || !"retry".equals(row.lastOutcome()));
    };
  }

  private static Answer finish(
      Optional<Changed> row, String token, Repeat repeat, Predicate<Changed> sameReport) {
    return row.map(r -> finish(r, token, repeat, sameReport)).orElseGet(Answer::notFound);
  }

  /**
   * The outcome of a statement that only the current claim can make: CHANGED; REPLAYED when this
   * token's own earlier request of the same kind already put the item where this one would (a
   * retried request), DIFFERENT_REPORT when it did, but with another report (a complete's
   * externalRef, a fail's reason); otherwise STALE_CLAIM.
   */
  static Answer finish(Changed row, String token, Repeat repeat, Predicate<Changed> sameReport) {
    Item item = row.item();
    // A batch may name one item twice: its row is changed by the other entry, not this one. With
    // another token, this entry's claim is stale; with this token, a different report is refused.
    // A different fail is told by the claim's own first reason: the item's may be a later claim's.
    String first =
        repeat.different == Outcome.DIFFERENT_FAIL
            ? (row.changed() ? item.lastError : row.attemptError())
            : null;
    if (row.changed() && token.equals(item.claimToken)) {
      return sameReport.test(row)
          ? new Answer(Outcome.CHANGED, item)
          : new Answer(repeat.different, item, first);
    }
    if (repeat.of(row, token)) {
      return sameReport.test(row)
          ? new Answer(Outcome.REPLAYED, item)
          : new Answer(repeat.different, item, first);
    }
    return new Answer(Outcome.STALE_CLAIM, item);
  }
}
