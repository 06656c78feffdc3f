package dev.claimq.api;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectWriter;
import dev.claimq.config.ClaimqConfig;
import dev.claimq.queue.Answer;
import dev.claimq.queue.EnqueueService;
import dev.claimq.queue.ItemLookup;
import dev.claimq.queue.Outcome;
import dev.claimq.security.Caller;
import dev.claimq.security.Role;
import dev.claimq.store.ItemState;
import dev.claimq.store.NewItem;
import dev.claimq.telemetry.LogText;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * What an agent may ask, without HTTP around it: the REST enqueue and the MCP tools answer from
 * here, with the same checks of the key, the queue and every value, and the same refusals (thrown,
 * and worded by {@link ProblemMappers#problemOf}).
 *
 * <p>One for the application: the caller is the current request's (its proxy), and the settings are
 * read once, not on every enqueue.
 */
@ApplicationScoped
public class Agents {
  /** An agent's own work, a page at a time. */
  public static final int DEFAULT_PAGE = 20;

  public static final int MAX_PAGE = 100;

  /** The states an agent may filter its work by: every state of an item. */
  public static final List<String> STATES =
      Arrays.stream(ItemState.values()).map(ItemState::wireName).toList();

  private final EnqueueService enqueuer;
  private final ItemLookup lookup;
  private final QueueGuard guard;
  private final Caller caller;
  private final int maxPayloadBytes;
  // A payload as jsonb will hold it: numbers written out in full (1e300 is 301 digits there).
  private final ObjectWriter storedForm;

  Agents(
      EnqueueService enqueuer,
      ItemLookup lookup,
      QueueGuard guard,
      Caller caller,
      ClaimqConfig config,
      ObjectMapper json) {
    this.enqueuer = enqueuer;
    this.lookup = lookup;
    this.guard = guard;
    this.caller = caller;
    this.maxPayloadBytes = config.limits().payloadBytes();
    this.storedForm = json.writer().with(JsonGenerator.Feature.WRITE_BIGDECIMAL_AS_PLAIN);
  }

  /** What an enqueue did: made the item, or found the same work already there. */
  public record Enqueued(boolean created, ItemView item) {}

  /**
   * Refuses (403) a key without the agent role, in the words the API uses for it. REST checks this
   * with @RolesAllowed before a resource runs; other transports call this first.
   */
  public void requireAgent() {
    if (!caller.roles().contains(Role.AGENT)) {
      throw new Outcomes.RefusedException(
          new Outcomes.Status(403, "forbidden", "Forbidden"),
          "This API key does not have the role this endpoint needs (" + Role.AGENT + ").");
    }
  }

  /**
   * The traceparent an agent's request carries (its header's values), to store with what it
   * enqueues; null when none. One that is not a W3C traceparent is refused, as on the API.
   */
  public static String traceparent(List<String> values) {
    return ItemTraces.traceparent(values);
  }

  /** Enqueues the body in the queue, once per dedupe key, as the key's name. */
  public Enqueued enqueue(String queue, Requests.Enqueue body, String traceparent) {
    return enqueued(enqueuer.enqueue(newItem(queue, body, traceparent)));
  }

  /** The item an enqueue of the body asks for, checked; the statement is {@link #enqueued}'s. */
  public NewItem newItem(String queue, Requests.Enqueue body, String traceparent) {
    return new NewItem(
        guard.queue(Params.queue(queue)),
        body.dedupeKey(),
        payloadWithinLimit(null, body.payload()),
        body.priority(),
        body.maxAttempts(),
        Params.timestamp("runAt", body.runAt()),
        guard.actor(),
        traceparent);
  }

  /** What the enqueue's answer says, as the API words it. */
  public static Enqueued enqueued(Answer answer) {
    return new Enqueued(answer.outcome() == Outcome.CREATED, ItemView.of(Outcomes.itemOf(answer)));
  }

  /**
   * The item named by its id, or by its queue and dedupe key (one or the other), if the key may see
   * its queue.
   */
  public ItemView find(String id, String queue, String dedupeKey) {
    if (id != null && queue == null && dedupeKey == null) {
      long itemId = guard.item(Params.itemId(id));
      return ItemView.of(
          lookup
              .get(itemId)
              .orElseThrow(
                  () ->
                      new Outcomes.RefusedException(
                          Outcome.NOT_FOUND, Long.toString(itemId), null)));
    }
    if (id == null && queue != null && dedupeKey != null) {
      String name = guard.queue(Params.queue(queue));
      return ItemView.of(
          lookup
              .byDedupeKey(name, dedupeKey)
              .orElseThrow(
                  () ->
                      new Outcomes.RefusedException(
                          Outcomes.of(Outcome.NOT_FOUND),
                          "Queue '"
                              + name
                              + "' has no item with dedupe key '"
                              + LogText.shortened(dedupeKey)
                              + "'.")));
    }
    throw new BadRequestException(
        id == null ? "queue" : "id",
        "Name the item either by id, or by queue and dedupeKey together.");
  }

  /** A page of what this key enqueued, newest first; follow nextCursor for older items. */
  public Views.ItemPage enqueuedByMe(String state, Integer limit, String cursor) {
    ItemState filter = Params.state(state);
    String listing =
        "enqueued by "
            + guard.actor()
            + " "
            + filter
            + " "
            + new java.util.TreeSet<>(caller.queues());
    var page =
        lookup.enqueuedBy(
            guard.actor(),
            filter == null ? null : filter.wireName(),
            caller.queues(),
            Params.beforeId(cursor, listing),
            Params.limit(limit == null ? null : limit.toString(), DEFAULT_PAGE, MAX_PAGE));
    return new Views.ItemPage(
        page.items().stream().map(ItemView::of).toList(),
        page.nextBeforeId() == null ? null : Params.cursor(page.nextBeforeId(), listing));
  }

  /**
   * The payload's text, refused over the limit as it will be stored, so that a short exponent
   * cannot store far more than the limit allows. The entry is the batch's, e.g. items[1], named in
   * the refusal; null for a single enqueue.
   */
  String payloadWithinLimit(String entry, JsonNode value) {
    String payload;
    try {
      payload = storedForm.writeValueAsString(value);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e); // a tree Jackson has just read always writes
    }
    int bytes = payload.getBytes(StandardCharsets.UTF_8).length;
    if (bytes > maxPayloadBytes) {
      throw new TooLargeException(
          (entry == null ? "The payload is " : "The payload of " + entry + " is ")
              + bytes
              + " bytes of JSON; the limit is "
              + maxPayloadBytes
              + " (claimq.limits.payload-bytes). Store large content elsewhere and enqueue a"
              + " reference to it.");
    }
    return payload;
  }
}
