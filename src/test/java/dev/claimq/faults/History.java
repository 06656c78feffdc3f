package dev.claimq.faults;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
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

  final AtomicInteger faults = new AtomicInteger();
  final AtomicInteger unavailable = new AtomicInteger(); // 503s and connection errors seen
  final AtomicInteger staleClaims = new AtomicInteger(); // 409s on complete or fail

  void completed(long itemId, String token) {
    acceptedCompletes.computeIfAbsent(itemId, id -> ConcurrentHashMap.newKeySet()).add(token);
  }

  void violation(String message) {
    violations.add(message);
  }

  void fault() {
    faults.incrementAndGet();
  }
}
