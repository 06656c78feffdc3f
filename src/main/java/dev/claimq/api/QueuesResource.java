package dev.claimq.api;

import dev.claimq.longpoll.ClaimOrWait;
import dev.claimq.queue.BatchService;
import dev.claimq.queue.EnqueueService;
import dev.claimq.queue.OperatorService;
import dev.claimq.queue.Outcome;
import dev.claimq.security.Role;
import dev.claimq.store.Item;
import dev.claimq.store.NewItem;
import dev.claimq.store.QueueStats;
import io.opentelemetry.api.trace.SpanContext;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.security.RolesAllowed;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.enums.ParameterIn;
import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.headers.Header;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;
import org.jboss.resteasy.reactive.RestResponse;

/** Queue-level operations: agents enqueue, workers claim the next item, operators see health. */
@Path("/v1/queues")
@Produces(MediaType.APPLICATION_JSON)
public class QueuesResource {
  static final String REPLAYED_HEADER = "Idempotent-Replayed";
  static final int DEFAULT_QUEUE_PAGE = 100;
  static final int MAX_QUEUE_PAGE = 500;

  private final Agents agents;
  private final EnqueueService enqueuer;
  private final ClaimOrWait claimOrWait;
  private final BatchService batches;
  private final OperatorService operators;
  private final QueueGuard guard;
  private final ItemTraces traces;
  private final SchemaGate schemaGate;

  QueuesResource(
      Agents agents,
      EnqueueService enqueuer,
      ClaimOrWait claimOrWait,
      BatchService batches,
      OperatorService operators,
      QueueGuard guard,
      ItemTraces traces,
      SchemaGate schemaGate) {
    this.agents = agents;
    this.enqueuer = enqueuer;
    this.claimOrWait = claimOrWait;
    this.batches = batches;
    this.operators = operators;
    this.guard = guard;
    this.traces = traces;
    this.schemaGate = schemaGate;
  }

  @RolesAllowed(Role.AGENT)
  @POST
  @Path("/{queue}/items")
  @Tag(name = "agents")
  @Operation(
      operationId = "enqueue",
      summary = "Enqueue an item, once per dedupe key",
      description =
          "Creates the item unless the queue already has one with this dedupe key. Enqueueing the"
              + " same work again (same key, equal payload, and the priority, maxAttempts and"
              + " runAt the item was enqueued with where the request gives them; one it leaves"
              + " out is not compared) answers the existing item; reusing a key for anything"
              + " else is refused with 422 naming the field. A W3C traceparent header (as"
              + " OpenTelemetry instrumentation sends it) is stored with a new item exactly as"
              + " sent and shown to its workers, so that its claims, finishes and send continue"
              + " the agent's trace; a replay keeps the first enqueue's. A traceparent that is"
              + " not one W3C traceparent in version 00's layout is refused with 400.")
  @RequestBody(
      content =
          @Content(
              schema = @Schema(implementation = Requests.Enqueue.class),
              examples = @ExampleObject(name = "welcome email", value = ApiExamples.ENQUEUE)))
  @APIResponse(
      responseCode = "201",
      description = "Created.",
      headers =
          @Header(
              name = "Location",
              description =
                  "The new item's path, /v1/items/{id}, from the host's root (a proxy that"
                      + " serves claimq under a path prefix rewrites it)",
              schema = @Schema(type = SchemaType.STRING)),
      content =
          @Content(
              schema = @Schema(implementation = ItemView.class),
              examples = @ExampleObject(name = "new item", value = ApiExamples.ITEM_PENDING)))
  @APIResponse(
      responseCode = "200",
      description = "The same work was enqueued before: the existing item, unchanged.",
      headers =
          @Header(
              name = REPLAYED_HEADER,
              description = "true",
              schema = @Schema(implementation = Boolean.class)),
      content =
          @Content(
              schema = @Schema(implementation = ItemView.class),
              examples = @ExampleObject(name = "existing item", value = ApiExamples.ITEM_PENDING)))
  @APIResponse(responseCode = "400", ref = "InvalidRequest")
  @APIResponse(responseCode = "413", ref = "TooLarge")
  @APIResponse(responseCode = "422", ref = "DedupeConflict")
  @Parameter(ref = "Traceparent", name = "traceparent", in = ParameterIn.HEADER)
  @Consumes(MediaType.APPLICATION_JSON)
  public Uni<RestResponse<ItemView>> enqueue(
      @Parameter(ref = "Queue") @PathParam("queue") String queue,
      @Valid @NotNull Requests.Enqueue body,
      @Context HttpHeaders headers) {
    NewItem item = agents.newItem(queue, body, ItemTraces.traceparent(headers));
    return WorkerThread.call(() -> enqueuer.enqueue(item))
        .map(answer -> enqueueAnswer(Agents.enqueued(answer)));
  }

  private static RestResponse<ItemView> enqueueAnswer(Agents.Enqueued enqueued) {
    ItemView item = enqueued.item();
    if (enqueued.created()) {
      // Relative, as documented: built from the Host header it would name whatever host a
      // client claimed to be calling.
      return RestResponse.ResponseBuilder.<ItemView>create(RestResponse.Status.CREATED)
          .header("Location", "/v1/items/" + item.id())
          .entity(item)
          .build();
    }
    return RestResponse.ResponseBuilder.ok(item).header(REPLAYED_HEADER, "true").build();
  }

  @RolesAllowed(Role.WORKER)
  @POST
  @Path("/{queue}/claim")
  @Tag(name = "workers")
  @Operation(
      operationId = "claimNext",
      summary = "Claim the queue's next due item",
      description =
          "Moves the next due pending item (highest priority, then oldest runAt, then oldest) to"
              + " sending in one statement and returns it with a claim token. Concurrent workers"
              + " never receive the same item. With waitSeconds, an empty queue is long-polled:"
              + " the answer comes as soon as an item is enqueued. The body is optional. To"
              + " claim many items at once, use claimNextBatch. Repeated because its answer was"
              + " lost, a claim claims another item (or answers 204): the item the lost answer"
              + " claimed stays sending until its lease ends and the reaper releases it, using"
              + " up an attempt, so keep leases short.")
  @RequestBody(
      required = false,
      content =
          @Content(
              // Only JSON is read; */* in @Consumes is there for the bare POST alone.
              mediaType = MediaType.APPLICATION_JSON,
              schema = @Schema(implementation = Requests.ClaimNext.class),
              examples = @ExampleObject(name = "long poll", value = ApiExamples.CLAIM_NEXT)))
  @APIResponse(responseCode = "200", ref = "Claimed")
  @APIResponse(
      responseCode = "204",
      description = "Nothing was due in this queue (within waitSeconds, when given).")
  @APIResponse(responseCode = "400", ref = "InvalidRequest")
  // The body is optional: a bare POST (as curl sends it, with no Content-Type) claims too.
  @Consumes({MediaType.APPLICATION_JSON, MediaType.WILDCARD})
  public Uni<Response> claimNext(
      @Parameter(ref = "Queue") @PathParam("queue") String queue, @Valid Requests.ClaimNext body) {
    Requests.ClaimNext claim = body == null ? new Requests.ClaimNext(null, null, null, null) : body;
    // max on this path is the older form of claimNextBatch, kept for the workers that use it.
    return claim(queue, claim.worker(), claim.leaseSeconds(), claim.waitSeconds(), claim.max());
  }

  @RolesAllowed(Role.WORKER)
  @POST
  @Path("/{queue}/claim:batch")
  @Tag(name = "workers")
  @Operation(
      operationId = "claimNextBatch",
      summary = "Claim up to max of the queue's next due items",
      description =
          "As claimNext, for many items in one statement: each is held by this worker with its"
              + " own claim token. With waitSeconds, an empty queue is long-polled.")
  @RequestBody(
      content =
          @Content(
              schema = @Schema(implementation = Requests.ClaimBatch.class),
              examples = @ExampleObject(name = "ten", value = ApiExamples.CLAIM_BATCH)))
  @APIResponse(
      responseCode = "200",
      description = "Claimed: 1 to max items, in claim order.",
      content = @Content(schema = @Schema(implementation = Views.ClaimedItems.class)))
  @APIResponse(
      responseCode = "204",
      description = "Nothing was due in this queue (within waitSeconds, when given).")
  @APIResponse(responseCode = "400", ref = "InvalidRequest")
  @Consumes(MediaType.APPLICATION_JSON)
  public Uni<Response> claimNextBatch(
      @Parameter(ref = "Queue") @PathParam("queue") String queue,
      @Valid @NotNull Requests.ClaimBatch body) {
    return claim(queue, body.worker(), body.leaseSeconds(), body.waitSeconds(), body.max());
  }

  /** One item, answered as itself, when max is null; else {items: [...]}. */
  private Uni<Response> claim(
      String queue, String worker, Integer leaseSeconds, Integer waitSeconds, Integer max) {
    Duration wait = Duration.ofSeconds(waitSeconds == null ? 0 : waitSeconds);
    SpanContext request = ItemTraces.request();
    return claimOrWait
        .claimNext(guard.actor(), guard.queue(Params.queue(queue)), worker, leaseSeconds, max, wait)
        .onFailure(ClaimOrWait.TooManyWaiting.class)
        .transform(
            tooMany ->
                new Outcomes.RefusedException(
                    new Outcomes.Status(503, "too-many-waiting", "Too many claims waiting"),
                    tooMany.getMessage()))
        .map(
            claims -> {
              if (claims.isEmpty()) {
                // A wait the gate ended (a newer schema) is no "nothing due": 503 schema-newer.
                schemaGate.requireCurrent();
              }
              if (claims.isEmpty() && !wait.isZero() && claimOrWait.stopping()) {
                // Not "nothing within waitSeconds", which a worker takes as its cue to claim
                // again at once: told to back off, it claims again elsewhere, or here once back.
                throw new Outcomes.RefusedException(
                    new Outcomes.Status(503, "stopping", "Stopping"),
                    "This claimq instance is stopping, and ended the wait for work: claim again"
                        + " after a backoff (from another instance, or from this one once it is"
                        + " back). Nothing was claimed.");
              }
              if (claims.isEmpty()) {
                return Response.noContent().build();
              }
              // From the claims' answer on: a long poll's wait before it is no part of a claim.
              Instant claimed = Instant.now();
              for (Item item : claims) {
                traces.record("claimq.claim", item, Outcome.CHANGED, request, claimed);
              }
              if (max == null) {
                return Response.ok(ClaimedItemView.of(claims.get(0))).build();
              }
              return Response.ok(
                      new Views.ClaimedItems(claims.stream().map(ClaimedItemView::of).toList()))
                  .build();
            });
  }

  @POST
  @Path("/{queue}/items:batch")
  @Consumes(MediaType.APPLICATION_JSON)
  @RolesAllowed(Role.AGENT)
  @Tag(name = "agents")
  @Operation(
      operationId = "enqueueBatch",
      summary = "Enqueue up to 500 items at once",
      description =
          "Each entry is decided exactly as a single enqueue: 201 new, 200 the same work again,"
              + " 422 a reused key with another payload or other terms. The whole batch is one"
              + " statement; an invalid entry refuses the whole batch with 400. A traceparent"
              + " header is stored with each new item, as for a single enqueue.")
  @APIResponse(responseCode = "200", ref = "BatchResults")
  @APIResponse(responseCode = "400", ref = "InvalidRequest")
  @APIResponse(responseCode = "413", ref = "TooLarge")
  @Parameter(ref = "Traceparent", name = "traceparent", in = ParameterIn.HEADER)
  @RequestBody(
      content =
          @Content(
              schema = @Schema(implementation = Requests.EnqueueBatch.class),
              examples =
                  @ExampleObject(name = "two welcome emails", value = ApiExamples.ENQUEUE_BATCH)))
  public Uni<Views.BatchResults> enqueueBatch(
      @Parameter(ref = "Queue") @PathParam("queue") String queue,
      @Valid @NotNull Requests.EnqueueBatch body,
      @Context HttpHeaders headers) {
    String name = guard.queue(Params.queue(queue));
    // One request, one trace: each entry is part of it.
    String traceparent = ItemTraces.traceparent(headers);
    List<NewItem> entries = new ArrayList<>();
    for (int i = 0; i < body.items().size(); i++) {
      Requests.Enqueue entry = body.items().get(i);
      entries.add(
          new NewItem(
              name,
              entry.dedupeKey(),
              agents.payloadWithinLimit("items[" + i + "]", entry.payload()),
              entry.priority(),
              entry.maxAttempts(),
              Params.timestamp("items[" + i + "].runAt", entry.runAt()),
              guard.actor(),
              traceparent));
    }
    String actor = guard.actor();
    return WorkerThread.call(() -> batches.enqueue(name, entries, actor))
        .map(Views.BatchResults::of);
  }

  @RolesAllowed({Role.AGENT, Role.WORKER, Role.OPERATOR})
  @GET
  @Tag(name = "operators")
  @Operation(
      operationId = "listQueues",
      summary = "Queues and their health",
      description =
          "Every queue with live items, a policy or work in the last minute, by name, a page at a"
              + " time (follow nextCursor), with totals over all of them: live counts by state,"
              + " how long the oldest due pending item has waited (a growing age means workers"
              + " are not keeping up), and the last minute's completes and fails. Done and"
              + " cancelled items are not counted; the cost follows the live items, not the"
              + " table."
              + " Any role may read it; a key limited to some queues, only theirs.")
  @APIResponse(
      responseCode = "200",
      description = "A page of queues, by name, and the totals of every queue in the listing.",
      content =
          @Content(
              schema = @Schema(implementation = Views.QueueList.class),
              examples = @ExampleObject(name = "queues", value = ApiExamples.QUEUES)))
  @APIResponse(responseCode = "400", ref = "InvalidRequest")
  public Views.QueueList queues(
      @Parameter(
              description = "Queues per page, 1 to " + MAX_QUEUE_PAGE + ".",
              schema =
                  @Schema(
                      type = SchemaType.INTEGER,
                      minimum = "1",
                      maximum = "" + MAX_QUEUE_PAGE,
                      defaultValue = "" + DEFAULT_QUEUE_PAGE))
          @QueryParam("limit")
          String limit,
      @Parameter(
              description =
                  "nextCursor of the previous page, asked for by a key that sees the same queues:"
                      + " one of a listing of other queues is refused (400).")
          @QueryParam("cursor")
          String cursor) {
    int pageSize = Params.limit(limit, DEFAULT_QUEUE_PAGE, MAX_QUEUE_PAGE);
    // The listing is of the queues the key sees: a cursor of another such listing says nothing.
    String listing = "queues " + new TreeSet<>(guard.visible(null));
    String after = Params.afterName(cursor, listing);
    Map<String, long[]> lastMinute = operators.throughput();
    TreeMap<String, QueueStats> byName = new TreeMap<>();
    operators.queues().forEach(stats -> byName.put(stats.queue(), stats));
    // A queue drained within the last minute has no live items but has throughput to show.
    lastMinute
        .keySet()
        .forEach(
            queue ->
                byName.putIfAbsent(queue, new QueueStats(queue, 0, 0, 0, 0, 0, null, null, false)));
    byName.keySet().removeIf(queue -> !guard.mayUse(queue));
    // Paged in memory: one statement reads every live queue's counts (its cost follows the live
    // items, whatever the page), and the totals need them all; a page bounds the answer.
    List<Views.QueueView> page = new ArrayList<>();
    Iterator<QueueStats> rest =
        (after == null ? byName : byName.tailMap(after, false)).values().iterator();
    while (rest.hasNext() && page.size() < pageSize) {
      QueueStats stats = rest.next();
      page.add(Views.QueueView.of(stats, lastMinute.get(stats.queue())));
    }
    String nextCursor =
        rest.hasNext() ? Params.cursorAfter(page.get(page.size() - 1).queue(), listing) : null;
    return new Views.QueueList(page, nextCursor, Views.QueueTotals.of(byName.values()));
  }
}
