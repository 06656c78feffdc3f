package dev.claimq.api;

import dev.claimq.longpoll.ClaimOrWait;
import dev.claimq.queue.Answer;
import dev.claimq.queue.ItemLookup;
import dev.claimq.queue.OperatorService;
import dev.claimq.queue.Outcome;
import dev.claimq.queue.WorkService;
import dev.claimq.queue.WorkService.Finished;
import dev.claimq.security.Role;
import dev.claimq.store.Item;
import dev.claimq.store.ItemFilter;
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
import jakarta.ws.rs.core.UriInfo;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
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

/** One item: workers claim and finish it, operators inspect, retry or cancel it. */
@Path("/v1/items")
@Produces(MediaType.APPLICATION_JSON)
public class ItemsResource {
  static final String HORIZON_HEADER = "Idempotency-Horizon-Passed";

  /** How an operator's change of one item is made conditional; said on each that can be. */
  private static final String IF_MATCH_HOW =
      "Send If-Match with the ETag of the read it was decided on, and it is made only if the item"
          + " has not changed since (412).";

  private static final int DEFAULT_PAGE = 50;
  private static final int MAX_PAGE = 500;

  private final WorkService work;
  private final OperatorService operators;
  private final ItemLookup lookup;
  private final QueueGuard guard;
  private final ItemTraces traces;
  private final ClaimOrWait claimOrWait;

  ItemsResource(
      WorkService work,
      OperatorService operators,
      ItemLookup lookup,
      QueueGuard guard,
      ItemTraces traces,
      ClaimOrWait claimOrWait) {
    this.claimOrWait = claimOrWait;
    this.work = work;
    this.operators = operators;
    this.lookup = lookup;
    this.guard = guard;
    this.traces = traces;
  }

  @RolesAllowed({Role.AGENT, Role.WORKER, Role.OPERATOR})
  @GET
  @Tag(name = "operators")
  @Operation(
      operationId = "listItems",
      summary = "Browse items, newest first",
      description =
          "Filter by queue, state, reason (text in the last error, any case) and when the item"
              + " last changed; follow nextCursor for older items."
              + " Any role may read it; a key limited to some queues, only theirs.")
  @APIResponse(
      responseCode = "200",
      description = "A page of items.",
      content = @Content(schema = @Schema(implementation = Views.ItemPage.class)))
  @APIResponse(responseCode = "400", ref = "InvalidRequest")
  public Views.ItemPage list(
      @Parameter(
              description = "Only this queue.",
              schema =
                  @Schema(type = SchemaType.STRING, pattern = Params.QUEUE_NAME, maxLength = 64))
          @QueryParam("queue")
          String queue,
      @Parameter(
              description = "Only items in this state.",
              schema =
                  @Schema(
                      type = SchemaType.STRING,
                      enumeration = {"held", "pending", "sending", "done", "failed", "cancelled"}))
          @QueryParam("state")
          String state,
      @Parameter(
              description = "Items per page, 1 to 500.",
              schema =
                  @Schema(
                      type = SchemaType.INTEGER,
                      minimum = "1",
                      maximum = "500",
                      defaultValue = "50"))
          @QueryParam("limit")
          String limit,
      @Parameter(
              description =
                  "nextCursor of the previous page, sent with the same filters: with others it"
                      + " is refused (400).")
          @QueryParam("cursor")
          String cursor,
      @Parameter(
              description = "Only items whose last error contains this text, in any case.",
              schema = @Schema(type = SchemaType.STRING, minLength = 1, maxLength = 500))
          @QueryParam("reason")
          String reason,
      @Parameter(
              description = "Only items last changed at or after this RFC 3339 time.",
              schema = @Schema(type = SchemaType.STRING, format = "date-time"))
          @QueryParam("updatedAfter")
          String updatedAfter,
      @Parameter(
              description = "Only items last changed before this RFC 3339 time.",
              schema = @Schema(type = SchemaType.STRING, format = "date-time"))
          @QueryParam("updatedBefore")
          String updatedBefore,
      @Context UriInfo uri) {
    ItemFilter filter =
        new ItemFilter(
            guard.visible(queue == null ? null : Params.queue(queue)),
            Params.state(state),
            Params.encodedText("reason", Params.rawQuery(uri, "reason")),
            Params.timestamp("updatedAfter", updatedAfter),
            Params.timestamp("updatedBefore", updatedBefore));
    String listing = "items " + filter.canonical();
    var page =
        operators.list(
            filter, Params.beforeId(cursor, listing), Params.limit(limit, DEFAULT_PAGE, MAX_PAGE));
    return new Views.ItemPage(
        page.items().stream().map(ItemView::of).toList(),
        page.nextBeforeId() == null ? null : Params.cursor(page.nextBeforeId(), listing));
  }

  @RolesAllowed({Role.AGENT, Role.WORKER, Role.OPERATOR})
  @GET
  @Path("/{id}")
  // One tag of its own: a generated client gets one getItem, not one per role (which some
  // generators cannot export side by side).
  @Tag(name = "items")
  @Operation(
      operationId = "getItem",
      summary = "Get one item",
      description =
          "Any role may read an item; a key limited to some queues only theirs. Its ETag is the"
              + " item's version, which the If-Match of an operator's retry, cancel, resolve,"
              + " approve or reject names.")
  @Parameter(ref = "IfMatch")
  @Parameter(ref = "IfNoneMatch", name = "If-None-Match", in = ParameterIn.HEADER)
  @APIResponse(
      responseCode = "200",
      description = "The item.",
      headers = @Header(name = "ETag", ref = "ItemETag"),
      content =
          @Content(
              schema = @Schema(implementation = ItemView.class),
              examples = @ExampleObject(name = "item", value = ApiExamples.ITEM_DONE)))
  @APIResponse(responseCode = "304", ref = "NotModified")
  @APIResponse(responseCode = "404", ref = "ItemNotFound")
  @APIResponse(responseCode = "400", ref = "InvalidRequest")
  @APIResponse(responseCode = "412", ref = "ItemChanged")
  public RestResponse<ItemView> get(@PathParam("id") String id, @Context HttpHeaders headers) {
    long[] versions = EntityTags.versions(headers.getRequestHeader(EntityTags.IF_MATCH));
    long itemId = guard.item(Params.itemId(id));
    Item item = lookup.get(itemId).orElseThrow(() -> notFound(itemId));
    // A read changes nothing, so comparing after it decides nothing but the answer.
    if (!OperatorService.matches(versions, item)) {
      throw new Outcomes.RefusedException(Outcome.STALE_ITEM, id, item);
    }
    return tagged(item);
  }

  /** An item with its version as the ETag, which an operator's If-Match names. */
  private static RestResponse<ItemView> tagged(Item item) {
    return RestResponse.ResponseBuilder.ok(ItemView.of(item))
        .header(HttpHeaders.ETAG, EntityTags.of(item.version))
        .build();
  }

  /** An operator's change of one item: the item with its new ETag, or the refusal. */
  private static RestResponse<ItemView> tagged(Answer answer, long id) {
    return tagged(Outcomes.itemOf(answer, id));
  }

  @RolesAllowed({Role.AGENT, Role.WORKER, Role.OPERATOR})
  @GET
  @Path("/{id}/attempts")
  @Tag(name = "operators")
  @Operation(
      operationId = "listAttempts",
      summary = "An item's history: one entry per claim",
      description =
          "Who claimed it, when, and how each claim ended, oldest first."
              + " Any role may read it; a key limited to some queues, only theirs.")
  @APIResponse(
      responseCode = "200",
      description = "The attempts, oldest first.",
      content =
          @Content(
              schema = @Schema(implementation = Views.AttemptList.class),
              examples = @ExampleObject(name = "a retry, then done", value = ApiExamples.ATTEMPTS)))
  @APIResponse(responseCode = "404", ref = "ItemNotFound")
  @APIResponse(responseCode = "400", ref = "InvalidRequest")
  public Views.AttemptList attempts(@PathParam("id") String id) {
    long itemId = guard.item(Params.itemId(id));
    return new Views.AttemptList(
        operators.attempts(itemId).orElseThrow(() -> notFound(itemId)).stream()
            .map(Views.AttemptView::of)
            .toList());
  }

  @RolesAllowed(Role.WORKER)
  @POST
  @Path("/{id}/claim")
  @Tag(name = "workers")
  @Operation(
      operationId = "claimItem",
      summary = "Claim this item",
      description =
          "Moves the item from pending to sending if it is pending and due, in one conditional"
              + " statement. Of any number of concurrent claims, exactly one gets 200; the others"
              + " get 204, which is not an error: another worker has it, so move on. A repeat of a"
              + " claim whose answer was lost is a 204 too: the lost claim holds the item until"
              + " its lease ends and the reaper releases it.")
  @RequestBody(
      required = false,
      content =
          @Content(
              // Only JSON is read; */* in @Consumes is there for the bare POST alone.
              mediaType = MediaType.APPLICATION_JSON,
              schema = @Schema(implementation = Requests.Claim.class),
              examples = @ExampleObject(name = "claim", value = ApiExamples.CLAIM)))
  @APIResponse(responseCode = "200", ref = "Claimed")
  @APIResponse(
      responseCode = "204",
      description =
          "Not claimed, and nothing to worry about: another worker holds it, it is finished, or"
              + " it is not due yet.")
  @APIResponse(responseCode = "400", ref = "InvalidRequest")
  @APIResponse(responseCode = "404", ref = "ItemNotFound")
  // The body is optional: a bare POST (as curl sends it, with no Content-Type) claims too.
  @Consumes({MediaType.APPLICATION_JSON, MediaType.WILDCARD})
  public Uni<RestResponse<ClaimedItemView>> claim(
      @PathParam("id") String id, @Valid Requests.Claim body) {
    long itemId = Params.itemId(id);
    Requests.Claim claim = body == null ? new Requests.Claim(null, null) : body;
    Instant start = Instant.now();
    SpanContext request = ItemTraces.request();
    return WorkerThread.call(
            () -> work.claim(guard.item(itemId), claim.worker(), claim.leaseSeconds()))
        .map(
            answer -> {
              if (answer.outcome() == Outcome.NOT_CLAIMED) {
                // A lost race is no event, in the trace either.
                return RestResponse.<ClaimedItemView>noContent();
              }
              if (answer.outcome() == Outcome.CHANGED) {
                traces.record("claimq.claim", answer.item(), answer.outcome(), request, start);
              }
              return RestResponse.ok(ClaimedItemView.of(Outcomes.itemOf(answer, itemId)));
            });
  }

  @RolesAllowed(Role.WORKER)
  @POST
  @Path("/{id}/complete")
  @Tag(name = "workers")
  @Operation(
      operationId = "complete",
      summary = "Complete a claimed item",
      description =
          "Marks the item done and records the provider's reference. Only the current claim can"
              + " complete it; repeating an accepted complete answers the same item again. With"
              + " next, the answer also carries the queue's next claim (one call per item); a"
              + " repeat answers next: null and claims nothing.")
  @RequestBody(
      content =
          @Content(
              schema = @Schema(implementation = Requests.Complete.class),
              examples = {
                @ExampleObject(name = "complete", value = ApiExamples.COMPLETE),
                @ExampleObject(
                    name = "complete and claim the next item",
                    value = ApiExamples.COMPLETE_WITH_NEXT)
              }))
  @APIResponse(
      responseCode = "200",
      description = "Done; with next when the request asked for it.",
      content =
          @Content(
              schema = @Schema(implementation = FinishedItemView.class),
              examples = {
                @ExampleObject(name = "done", value = ApiExamples.ITEM_DONE),
                @ExampleObject(
                    name = "done, and nothing to claim next",
                    value = ApiExamples.ITEM_DONE_NOTHING_NEXT)
              }))
  @APIResponse(responseCode = "400", ref = "InvalidRequest")
  @APIResponse(responseCode = "404", ref = "ItemNotFound")
  @APIResponse(responseCode = "409", ref = "FinishRefused")
  @Consumes(MediaType.APPLICATION_JSON)
  public Uni<Response> complete(
      @PathParam("id") String id, @Valid @NotNull Requests.Complete body) {
    long itemId = Params.itemId(id);
    Instant start = Instant.now();
    Requests.Next next = body.next();
    String actor = guard.actor();
    SpanContext request = ItemTraces.request();
    // The finish runs on a worker thread; a long poll for next then parks without one.
    return WorkerThread.call(
            () ->
                work.complete(
                    guard.item(itemId),
                    body.claimToken(),
                    body.externalRef(),
                    actor,
                    nextClaim(next)))
        .flatMap(
            finished -> {
              Answer answer = finished.answer();
              traces.record("claimq.complete", answer.item(), answer.outcome(), request, start);
              return finished(finished, itemId, next, actor, request);
            });
  }

  @RolesAllowed(Role.WORKER)
  @POST
  @Path("/{id}/fail")
  @Tag(name = "workers")
  @Operation(
      operationId = "fail",
      summary = "Report a failed attempt",
      description =
          "Retryable failures go back to pending after an exponential backoff with jitter (or"
              + " the provider's retryAfterSeconds) while attempts remain; otherwise the item"
              + " stays failed for an operator. The reason is stored with secrets redacted."
              + " With next, the answer also carries the queue's next claim, as for complete;"
              + " with a retry due at once, that may be this very item, claimed again under a"
              + " new token. Repeating an accepted fail answers the item again (as it is now,"
              + " also once it has been claimed again since), with next: null.")
  @RequestBody(
      content =
          @Content(
              schema = @Schema(implementation = Requests.Fail.class),
              examples = @ExampleObject(name = "fail", value = ApiExamples.FAIL)))
  @APIResponse(
      responseCode = "200",
      description =
          "Recorded: the item is pending again (with a later runAt) or failed; with next when"
              + " the request asked for it.",
      content = @Content(schema = @Schema(implementation = FinishedItemView.class)))
  @APIResponse(responseCode = "400", ref = "InvalidRequest")
  @APIResponse(responseCode = "404", ref = "ItemNotFound")
  @APIResponse(responseCode = "409", ref = "FinishRefused")
  @Consumes(MediaType.APPLICATION_JSON)
  public Uni<Response> fail(@PathParam("id") String id, @Valid @NotNull Requests.Fail body) {
    long itemId = Params.itemId(id);
    Instant start = Instant.now();
    Requests.Next next = body.next();
    String actor = guard.actor();
    SpanContext request = ItemTraces.request();
    return WorkerThread.call(
            () ->
                work.fail(
                    guard.item(itemId),
                    body.claimToken(),
                    body.error(),
                    body.retryable() == null || body.retryable(),
                    "unknown".equals(body.sent()),
                    body.retryAfterSeconds(),
                    actor,
                    nextClaim(next)))
        .flatMap(
            finished -> {
              Answer answer = finished.answer();
              traces.record("claimq.fail", answer.item(), answer.outcome(), request, start);
              return finished(finished, itemId, next, actor, request);
            });
  }

  /**
   * A finish's answer: the item as ever, or, when the request asked for next, the item with the
   * queue's next claim. Only a finish this request made claims: whether it did is the finishing
   * statement's own answer (CHANGED), so a repeat of an accepted finish, whose first answer may
   * have carried a claim, never claims a second item. The claim ran in the finish's transaction;
   * when it found nothing and the request may wait, the long poll takes over after the commit, so
   * no transaction spans its wait.
   */
  private Uni<Response> finished(
      Finished finished, long itemId, Requests.Next next, String actor, SpanContext request) {
    Answer answer = finished.answer();
    ItemView item = answer(answer, itemId); // a refusal is thrown here, before any claim
    if (next == null) {
      return Uni.createFrom().item(Response.ok(item).build());
    }
    if (answer.outcome() != Outcome.CHANGED) {
      return Uni.createFrom().item(Response.ok(new FinishedItemView(item, null)).build());
    }
    if (finished.next().isPresent()) {
      claimOrWait.claimedElsewhere(answer.item().queue);
      return Uni.createFrom().item(claimedNext(item, List.of(finished.next().get()), request));
    }
    // Nothing was due at the finish: claim again (an item may have come since), waiting if asked.
    Duration wait = Duration.ofSeconds(next.waitSeconds() == null ? 0 : next.waitSeconds());
    return claimOrWait
        .claimNext(actor, answer.item().queue, next.worker(), next.leaseSeconds(), null, wait)
        // The finish is made: past the key's bound on waiting claims, it answers with no next
        // item (nothing was due), never a 503 that would hide it.
        .onFailure(ClaimOrWait.TooManyWaiting.class)
        .recoverWithItem(List.of())
        .map(claims -> claimedNext(item, claims, request));
  }

  private static WorkService.NextClaim nextClaim(Requests.Next next) {
    return next == null ? null : new WorkService.NextClaim(next.worker(), next.leaseSeconds());
  }

  private Response claimedNext(ItemView item, List<Item> claims, SpanContext request) {
    ClaimedItemView claimed = null;
    if (!claims.isEmpty()) {
      traces.record("claimq.claim", claims.get(0), Outcome.CHANGED, request, Instant.now());
      claimed = ClaimedItemView.of(claims.get(0));
    }
    return Response.ok(new FinishedItemView(item, claimed)).build();
  }

  @RolesAllowed(Role.WORKER)
  @POST
  @Path("/{id}/intent")
  @Tag(name = "workers")
  @Operation(
      operationId = "intent",
      summary = "Declare that this attempt is about to send",
      description =
          "Call it just before calling the provider. If the attempt then ends without a complete"
              + " (its lease expires, or a fail says sent: unknown), the item's next claim says"
              + " possiblySent, or, where the queue's policy is hold, the item is failed with"
              + " the reason outcome unknown. Fenced like complete; repeating it is safe.")
  @APIResponse(
      responseCode = "200",
      description = "Recorded on the current attempt.",
      content = @Content(schema = @Schema(implementation = ItemView.class)))
  @APIResponse(responseCode = "400", ref = "InvalidRequest")
  @APIResponse(responseCode = "404", ref = "ItemNotFound")
  @APIResponse(responseCode = "409", ref = "StaleClaim")
  @Consumes(MediaType.APPLICATION_JSON)
  @RequestBody(
      content =
          @Content(
              schema = @Schema(implementation = Requests.Intent.class),
              examples = @ExampleObject(name = "intent", value = ApiExamples.INTENT)))
  public Uni<ItemView> intent(@PathParam("id") String id, @Valid @NotNull Requests.Intent body) {
    long itemId = Params.itemId(id);
    return WorkerThread.call(() -> work.intent(guard.item(itemId), body.claimToken()))
        .map(answer -> answer(answer, itemId));
  }

  @RolesAllowed(Role.WORKER)
  @POST
  @Path("/{id}/release")
  @Tag(name = "workers")
  @Operation(
      operationId = "release",
      summary = "Hand a claim back unused",
      description =
          "For a worker shutting down, or a provider's rate limit: the item is pending again"
              + " after delaySeconds, and the attempt does not count against maxAttempts. An"
              + " item may be released maxReleases times (its queue's policy; 10 by default);"
              + " after that release answers 409 release-limit and the claim stays yours."
              + " Repeat-safe with the same delaySeconds, also once the item has been claimed"
              + " again since.")
  @APIResponse(
      responseCode = "200",
      description = "Pending again, due after delaySeconds.",
      content = @Content(schema = @Schema(implementation = ItemView.class)))
  @APIResponse(responseCode = "400", ref = "InvalidRequest")
  @APIResponse(responseCode = "404", ref = "ItemNotFound")
  @APIResponse(responseCode = "409", ref = "ReleaseRefused")
  @Consumes(MediaType.APPLICATION_JSON)
  @RequestBody(
      content =
          @Content(
              schema = @Schema(implementation = Requests.Release.class),
              examples = @ExampleObject(name = "release for 30 s", value = ApiExamples.RELEASE)))
  public Uni<ItemView> release(@PathParam("id") String id, @Valid @NotNull Requests.Release body) {
    long itemId = Params.itemId(id);
    long delay = body.delaySeconds() == null ? 0 : body.delaySeconds();
    String actor = guard.actor();
    return WorkerThread.call(
            () -> work.release(guard.item(itemId), body.claimToken(), delay, actor))
        .map(answer -> answer(answer, itemId));
  }

  @RolesAllowed(Role.WORKER)
  @POST
  @Path("/{id}/heartbeat")
  @Tag(name = "workers")
  @Operation(
      operationId = "heartbeat",
      summary = "Extend a claim's lease",
      description =
          "For long work: heartbeat at about a third of the lease so the claim is not released."
              + " Repeat-safe: a repeat extends the same claim from now again.")
  @RequestBody(
      content =
          @Content(
              schema = @Schema(implementation = Requests.Heartbeat.class),
              examples = @ExampleObject(name = "heartbeat", value = ApiExamples.HEARTBEAT)))
  @APIResponse(
      responseCode = "200",
      description = "The item with its new leaseExpiresAt.",
      content = @Content(schema = @Schema(implementation = ItemView.class)))
  @APIResponse(responseCode = "400", ref = "InvalidRequest")
  @APIResponse(responseCode = "404", ref = "ItemNotFound")
  @APIResponse(responseCode = "409", ref = "StaleClaim")
  @Consumes(MediaType.APPLICATION_JSON)
  public Uni<ItemView> heartbeat(
      @PathParam("id") String id, @Valid @NotNull Requests.Heartbeat body) {
    long itemId = Params.itemId(id);
    return WorkerThread.call(
            () -> work.heartbeat(guard.item(itemId), body.claimToken(), body.leaseSeconds()))
        .map(answer -> answer(answer, itemId));
  }

  @RolesAllowed(Role.OPERATOR)
  @POST
  @Path("/{id}/retry")
  @Tag(name = "operators")
  @Operation(
      operationId = "retry",
      summary = "Retry a failed or cancelled item",
      description =
          "Back to pending, due now, with attempts reset to 0. Its history and idempotency key"
              + " are kept. No body. Past its queue's providerKeyTtl the provider may have"
              + " forgotten the key, so the retry needs force=true, and its answer says so. A"
              + " rejected proposal was never approved: it goes back to held, for approval. A"
              + " retry repeated because its answer was lost is a 409, unless the item failed"
              + " again meanwhile: then it is retried again. Send If-Match with the ETag of the"
              + " read the retry was decided on, and it is made only if the item has not changed"
              + " since (412): a retry of a stale read can never send the work once more.")
  @Parameter(ref = "IfMatch")
  @APIResponse(
      responseCode = "200",
      description = "Pending again (held again, if an operator had rejected it).",
      headers = {
        @Header(name = "ETag", ref = "ItemETag"),
        @Header(
            name = HORIZON_HEADER,
            description =
                "true when a forced retry went past the provider's idempotency horizon: its"
                    + " next send may be a new one to the provider.",
            schema = @Schema(type = SchemaType.STRING, enumeration = "true"))
      },
      content =
          @Content(
              schema = @Schema(implementation = ItemView.class),
              examples =
                  @ExampleObject(
                      name = "pending again, with its last worker and error kept",
                      value = ApiExamples.ITEM_RETRIED)))
  @APIResponse(responseCode = "400", ref = "InvalidRequest")
  @APIResponse(responseCode = "404", ref = "ItemNotFound")
  @APIResponse(responseCode = "409", ref = "RetryRefused")
  @APIResponse(responseCode = "412", ref = "ItemChanged")
  public RestResponse<ItemView> retry(
      @PathParam("id") String id,
      @Parameter(
              description = "true: retry even past the provider's idempotency horizon.",
              schema = @Schema(type = SchemaType.BOOLEAN, defaultValue = "false"))
          @QueryParam("force")
          String force,
      @Context UriInfo uri,
      @Context HttpHeaders headers) {
    long[] versions = EntityTags.versions(headers.getRequestHeader(EntityTags.IF_MATCH));
    long itemId = guard.item(Params.itemId(id));
    // The framework hands "force=" over as no value at all; it is not "false", so it is refused.
    String sent = uri.getQueryParameters().containsKey("force") && force == null ? "" : force;
    Answer answer = operators.retry(itemId, Params.bool("force", sent), guard.actor(), versions);
    RestResponse<ItemView> retried = tagged(answer, itemId);
    return answer.outcome() == Outcome.RETRIED_PAST_HORIZON
        ? RestResponse.ResponseBuilder.fromResponse(retried).header(HORIZON_HEADER, "true").build()
        : retried;
  }

  @RolesAllowed(Role.OPERATOR)
  @POST
  @Path("/{id}/cancel")
  @Tag(name = "operators")
  @Operation(
      operationId = "cancel",
      summary = "Cancel a pending or failed item",
      description = "No body. " + IF_MATCH_HOW)
  @Parameter(ref = "IfMatch")
  @APIResponse(
      responseCode = "200",
      description = "Cancelled.",
      headers = @Header(name = "ETag", ref = "ItemETag"),
      content = @Content(schema = @Schema(implementation = ItemView.class)))
  @APIResponse(responseCode = "404", ref = "ItemNotFound")
  @APIResponse(responseCode = "409", ref = "StateConflict")
  @APIResponse(responseCode = "412", ref = "ItemChanged")
  @APIResponse(responseCode = "400", ref = "InvalidRequest")
  public RestResponse<ItemView> cancel(@PathParam("id") String id, @Context HttpHeaders headers) {
    long[] versions = EntityTags.versions(headers.getRequestHeader(EntityTags.IF_MATCH));
    long itemId = guard.item(Params.itemId(id));
    return tagged(operators.cancel(itemId, guard.actor(), versions), itemId);
  }

  @RolesAllowed(Role.OPERATOR)
  @POST
  @Path("/{id}/resolve")
  @Tag(name = "operators")
  @Operation(
      operationId = "resolve",
      summary = "Mark a failed item done by hand",
      description =
          "For a send that did happen after all, e.g. one failed with outcome unknown that the"
              + " provider confirms. Recorded in the item's actions with the note. "
              + IF_MATCH_HOW)
  @Parameter(ref = "IfMatch")
  @APIResponse(
      responseCode = "200",
      description = "Done.",
      headers = @Header(name = "ETag", ref = "ItemETag"),
      content = @Content(schema = @Schema(implementation = ItemView.class)))
  @APIResponse(responseCode = "400", ref = "InvalidRequest")
  @APIResponse(responseCode = "404", ref = "ItemNotFound")
  @APIResponse(responseCode = "409", ref = "StateConflict")
  @APIResponse(responseCode = "412", ref = "ItemChanged")
  @Consumes(MediaType.APPLICATION_JSON)
  @RequestBody(
      content =
          @Content(
              schema = @Schema(implementation = Requests.Resolve.class),
              examples = @ExampleObject(name = "delivered", value = ApiExamples.RESOLVE)))
  public RestResponse<ItemView> resolve(
      @PathParam("id") String id,
      @Valid @NotNull Requests.Resolve body,
      @Context HttpHeaders headers) {
    long[] versions = EntityTags.versions(headers.getRequestHeader(EntityTags.IF_MATCH));
    long itemId = guard.item(Params.itemId(id));
    return tagged(
        operators.resolve(itemId, body.externalRef(), body.note(), guard.actor(), versions),
        itemId);
  }

  @RolesAllowed(Role.OPERATOR)
  @POST
  @Path("/{id}/approve")
  @Tag(name = "operators")
  @Operation(
      operationId = "approve",
      summary = "Approve a held item: it becomes pending, for a worker to claim",
      description =
          "Only a held item (its queue requires approval) can be approved; of concurrent"
              + " approvals and rejections exactly one takes effect, the others answer 409."
              + " Recorded in the item's actions with the key's name and the note. "
              + IF_MATCH_HOW)
  @Parameter(ref = "IfMatch")
  @APIResponse(
      responseCode = "200",
      description = "Pending.",
      headers = @Header(name = "ETag", ref = "ItemETag"),
      content = @Content(schema = @Schema(implementation = ItemView.class)))
  @APIResponse(responseCode = "400", ref = "InvalidRequest")
  @APIResponse(responseCode = "404", ref = "ItemNotFound")
  @APIResponse(responseCode = "409", ref = "StateConflict")
  @APIResponse(responseCode = "412", ref = "ItemChanged")
  @Consumes(MediaType.APPLICATION_JSON)
  @RequestBody(
      content =
          @Content(
              schema = @Schema(implementation = Requests.Approve.class),
              examples = @ExampleObject(name = "approve", value = ApiExamples.APPROVE)))
  public RestResponse<ItemView> approve(
      @PathParam("id") String id,
      @Valid @NotNull Requests.Approve body,
      @Context HttpHeaders headers) {
    long[] versions = EntityTags.versions(headers.getRequestHeader(EntityTags.IF_MATCH));
    long itemId = guard.item(Params.itemId(id));
    return tagged(operators.approve(itemId, body.note(), guard.actor(), versions), itemId);
  }

  @RolesAllowed(Role.OPERATOR)
  @POST
  @Path("/{id}/reject")
  @Tag(name = "operators")
  @Operation(
      operationId = "reject",
      summary = "Reject a held item: it is cancelled, never sent",
      description =
          "Only a held item can be rejected. The reason becomes the item's lastError, which its"
              + " proposer reads, and is recorded in its actions with the key's name. "
              + IF_MATCH_HOW)
  @Parameter(ref = "IfMatch")
  @APIResponse(
      responseCode = "200",
      description = "Cancelled.",
      headers = @Header(name = "ETag", ref = "ItemETag"),
      content = @Content(schema = @Schema(implementation = ItemView.class)))
  @APIResponse(responseCode = "400", ref = "InvalidRequest")
  @APIResponse(responseCode = "404", ref = "ItemNotFound")
  @APIResponse(responseCode = "409", ref = "StateConflict")
  @APIResponse(responseCode = "412", ref = "ItemChanged")
  @Consumes(MediaType.APPLICATION_JSON)
  @RequestBody(
      content =
          @Content(
              schema = @Schema(implementation = Requests.Reject.class),
              examples = @ExampleObject(name = "reject", value = ApiExamples.REJECT)))
  public RestResponse<ItemView> reject(
      @PathParam("id") String id,
      @Valid @NotNull Requests.Reject body,
      @Context HttpHeaders headers) {
    long[] versions = EntityTags.versions(headers.getRequestHeader(EntityTags.IF_MATCH));
    long itemId = guard.item(Params.itemId(id));
    return tagged(operators.reject(itemId, body.reason(), guard.actor(), versions), itemId);
  }

  @GET
  @Path("/{id}/actions")
  @RolesAllowed({Role.AGENT, Role.WORKER, Role.OPERATOR})
  @Tag(name = "operators")
  @Operation(
      operationId = "listActions",
      summary = "Operators' actions on an item: retries, cancels, resolves, approvals, rejections",
      description =
          "Each with the name of the key that did it, oldest first."
              + " Any role may read it; a key limited to some queues, only theirs.")
  @APIResponse(
      responseCode = "200",
      description = "The actions, oldest first.",
      content = @Content(schema = @Schema(implementation = Views.ActionList.class)))
  @APIResponse(responseCode = "404", ref = "ItemNotFound")
  @APIResponse(responseCode = "400", ref = "InvalidRequest")
  public Views.ActionList actions(@PathParam("id") String id) {
    long itemId = guard.item(Params.itemId(id));
    return new Views.ActionList(
        operators.actions(itemId).orElseThrow(() -> notFound(itemId)).stream()
            .map(Views.ActionView::of)
            .toList());
  }

  private static ItemView answer(Answer answer, long id) {
    return ItemView.of(Outcomes.itemOf(answer, id));
  }

  private static Outcomes.RefusedException notFound(long id) {
    return new Outcomes.RefusedException(Outcome.NOT_FOUND, Long.toString(id), null);
  }
}
