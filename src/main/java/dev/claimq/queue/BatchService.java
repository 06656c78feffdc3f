package dev.claimq.queue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.claimq.config.ClaimqConfig;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Event;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Many items per call, for throughput: each batch is decided by one statement (plus one read to
 * explain the entries it did not change), with the same conditions as the single calls, and answers
 * per entry what the single call would have answered.
 */
@ApplicationScoped
public class BatchService {
  /** An entry of a batch complete. */
  public record CompleteEntry(long id, String claimToken, String externalRef) {}

  /** An entry of a batch fail. */
  public record FailEntry(
      long id, String claimToken, String error, boolean retryable, Long retryAfterSeconds) {}

  private final ItemRepository items;
  private final EnqueueService enqueuer;
  private final Event<ItemsEnqueued> enqueued;
  private final ObjectMapper json;
  private final Backoff backoff;
  private final int defaultMaxAttempts;
  private final int defaultLeaseSeconds;

  BatchService(
      ItemRepository items,
      EnqueueService enqueuer,
      Event<ItemsEnqueued> enqueued,
      ObjectMapper json,
      ClaimqConfig config) {
    this.items = items;
    this.enqueuer = enqueuer;
    this.enqueued = enqueued;
    this.json = json;
    this.backoff = new Backoff(config.retry().backoffBase(), config.retry().backoffCap());
    this.defaultMaxAttempts = config.retry().defaultMaxAttempts();
    this.defaultLeaseSeconds = (int) config.lease().defaultDuration().toSeconds();
  }

  /** Enqueues every entry once per dedupe key; 201 new, 200 same work again, 422 key reused. */
  public List<BatchResult> enqueue(String queue, List<NewItem> entries, String actor) {
    ArrayNode batch = json.createArrayNode();
    for (int i = 0; i < entries.size(); i++) {
      NewItem entry = entries.get(i);
      ObjectNode row = batch.addObject();
      row.put("ord", i + 1);
      row.put("dedupe_key", entry.dedupeKey());
      row.set("payload", readJson(entry.payload()));
      row.put("priority", entry.priority() == null ? 0 : entry.priority());
      row.put(
          "max_attempts", entry.maxAttempts() == null ? defaultMaxAttempts : entry.maxAttempts());
      row.put("run_at", entry.runAt() == null ? null : entry.runAt().toString());
    }
    String batchJson = batch.toString();
    Map<String, Item> inserted =
        items.insertBatchIfAbsent(queue, batchJson, actor).stream()
            .collect(Collectors.toMap(item -> item.dedupeKey, Function.identity()));
    if (!inserted.isEmpty()) {
      enqueued.fire(new ItemsEnqueued(queue));
    }
    Map<Integer, ItemRepository.KeyMatch> matches = items.matchBatch(queue, batchJson);
    Map<Long, Item> existing =
        items
            .findAllById(
                matches.values().stream()
                    .map(ItemRepository.KeyMatch::id)
                    .collect(Collectors.toSet()))
            .stream()
            .collect(Collectors.toMap(item -> item.id, Function.identity()));

    List<BatchResult> results = new ArrayList<>();
    Set<String> created = new HashSet<>();
    for (int i = 0; i < entries.size(); i++) {
      NewItem entry = entries.get(i);
      Item fresh = inserted.get(entry.dedupeKey());
      ItemRepository.KeyMatch match = matches.get(i + 1);
      if (fresh != null && created.add(entry.dedupeKey())) {
        results.add(BatchResult.of(201, fresh)); // the first entry of a new key made the item
      } else if (match != null && match.samePayload()) {
        results.add(BatchResult.of(200, existing.get(match.id())));
      } else if (match != null) {
        results.add(
            BatchResult.refused(
                422,
                new DedupeConflictException(queue, entry.dedupeKey(), match.id()).getMessage()));
      } else {
        // The key's item vanished between the two statements (pruned): decide this one alone.
        var single = enqueuer.enqueue(withActor(entry, actor));
        results.add(BatchResult.of(single.created() ? 201 : 200, single.item()));
      }
    }
    return results;
  }

  /** Claims up to {@code max} due items of the queue, each with its own token. */
  public List<WorkService.Claim> claimNext(
      String queue, String worker, Integer leaseSeconds, int max) {
    List<String> tokens = new ArrayList<>(max);
    for (int i = 0; i < max; i++) {
      tokens.add(ClaimTokens.next());
    }
    List<Item> claimed =
        items.claimNextBatch(
            queue,
            tokens,
            worker,
            leaseSeconds == null ? defaultLeaseSeconds : leaseSeconds,
            writeJson(tokens));
    List<WorkService.Claim> claims = new ArrayList<>();
    for (Item item : claimed) {
      claims.add(new WorkService.Claim(item, item.claimToken));
    }
    // Hand them out in claim order: highest priority, then oldest runAt, then oldest.
    claims.sort(
        java.util.Comparator.comparingInt((WorkService.Claim c) -> -c.item().priority)
            .thenComparing(c -> c.item().runAt)
            .thenComparingLong(c -> c.item().id));
    return claims;
  }

  /** Completes each entry whose token is current; repeats of accepted completes answer 200. */
  public List<BatchResult> complete(List<CompleteEntry> entries, String actor) {
    ArrayNode batch = json.createArrayNode();
    for (CompleteEntry entry : entries) {
      batch
          .addObject()
          .put("id", entry.id())
          .put("claim_token", entry.claimToken())
          .put("external_ref", entry.externalRef());
    }
    Map<Long, Item> finished = byId(items.completeBatch(batch.toString(), actor));
    Map<Long, Item> current =
        currentItems(entries.stream().map(CompleteEntry::id).toList(), finished);
    List<BatchResult> results = new ArrayList<>();
    for (CompleteEntry entry : entries) {
      results.add(outcome(entry.id(), entry.claimToken(), finished, current, ItemState.DONE));
    }
    return results;
  }

  /** Records each entry's failure whose token is current, with its own backoff. */
  public List<BatchResult> fail(List<FailEntry> entries, String actor) {
    ArrayNode lookup = json.createArrayNode();
    for (FailEntry entry : entries) {
      lookup.addObject().put("id", entry.id()).put("claim_token", entry.claimToken());
    }
    Map<Long, Integer> attempts = items.attemptsOfClaims(lookup.toString());
    ArrayNode batch = json.createArrayNode();
    for (FailEntry entry : entries) {
      int attempt = attempts.getOrDefault(entry.id(), 1);
      long delay =
          entry.retryAfterSeconds() != null
              ? entry.retryAfterSeconds()
              : backoff.delaySeconds(attempt, ThreadLocalRandom.current());
      batch
          .addObject()
          .put("id", entry.id())
          .put("claim_token", entry.claimToken())
          .put("error", FailureReason.sanitize(entry.error()))
          .put("retryable", entry.retryable())
          .put("delay_seconds", delay);
    }
    Map<Long, Item> finished = byId(items.failBatch(batch.toString(), actor));
    Map<Long, Item> current = currentItems(entries.stream().map(FailEntry::id).toList(), finished);
    List<BatchResult> results = new ArrayList<>();
    for (FailEntry entry : entries) {
      results.add(
          outcome(
              entry.id(),
              entry.claimToken(),
              finished,
              current,
              ItemState.PENDING,
              ItemState.FAILED));
    }
    return results;
  }

  /** 200 when this entry's finish took effect now or before (a repeat); else 404 or 409. */
  private static BatchResult outcome(
      long id,
      String token,
      Map<Long, Item> finished,
      Map<Long, Item> current,
      ItemState... acceptedStates) {
    Item item = finished.get(id);
    if (item != null && token.equals(item.claimToken)) {
      return BatchResult.of(200, item);
    }
    // Another entry of this batch may have finished this item with its own token.
    item = item != null ? item : current.get(id);
    if (item == null) {
      return BatchResult.refused(404, new ItemNotFoundException(Long.toString(id)).getMessage());
    }
    if (item.alreadyFinishedBy(token, acceptedStates)) {
      return BatchResult.of(200, item);
    }
    return BatchResult.refused(409, new StaleClaimException(id, item.state).getMessage());
  }

  /** The items the batch statement did not change, as they are now. */
  private Map<Long, Item> currentItems(List<Long> ids, Map<Long, Item> finished) {
    Set<Long> unchanged = new HashSet<>(ids);
    unchanged.removeAll(finished.keySet());
    return byId(items.findAllById(unchanged));
  }

  private static Map<Long, Item> byId(List<Item> list) {
    Map<Long, Item> map = new HashMap<>();
    for (Item item : list) {
      map.put(item.id, item);
    }
    return map;
  }

  private static NewItem withActor(NewItem entry, String actor) {
    return new NewItem(
        entry.queue(),
        entry.dedupeKey(),
        entry.payload(),
        entry.priority(),
        entry.maxAttempts(),
        entry.runAt(),
        actor);
  }

  private com.fasterxml.jackson.databind.JsonNode readJson(String text) {
    try {
      return json.readTree(text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private String writeJson(Object value) {
    try {
      return json.writeValueAsString(value);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
