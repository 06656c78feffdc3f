package dev.claimq.queue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.claimq.policy.FailureReason;
import dev.claimq.store.FinishStatements.Failure;
import dev.claimq.store.Item;
import dev.claimq.store.ItemRepository;
import dev.claimq.store.ItemRepository.Changed;
import dev.claimq.store.NewItem;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Event;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Many items per call, for throughput: each batch is decided by one statement with the same
 * conditions as the single calls, and answers per entry what the single call would have answered. A
 * finish's entry that its statement could only answer from a snapshot older than the change it
 * waited for ({@link Changed#outdated}) is decided by the single call.
 */
@ApplicationScoped
public class BatchService {
  /** An entry of a batch complete. */
  public record CompleteEntry(long id, String claimToken, String externalRef) {}

  /** An entry of a batch fail. */
  public record FailEntry(
      long id,
      String claimToken,
      String error,
      boolean retryable,
      boolean sentUnknown,
      Long retryAfterSeconds) {}

  private final ItemRepository items;
  private final EnqueueService enqueuer;
  private final WorkService work;
  private final Event<ItemsEnqueued> enqueued;
  private final ObjectMapper json;

  BatchService(
      ItemRepository items,
      EnqueueService enqueuer,
      WorkService work,
      Event<ItemsEnqueued> enqueued,
      ObjectMapper json) {
    this.items = items;
    this.enqueuer = enqueuer;
    this.work = work;
    this.enqueued = enqueued;
    this.json = json;
  }

  /** Enqueues every entry once per dedupe key: CREATED, REPLAYED or KEY_REUSED each. */
  public List<Answer> enqueue(String queue, List<NewItem> entries, String actor) {
    ArrayNode batch = json.createArrayNode();
    for (int i = 0; i < entries.size(); i++) {
      NewItem entry = entries.get(i);
      ObjectNode row = batch.addObject();
      row.put("ord", i + 1);
      row.put("dedupe_key", entry.dedupeKey());
      row.set("payload", readJson(entry.payload()));
      row.put("priority", entry.priority()); // null: 0, and a replay not compared on it
      row.put("max_attempts", entry.maxAttempts()); // null: the queue's policy or the default
      row.put("run_at", entry.runAt() == null ? null : entry.runAt().toString());
      row.put("traceparent", entry.traceparent());
    }
    Map<Integer, ItemRepository.KeyHolder> holders =
        items.enqueueBatch(queue, batch.toString(), entries.size(), actor);
    List<Answer> answers = new ArrayList<>();
    for (int i = 0; i < entries.size(); i++) {
      ItemRepository.KeyHolder holder = holders.get(i + 1);
      // No holder the statement could see (it committed meanwhile, or was pruned): decide this
      // entry alone.
      answers.add(
          holder != null
              ? EnqueueService.answer(holder)
              : enqueuer.enqueue(withActor(entries.get(i), actor)));
    }
    if (answers.stream().anyMatch(answer -> answer.outcome() == Outcome.CREATED)) {
      enqueued.fire(new ItemsEnqueued(queue));
    }
    return answers;
  }

  /** Claims up to {@code max} due items of the queue, each with its own token, in claim order. */
  public List<Item> claimNext(String queue, String worker, Integer leaseSeconds, int max) {
    List<String> tokens = new ArrayList<>(max);
    for (int i = 0; i < max; i++) {
      tokens.add(ClaimTokens.next());
    }
    List<Item> claimed =
        new ArrayList<>(items.claimNextBatch(queue, max, writeJson(tokens), worker, leaseSeconds));
    // Hand them out in claim order: highest priority, then oldest runAt, then oldest.
    claimed.sort(
        Comparator.comparingInt((Item item) -> -item.priority)
            .thenComparing(item -> item.runAt)
            .thenComparingLong(item -> item.id));
    claimed.forEach(work::claimed);
    return claimed;
  }

  /** Completes each entry whose token is current; each answers as a single complete would. */
  public List<Answer> complete(List<CompleteEntry> entries, String actor) {
    ArrayNode batch = json.createArrayNode();
    for (CompleteEntry entry : entries) {
      batch
          .addObject()
          .put("id", entry.id())
          .put("claim_token", entry.claimToken())
          .put("external_ref", entry.externalRef());
    }
    Map<Long, Changed> rows = byId(items.completeBatch(batch.toString(), entries.size(), actor));
    Set<Long> changed = new HashSet<>();
    List<Answer> answers = new ArrayList<>();
    for (CompleteEntry entry : entries) {
      Changed row = rows.get(entry.id());
      if (row != null && row.outdated(entry.claimToken())) {
        // The statement's snapshot is from before a change it waited for: the single complete,
        // with a snapshot of its own, says what this entry is (a repeat, or a late success).
        answers.add(work.complete(entry.id(), entry.claimToken(), entry.externalRef(), actor));
        continue;
      }
      Answer answer =
          once(
              answer(
                  row,
                  entry.claimToken(),
                  WorkService.Repeat.COMPLETE,
                  WorkService.sameComplete(entry.externalRef())),
              changed);
      // A stale entry with the provider's reference may be a late success: the single complete
      // decides that (rare, so one statement of its own each is no cost to the batch).
      if (answer.outcome() == Outcome.STALE_CLAIM && entry.externalRef() != null) {
        answer = work.complete(entry.id(), entry.claimToken(), entry.externalRef(), actor);
      } else {
        work.counted(answer, entry.externalRef());
      }
      answers.add(answer);
    }
    return answers;
  }

  /** Records each entry's failure whose token is current, with its own backoff. */
  public List<Answer> fail(List<FailEntry> entries, String actor) {
    // One read of the backoff of every entry's queue that has no Retry-After to go by.
    Map<Long, ItemRepository.QueueBackoff> backoffs =
        items.backoffOf(
            entries.stream()
                .filter(entry -> entry.retryAfterSeconds() == null)
                .map(FailEntry::id)
                .collect(java.util.stream.Collectors.toSet()));
    ArrayNode batch = json.createArrayNode();
    List<Failure> failures = new ArrayList<>(entries.size());
    for (FailEntry entry : entries) {
      Failure failure =
          new Failure(
              FailureReason.sanitize(entry.error()),
              entry.retryable(),
              entry.sentUnknown(),
              work.delays(entry.retryAfterSeconds(), backoffs.get(entry.id())));
      failures.add(failure);
      ObjectNode row =
          batch
              .addObject()
              .put("id", entry.id())
              .put("claim_token", entry.claimToken())
              .put("error", failure.error())
              .put("retryable", failure.retryable())
              .put("sent_unknown", failure.sentUnknown());
      ArrayNode delays = row.putArray("delays");
      for (long delay : failure.delays()) {
        delays.add(delay);
      }
    }
    Map<Long, Changed> rows = byId(items.failBatch(batch.toString(), entries.size(), actor));
    Set<Long> changed = new HashSet<>();
    List<Answer> answers = new ArrayList<>();
    for (int i = 0; i < entries.size(); i++) {
      FailEntry entry = entries.get(i);
      Failure failure = failures.get(i);
      java.util.function.Predicate<Changed> sameFail =
          WorkService.sameFail(
              entry.claimToken(),
              failure.error(),
              entry.retryable(),
              entry.sentUnknown(),
              entry.retryAfterSeconds());
      Changed row = rows.get(entry.id());
      Answer answer;
      if (row != null && row.changed() && entry.claimToken().equals(row.item().claimToken)) {
        answer = once(answer(row, entry.claimToken(), WorkService.Repeat.FAIL, sameFail), changed);
      } else {
        // Not changed by this entry's claim: the single fail, with this entry's schedule, says
        // what it is. Its statement finds the attempt of the entry's token (a repeat, even after
        // the item was claimed again, or a stale claim); it also has a snapshot of its own, for
        // a row outdated by a change this statement waited for.
        answer =
            answer(
                items.fail(entry.id(), entry.claimToken(), failure, actor).orElse(null),
                entry.claimToken(),
                WorkService.Repeat.FAIL,
                sameFail);
      }
      answers.add(work.counted(answer, null));
    }
    return answers;
  }

  /**
   * The entry that changed an item answers CHANGED, and is counted; a later entry of the batch with
   * the same claim and report finds the row changed too, and answers as its repeat, counted no more
   * than a repeated request would be.
   */
  private static Answer once(Answer answer, Set<Long> changed) {
    return answer.outcome() == Outcome.CHANGED && !changed.add(answer.item().id)
        ? new Answer(Outcome.REPLAYED, answer.item())
        : answer;
  }

  /** An entry's answer from its item's row: the row answers every entry that names the item. */
  private static Answer answer(
      Changed row,
      String token,
      WorkService.Repeat repeat,
      java.util.function.Predicate<Changed> sameReport) {
    return row == null ? Answer.notFound() : WorkService.finish(row, token, repeat, sameReport);
  }

  private static Map<Long, Changed> byId(List<Changed> rows) {
    Map<Long, Changed> map = new HashMap<>();
    for (Changed row : rows) {
      map.put(row.item().id, row);
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
        actor,
        entry.traceparent());
  }

  private JsonNode readJson(String text) {
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
