package dev.claimq.faults;

import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/** What the harness saw during one scenario: service answers, accepted completes, faults. */
final class History {
  /** Per item id, the claim tokens whose complete was answered 200. */
  final Map<Long, Set<String>> acceptedCompletes = new ConcurrentHashMap<>();

  /** Answers that break the contract whatever the fault (a 500, a 503 that is not a problem). */
  final List<String> badAnswers = new CopyOnWriteArrayList<>();

  /** Scenario-specific findings, each a violation. */
  final List<String> violations = new CopyOnWriteArrayList<>();

  /** An enqueue answered 201 or 200: the item the service said holds the key, and when. */
  record EnqueueAck(String dedupeKey, String itemId, int status, long atNanos) {}

  /** A complete answered 200, and when. */
  record CompleteAck(long itemId, String claimToken, long atNanos) {}

  /** Every acknowledged enqueue and complete, for checks of what survived a failover. */
  final Queue<EnqueueAck> enqueueAcks = new ConcurrentLinkedQueue<>();

  final Queue<CompleteAck> completeAcks = new ConcurrentLinkedQueue<>();

  /**
   * Dedupe keys and item ids whose acknowledged writes the scenario measured as lost, where losing
   * them is the documented price of the fault (an asynchronous standby promoted): the checker
   * counts them elsewhere and does not also report them as lost, resent or completed twice.
   */
  final Set<String> forgivenKeys = ConcurrentHashMap.newKeySet();

  final Set<Long> forgivenItems = ConcurrentHashMap.newKeySet();

  final AtomicInteger faults = new AtomicInteger();
  final AtomicInteger unavailable = new AtomicInteger(); // 503s and connection errors seen
  final AtomicInteger staleClaims = new AtomicInteger(); // 409s on complete or fail

  void completed(long itemId, String token) {
    completeAcks.add(new CompleteAck(itemId, token, System.nanoTime()));
    acceptedCompletes.computeIfAbsent(itemId, id -> ConcurrentHashMap.newKeySet()).add(token);
  }

  void enqueued(String dedupeKey, String itemId, int status) {
    enqueueAcks.add(new EnqueueAck(dedupeKey, itemId, status, System.nanoTime()));
  }

  void violation(String message) {
    violations.add(message);
  }

  void fault() {
    faults.incrementAndGet();
  }
}
