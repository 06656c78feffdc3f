package dev.claimq.api;

import dev.claimq.queue.OperatorService;
import dev.claimq.security.Caller;
import dev.claimq.security.Role;
import dev.claimq.store.ItemFilter;
import dev.claimq.store.ItemRepository;
import dev.claimq.store.ItemState;
import jakarta.annotation.security.RolesAllowed;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import java.util.List;
import java.util.Set;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * What an operator does to many items at once, and how one finds an item from whatever is in hand;
 * the console is built on these, and nothing it does is closed to other clients.
 */
@Path("/v1")
@Produces(MediaType.APPLICATION_JSON)
public class OperatorItemsResource {
  /** How a call confirms its dry run; said on each filtered action. */
  private static final String CONFIRMED =
      " Send the dry run's previewTag with the same filter, and the call acts on exactly the"
          + " items it listed, each unchanged since, or on none (409).";

  private final OperatorService operators;
  private final QueueGuard guard;
  private final Caller caller;

  OperatorItemsResource(OperatorService operators, QueueGuard guard, Caller caller) {
    this.operators = operators;
    this.guard = guard;
    this.caller = caller;
  }

  @GET
  @Path("/me")
  @RolesAllowed({Role.AGENT, Role.WORKER, Role.OPERATOR})
  @Tag(name = "operators")
  @Operation(
      operationId = "me",
      summary = "The key behind this request",
      description = "Its name, its roles and the queues it may use; any valid key may ask.")
  @APIResponse(
      responseCode = "200",
      description = "The key.",
      content = @Content(schema = @Schema(implementation = Views.Me.class)))
  @APIResponse(responseCode = "400", ref = "InvalidRequest")
  public Views.Me me() {
    return new Views.Me(
        caller.name(),
        caller.roles().stream().sorted().toList(),
        caller.queues().isEmpty() ? List.of("*") : caller.queues().stream().sorted().toList());
  }

  @GET
  @Path("/items:search")
  @RolesAllowed({Role.AGENT, Role.WORKER, Role.OPERATOR})
  @Tag(name = "operators")
  @Operation(
      operationId = "searchItems",
      summary = "Find items by id, dedupe key, idempotency key or external reference",
      description =
          "Exact matches of the text against the item's id, its dedupeKey, its idempotencyKey (as"
              + " the provider knows it) and its externalRef, in the queues the key may see;"
              + " the newest 20."
              + " Any role may read it; a key limited to some queues, only theirs.")
  @APIResponse(
      responseCode = "200",
      description = "The matching items, newest first (none: an empty list).",
      content = @Content(schema = @Schema(implementation = Views.ItemList.class)))
  @APIResponse(responseCode = "400", ref = "InvalidRequest")
  public Views.ItemList search(
      @Parameter(
              required = true,
              description = "An id, a dedupe key, an idempotency key or an externalRef.",
              schema = @Schema(type = SchemaType.STRING, minLength = 1, maxLength = 500))
          @QueryParam("q")
          String q,
      @jakarta.ws.rs.core.Context jakarta.ws.rs.core.UriInfo uri) {
    String text = Params.encodedText("q", Params.rawQuery(uri, "q"));
    if (text == null) {
      throw new BadRequestException("q", "q, the text to look for, is required.");
    }
    return new Views.ItemList(
        operators.search(text, guard.visible(null)).stream().map(ItemView::of).toList());
  }

  @POST
  @Path("/items:retry")
  @Consumes(MediaType.APPLICATION_JSON)
  @RolesAllowed(Role.OPERATOR)
  @Tag(name = "operators")
  @Operation(
      operationId = "retryMatching",
      summary = "Retry every item a filter matches, or preview it",
      description =
          "Failed items (or, with state cancelled, cancelled ones) matching the filter, newest"
              + " first, up to limit per call (more: call again). Each is retried as a single"
              + " retry would be (a rejected proposal back to held, not pending) and audited"
              + " under the key's name; one past its provider's"
              + " idempotency horizon is left for a single forced retry. With dryRun nothing"
              + " changes and the answer lists what would. One statement per call."
              + CONFIRMED)
  @APIResponse(
      responseCode = "200",
      description = "What was retried, or with dryRun would be.",
      content = @Content(schema = @Schema(implementation = Views.BulkResult.class)))
  @APIResponse(responseCode = "400", ref = "InvalidRequest")
  @APIResponse(responseCode = "409", ref = "PreviewChanged")
  @RequestBody(
      content =
          @Content(
              schema = @Schema(implementation = Requests.Bulk.class),
              examples = @ExampleObject(name = "dry run", value = ApiExamples.BULK_DRY_RUN)))
  public Views.BulkResult retry(@Valid @NotNull Requests.Bulk body) {
    ItemFilter filter = filter(body, Set.of(ItemState.FAILED, ItemState.CANCELLED));
    return result(
        "retry",
        operators.retryMatching(
            selection(filter, body.limit(), body.dryRun(), body.previewTag()), guard.actor()));
  }

  @POST
  @Path("/items:cancel")
  @Consumes(MediaType.APPLICATION_JSON)
  @RolesAllowed(Role.OPERATOR)
  @Tag(name = "operators")
  @Operation(
      operationId = "cancelMatching",
      summary = "Cancel every item a filter matches, or preview it",
      description =
          "Failed items (or, with state pending, pending ones) matching the filter, newest first,"
              + " up to limit per call (more: call again), each cancelled as a single cancel"
              + " would be and audited under the key's name. With dryRun nothing changes and the"
              + " answer lists what would. One statement per call."
              + CONFIRMED)
  @APIResponse(
      responseCode = "200",
      description = "What was cancelled, or with dryRun would be.",
      content = @Content(schema = @Schema(implementation = Views.BulkResult.class)))
  @APIResponse(responseCode = "400", ref = "InvalidRequest")
  @APIResponse(responseCode = "409", ref = "PreviewChanged")
  @RequestBody(
      content =
          @Content(
              schema = @Schema(implementation = Requests.Bulk.class),
              examples = @ExampleObject(name = "dry run", value = ApiExamples.BULK_DRY_RUN)))
  public Views.BulkResult cancel(@Valid @NotNull Requests.Bulk body) {
    ItemFilter filter = filter(body, Set.of(ItemState.FAILED, ItemState.PENDING));
    return result(
        "cancel",
        operators.cancelMatching(
            selection(filter, body.limit(), body.dryRun(), body.previewTag()), guard.actor()));
  }

  @POST
  @Path("/items:approve")
  @Consumes(MediaType.APPLICATION_JSON)
  @RolesAllowed(Role.OPERATOR)
  @Tag(name = "operators")
  @Operation(
      operationId = "approveMatching",
      summary = "Approve every held item a filter matches, or preview it",
      description =
          "Held items matching the filter, newest first, up to limit per call (more: call"
              + " again), each approved as a single approval would be and audited under the"
              + " key's name. With dryRun nothing changes and the answer lists what would. One"
              + " statement per call."
              + CONFIRMED)
  @APIResponse(
      responseCode = "200",
      description = "What was approved, or with dryRun would be.",
      content = @Content(schema = @Schema(implementation = Views.BulkResult.class)))
  @APIResponse(responseCode = "400", ref = "InvalidRequest")
  @APIResponse(responseCode = "409", ref = "PreviewChanged")
  @RequestBody(
      content =
          @Content(
              schema = @Schema(implementation = Requests.BulkApprove.class),
              examples =
                  @ExampleObject(name = "dry run", value = ApiExamples.BULK_APPROVE_DRY_RUN)))
  public Views.BulkResult approve(@Valid @NotNull Requests.BulkApprove body) {
    return result(
        "approve",
        operators.approveMatching(
            selection(
                held(body.queue(), body.updatedAfter(), body.updatedBefore()),
                body.limit(),
                body.dryRun(),
                body.previewTag()),
            guard.actor()));
  }

  @POST
  @Path("/items:reject")
  @Consumes(MediaType.APPLICATION_JSON)
  @RolesAllowed(Role.OPERATOR)
  @Tag(name = "operators")
  @Operation(
      operationId = "rejectMatching",
      summary = "Reject every held item a filter matches, or preview it",
      description =
          "Held items matching the filter, newest first, up to limit per call (more: call"
              + " again), each rejected with the reason as a single rejection would be and"
              + " audited under the key's name. With dryRun nothing changes and the answer lists"
              + " what would. One statement per call."
              + CONFIRMED)
  @APIResponse(
      responseCode = "200",
      description = "What was rejected, or with dryRun would be.",
      content = @Content(schema = @Schema(implementation = Views.BulkResult.class)))
  @APIResponse(responseCode = "400", ref = "InvalidRequest")
  @APIResponse(responseCode = "409", ref = "PreviewChanged")
  @RequestBody(
      content =
          @Content(
              schema = @Schema(implementation = Requests.BulkReject.class),
              examples = @ExampleObject(name = "dry run", value = ApiExamples.BULK_REJECT_DRY_RUN)))
  public Views.BulkResult reject(@Valid @NotNull Requests.BulkReject body) {
    return result(
        "reject",
        operators.rejectMatching(
            selection(
                held(body.queue(), body.updatedAfter(), body.updatedBefore()),
                body.limit(),
                body.dryRun(),
                body.previewTag()),
            body.reason(),
            guard.actor()));
  }

  private ItemFilter held(String queue, String updatedAfter, String updatedBefore) {
    return new ItemFilter(
        guard.visible(queue == null ? null : Params.queue(queue)),
        ItemState.HELD,
        null,
        Params.timestamp("updatedAfter", updatedAfter),
        Params.timestamp("updatedBefore", updatedBefore));
  }

  private ItemFilter filter(Requests.Bulk body, Set<ItemState> allowed) {
    ItemState state = body.state() == null ? ItemState.FAILED : Params.state(body.state());
    if (!allowed.contains(state)) {
      throw new BadRequestException(
          "state",
          "state must be one of "
              + allowed.stream().map(ItemState::wireName).sorted().toList()
              + " here; got '"
              + body.state()
              + "'.");
    }
    return new ItemFilter(
        guard.visible(body.queue() == null ? null : Params.queue(body.queue())),
        state,
        Params.reason(body.reason()),
        Params.timestamp("updatedAfter", body.updatedAfter()),
        Params.timestamp("updatedBefore", body.updatedBefore()));
  }

  /** The request's reach: 100 items unless it says, a dry run only if it says so. */
  private static ItemRepository.Selection selection(
      ItemFilter filter, Integer limit, Boolean dryRun, String previewTag) {
    boolean dry = Boolean.TRUE.equals(dryRun);
    if (dry && previewTag != null) {
      throw new BadRequestException(
          "previewTag",
          "previewTag confirms a dry run, and a dry run changes nothing: send it with dryRun"
              + " false, or leave it out.");
    }
    return new ItemRepository.Selection(filter, limit == null ? 100 : limit, dry, previewTag);
  }

  private static Views.BulkResult result(String action, ItemRepository.Matching matching) {
    if (!matching.asPreviewed()) {
      int now = matching.items().size();
      // The tag hashes the action with the items, so it cannot say which of these it was.
      throw new Outcomes.RefusedException(
          new Outcomes.Status(409, "preview-changed", "Items changed since the preview"),
          "This previewTag is not that of a dry run of this "
              + action
              + " with this filter, picking the items it picks now: it is from a dry run of another"
              + " action or filter, or one of the items it listed changed, or no longer matches,"
              + " or another matches now ("
              + now
              + (now == 1 ? " item matches" : " items match")
              + (matching.more() ? " within the limit, and more beyond it" : "")
              + "). Nothing was done. Run the dry run again, check what it lists, and confirm"
              + " with its previewTag; an updatedBefore keeps items that change later out.");
    }
    return new Views.BulkResult(
        !matching.changed(),
        matching.items().stream().map(ItemView::of).toList(),
        matching.more(),
        matching.previewTag());
  }
}
