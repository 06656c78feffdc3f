package dev.claimq.faults;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Judges one scenario after the fact, from three independent records: the items and attempts tables
 * of the suite's own database, the provider's record of every send, and what the harness saw over
 * HTTP (plus the service logs). Every finding is a violation; none is a warning.
 */
final class Checker {
  private static final Pattern ACCESS = Pattern.compile("access (\\S+) (\\S+) (\\d{3})");

  record Item(
      long id,
      String dedupeKey,
      String state,
      int attempts,
      int maxAttempts,
      String idempotencyKey,
      boolean stuck) {}

  record Attempt(
      long itemId,
      int attempt,
      String worker,
      Timestamp claimedAt,
      Timestamp finishedAt,
      String outcome) {}

  /** Per-state counts of the queue, for the summary. */
  final Map<String, Integer> states = new TreeMap<>();

  final Map<String, Item> itemsByKey = new HashMap<>();
  final Set<Long> resolved = new java.util.HashSet<>(); // or done by a late success
  final Map<Long, List<Attempt>> attemptsByItem = new HashMap<>();

  List<String> check(
      Cluster cluster,
      String queue,
      Set<String> enqueuedKeys,
      Provider provider,
      History history,
      Map<Path, Long> logOffsets)
      throws SQLException, IOException, InterruptedException {
    List<String> violations = new ArrayList<>(history.violations);
    load(cluster, queue, violations);

    // Nothing lost: every distinct dedupe key enqueued is exactly one item, and nothing else is.
    for (String key : enqueuedKeys) {
      if (!itemsByKey.containsKey(key) && !history.forgivenKeys.contains(key)) {
        violations.add("lost: dedupe key " + key + " was enqueued but has no item");
      }
    }
    for (String key : itemsByKey.keySet()) {
      if (!enqueuedKeys.contains(key)) {
        violations.add("invented: item with dedupe key " + key + " was never enqueued");
      }
    }
    for (Item item : itemsByKey.values()) {
      if (item.stuck) {
        violations.add("stuck: item " + item.id + " is sending past its lease");
      }
      if (item.attempts > item.maxAttempts) {
        violations.add(
            "item " + item.id + " has attempts " + item.attempts + " > max " + item.maxAttempts);
      }
      List<Attempt> attempts = attemptsByItem.getOrDefault(item.id, List.of());
      if (attempts.size() > item.maxAttempts) {
        violations.add(
            "item "
                + item.id
                + " was claimed "
                + attempts.size()
                + " times, max "
                + item.maxAttempts);
      }
      checkAttempts(item, attempts, violations);
    }

    // Nothing sent twice in effect.
    Map<String, Item> byIdempotencyKey = new HashMap<>();
    itemsByKey.values().forEach(i -> byIdempotencyKey.put(i.idempotencyKey, i));
    for (JsonNode request : provider.requests()) {
      String dedupeKey = request.path("payload").path("key").asText(null);
      Item item = dedupeKey == null ? null : itemsByKey.get(dedupeKey);
      if (item == null || !dedupeKey.startsWith(queue + "/")) {
        continue; // another scenario's send
      }
      String sentWith = request.path("idempotencyKey").asText();
      if (!sentWith.equals(item.idempotencyKey) && !history.forgivenKeys.contains(dedupeKey)) {
        violations.add(
            "item "
                + item.id
                + " was sent with idempotency key "
                + sentWith
                + ", not its own "
                + item.idempotencyKey);
      }
    }
    Map<String, JsonNode> sends = provider.sends();
    int acceptedByProvider = 0;
    for (Item item : itemsByKey.values()) {
      JsonNode send = sends.get(item.idempotencyKey);
      boolean accepted = send != null && send.path("accepted").asInt() > 0;
      if (accepted) {
        acceptedByProvider++;
      }
      if (accepted != item.state.equals("done")) {
        violations.add(
            "item "
                + item.id
                + " is "
                + item.state
                + " but the provider "
                + (accepted ? "accepted" : "never accepted")
                + " its send");
      }
    }
    int done = states.getOrDefault("done", 0);
    if (acceptedByProvider != done) {
      violations.add(
          "the provider completed "
              + acceptedByProvider
              + " distinct sends but "
              + done
              + " items are done");
    }
    history.acceptedCompletes.forEach(
        (id, tokens) -> {
          if (tokens.size() > 1 && !history.forgivenItems.contains(id)) {
            violations.add("item " + id + " had " + tokens.size() + " accepted completions");
          }
        });

    // No 500 from the service, in what the harness saw or in any instance's log.
    violations.addAll(history.badAnswers);
    for (Map.Entry<Path, Long> log : logOffsets.entrySet()) {
      scanLog(log.getKey(), log.getValue(), violations);
    }
    return violations;
  }

  private void checkAttempts(Item item, List<Attempt> attempts, List<String> violations) {
    int doneCount = 0;
    for (int n = 0; n < attempts.size(); n++) {
      Attempt a = attempts.get(n);
      if ("done".equals(a.outcome)) {
        doneCount++;
      }
      if (a.attempt != n + 1) {
        violations.add("item " + item.id + ": attempt " + (n + 1) + " is numbered " + a.attempt);
      }
      boolean last = n == attempts.size() - 1;
      if (a.finishedAt == null && !(last && item.state.equals("sending"))) {
        violations.add("item " + item.id + ": attempt " + a.attempt + " is still open");
      }
      // At most one live claim: the next claim starts only after this one ended, and a claim
      // ends early only by its lease expiring (the reaper's outcome) or by its own finish.
      if (!last && a.finishedAt != null) {
        Attempt next = attempts.get(n + 1);
        if (next.claimedAt.before(a.finishedAt)) {
          violations.add(
              "item "
                  + item.id
                  + ": attempt "
                  + next.attempt
                  + " claimed at "
                  + next.claimedAt
                  + " while attempt "
                  + a.attempt
                  + " was live until "
                  + a.finishedAt);
        }
        if ("done".equals(a.outcome) || "failed".equals(a.outcome)) {
          violations.add(
              "item "
                  + item.id
                  + ": claimed again after attempt "
                  + a.attempt
                  + " ended "
                  + a.outcome);
        }
      }
    }
    if (doneCount > 1) {
      violations.add("item " + item.id + " has " + doneCount + " accepted completions");
    }
    // An operator's resolve, or a late success (a complete that came after its claim ended),
    // makes an item done without its last attempt being the complete.
    if (item.state.equals("done")
        && !resolved.contains(item.id)
        && (attempts.isEmpty() || !"done".equals(attempts.get(attempts.size() - 1).outcome))) {
      violations.add("item " + item.id + " is done but its last attempt is not");
    }
  }

  /** The queue's items by dedupe key, as they are now. */
  Map<String, Item> snapshot(Cluster cluster, String queue) throws SQLException {
    load(cluster, queue, new ArrayList<>());
    return itemsByKey;
  }

  private void load(Cluster cluster, String queue, List<String> violations) throws SQLException {
    try (Connection c = cluster.connect()) {
      try (PreparedStatement s =
          c.prepareStatement(
              "SELECT id, dedupe_key, state, attempts, max_attempts, idempotency_key,"
                  + " state = 'sending' AND lease_expires_at < now() - interval '5 seconds'"
                  + " FROM claimq.item WHERE queue = ?")) {
        s.setString(1, queue);
        try (ResultSet r = s.executeQuery()) {
          while (r.next()) {
            Item item =
                new Item(
                    r.getLong(1),
                    r.getString(2),
                    r.getString(3),
                    r.getInt(4),
                    r.getInt(5),
                    r.getString(6),
                    r.getBoolean(7));
            if (itemsByKey.put(item.dedupeKey, item) != null) {
              violations.add("duplicate: two items with dedupe key " + item.dedupeKey);
            }
            states.merge(item.state, 1, Integer::sum);
          }
        }
      }
      try (PreparedStatement s =
          c.prepareStatement(
              "SELECT a.item_id FROM claimq.item_action a JOIN claimq.item i ON i.id = a.item_id"
                  + " WHERE i.queue = ? AND a.action = 'resolve'"
                  + " UNION SELECT a.item_id FROM claimq.attempt a"
                  + " JOIN claimq.item i ON i.id = a.item_id"
                  + " WHERE i.queue = ? AND a.late_reported_at IS NOT NULL")) {
        s.setString(2, queue);
        s.setString(1, queue);
        try (ResultSet r = s.executeQuery()) {
          while (r.next()) {
            resolved.add(r.getLong(1));
          }
        }
      }
      try (PreparedStatement s =
          c.prepareStatement(
              "SELECT a.item_id, a.attempt, a.worker, a.claimed_at, a.finished_at, a.outcome"
                  + " FROM claimq.attempt a JOIN claimq.item i ON i.id = a.item_id"
                  + " WHERE i.queue = ? ORDER BY a.item_id, a.id")) {
        s.setString(1, queue);
        try (ResultSet r = s.executeQuery()) {
          while (r.next()) {
            attemptsByItem
                .computeIfAbsent(r.getLong(1), id -> new ArrayList<>())
                .add(
                    new Attempt(
                        r.getLong(1),
                        r.getInt(2),
                        r.getString(3),
                        r.getTimestamp(4),
                        r.getTimestamp(5),
                        r.getString(6)));
          }
        }
      }
    }
  }

  /**
   * Access-log lines with a 5xx other than 503, and the mapper's "unexpected error" (its 500 path,
   * logged even when the client is gone and the 500 never reaches it). SERVICE CONTRACT: "no 500
   * from the service in any log"; on the commit this suite was written against, the PostgreSQL and
   * duplicate-storm scenarios find such lines (see the README's Reliability section).
   */
  static void scanLog(Path log, long from, List<String> violations) throws IOException {
    byte[] all = Files.readAllBytes(log);
    String text =
        new String(
            all,
            (int) Math.min(from, all.length),
            all.length - (int) Math.min(from, all.length),
            StandardCharsets.UTF_8);
    for (String line : text.split("\n")) {
      Matcher access = ACCESS.matcher(line);
      if (access.find() && access.group(3).startsWith("5") && !access.group(3).equals("503")) {
        violations.add(log.getFileName() + ": " + line.strip());
      } else if (line.contains("unexpected error")) {
        violations.add(log.getFileName() + ": " + line.strip());
      }
    }
  }

  /** ERROR lines in the new part of a log: not violations by themselves, but reported. */
  static long errorLines(Path log, long from) throws IOException {
    byte[] all = Files.readAllBytes(log);
    String text =
        new String(
            all,
            (int) Math.min(from, all.length),
            all.length - (int) Math.min(from, all.length),
            StandardCharsets.UTF_8);
    return text.lines().filter(l -> l.contains(" ERROR ")).count();
  }
}
