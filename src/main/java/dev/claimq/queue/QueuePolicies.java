package dev.claimq.queue;

import dev.claimq.config.ClaimqConfig;
import dev.claimq.policy.Backoff;
import dev.claimq.store.ItemRepository;
import dev.claimq.store.QueueAction;
import dev.claimq.store.QueuePolicy;
import dev.claimq.telemetry.QueueMetrics;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Event;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** Operators' settings of a queue: its policy, pause and resume, and the log of those changes. */
@ApplicationScoped
public class QueuePolicies {
  /**
   * The worst case of a policy's retries: each backoff at its ceiling, each attempt using its whole
   * lease. It must fit in the provider's idempotency horizon.
   */
  public record Schedule(
      int maxAttempts, int leaseSeconds, List<Long> backoffSeconds, long worstCaseSeconds) {}

  /** Every setting of a queue as it applies: the policy's where set, the service's otherwise. */
  public record Effective(
      int maxAttempts,
      int leaseSeconds,
      int crashLoopAfter,
      String onUnknownOutcome,
      int maxReleases,
      Backoff backoff,
      boolean requireApproval) {}

  /**
   * What a policy change did: CHANGED with the policy as it is now (also when it had these settings
   * already), POLICY_DOES_NOT_FIT, or STALE_POLICY with the policy as it is now.
   */
  public record Change(Outcome outcome, QueuePolicy policy, Schedule schedule) {}

  private final ItemRepository items;
  private final Event<ItemsEnqueued> claimable;
  private final ClaimqConfig config;
  private final WorkService work;
  private final QueueMetrics metrics;

  QueuePolicies(
      ItemRepository items,
      Event<ItemsEnqueued> claimable,
      ClaimqConfig config,
      WorkService work,
      QueueMetrics metrics) {
    this.items = items;
    this.claimable = claimable;
    this.config = config;
    this.work = work;
    this.metrics = metrics;
  }

  /** The queue's policy as set: one with every setting null (the defaults) when none was. */
  public QueuePolicy get(String queue) {
    return orNone(queue, items.policy(queue));
  }

  private static QueuePolicy orNone(String queue, Optional<QueuePolicy> policy) {
    return policy.orElseGet(
        () -> {
          QueuePolicy none = new QueuePolicy();
          none.queue = queue;
          return none;
        });
  }

  /**
   * Replaces the queue's settings; {@code asSent} is the request, for the action log. Refused
   * (POLICY_DOES_NOT_FIT) when a providerKeyTtl cannot hold the worst-case schedule: retries after
   * it would be unknown keys to the provider, so new sends. With {@code versions} (an If-Match;
   * null for none), refused (STALE_POLICY) unless the policy is at one of them or has these
   * settings.
   */
  public Change set(QueuePolicy policy, String asSent, String actor, long[] versions) {
    Schedule schedule = worstCase(policy);
    if (policy.providerKeyTtlSeconds != null
        && schedule.worstCaseSeconds() > policy.providerKeyTtlSeconds) {
      return new Change(Outcome.POLICY_DOES_NOT_FIT, policy, schedule);
    }
    ItemRepository.PolicyChange set = items.setPolicy(policy, asSent, actor, versions);
    if (set.changed()) {
      metrics.operatorAction(policy.queue, "policy");
    }
    if (!set.asRequested()) {
      return new Change(Outcome.STALE_POLICY, orNone(policy.queue, set.policy()), schedule);
    }
    // The same settings again (a repeat whose answer was lost): the policy as it is, 200 still.
    return new Change(Outcome.CHANGED, orNone(policy.queue, set.policy()), schedule);
  }

  /** Every attempt's whole lease plus every backoff at its ceiling, with the policy's settings. */
  Schedule worstCase(QueuePolicy policy) {
    Effective effective = effective(policy);
    int maxAttempts = effective.maxAttempts();
    int lease = effective.leaseSeconds();
    List<Long> delays = new ArrayList<>();
    long worst = (long) maxAttempts * lease;
    for (int attempt = 1; attempt < maxAttempts; attempt++) {
      long delay = effective.backoff().ceilingSeconds(attempt);
      delays.add(delay);
      worst += delay;
    }
    return new Schedule(maxAttempts, lease, delays, worst);
  }

  /** The service's backoff, for a queue whose policy sets neither base nor cap. */
  public Backoff defaultBackoff() {
    return work.backoffOf(null);
  }

  /** The policy's settings, each filled in with the service's default where the policy has none. */
  public Effective effective(QueuePolicy policy) {
    return new Effective(
        policy.maxAttempts != null ? policy.maxAttempts : config.retry().defaultMaxAttempts(),
        policy.leaseSeconds != null
            ? policy.leaseSeconds
            : (int) config.lease().defaultDuration().toSeconds(),
        policy.crashLoopAfter != null ? policy.crashLoopAfter : config.retry().crashLoopAfter(),
        policy.onUnknownOutcome != null
            ? policy.onUnknownOutcome
            : config.retry().onUnknownOutcome().wireName(),
        policy.maxReleases != null ? policy.maxReleases : config.lease().maxReleases(),
        work.backoffOf(
            new ItemRepository.QueueBackoff(policy.backoffBaseSeconds, policy.backoffCapSeconds)),
        Boolean.TRUE.equals(policy.requireApproval));
  }

  /**
   * Claims of the queue answer 204 until it is resumed; enqueues are still accepted. A paused queue
   * is left as it is, not recorded or counted again. {@code versions} as for {@link #set}: a queue
   * already paused is CHANGED whatever they are.
   */
  public Change pause(String queue, String actor, long[] versions) {
    return paused(queue, true, actor, versions);
  }

  /** Claims resume, and parked long-polls of the queue are woken at once. */
  public Change resume(String queue, String actor, long[] versions) {
    Change change = paused(queue, false, actor, versions);
    if (change.outcome() == Outcome.CHANGED) {
      claimable.fire(new ItemsEnqueued(queue));
    }
    return change;
  }

  private Change paused(String queue, boolean paused, String actor, long[] versions) {
    ItemRepository.PolicyChange set = items.setPaused(queue, paused, actor, versions);
    if (set.changed()) {
      metrics.operatorAction(queue, paused ? "pause" : "resume");
    }
    return new Change(
        set.asRequested() ? Outcome.CHANGED : Outcome.STALE_POLICY,
        orNone(queue, set.policy()),
        null);
  }

  public List<QueueAction> actions(String queue) {
    return items.queueActions(queue);
  }
}
