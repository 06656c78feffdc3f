package dev.claimq.api;

import dev.claimq.queue.Answer;
import dev.claimq.queue.BatchService;
import dev.claimq.security.Role;
import io.opentelemetry.api.trace.SpanContext;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.security.RolesAllowed;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/** Workers finishing many claimed items in one call. */
@Path("/v1")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class BatchFinishResource {
  private final BatchService batches;
  private final QueueGuard guard;
  private final ItemTraces traces;

  BatchFinishResource(BatchService batches, QueueGuard guard, ItemTraces traces) {
    this.batches = batches;
    this.guard = guard;
    this.traces = traces;
  }

  @POST
  @Path("/items:complete")
  @RolesAllowed(Role.WORKER)
  @Tag(name = "workers")
  @Operation(
      operationId = "completeBatch",
      summary = "Complete up to 500 claimed items at once",
      description =
          "Each entry is decided exactly as a single complete: 200 (also for a repeat of an"
              + " accepted complete), 404 no such item, 409 the token is not the item's current"
              + " claim, or this claim completed it with another externalRef. Entries that name"
              + " one claim are taken in order, as if sent one by one: the first is applied, each"
              + " later one answers as its repeat. One statement for the whole batch.")
  @APIResponse(responseCode = "200", ref = "BatchResults")
  @APIResponse(responseCode = "400", ref = "InvalidRequest")
  @RequestBody(
      content =
          @Content(
              schema = @Schema(implementation = Requests.CompleteBatch.class),
              examples = @ExampleObject(name = "two sends", value = ApiExamples.COMPLETE_BATCH)))
  public Uni<Views.BatchResults> complete(@Valid @NotNull Requests.CompleteBatch body) {
    List<Long> asked = body.items().stream().map(e -> Params.itemIdOrZero(e.id())).toList();
    Instant start = Instant.now();
    String actor = guard.actor();
    SpanContext request = ItemTraces.request();
    return WorkerThread.call(
            () -> {
              List<Long> ids = guard.items(asked);
              List<BatchService.CompleteEntry> entries = new ArrayList<>();
              for (int i = 0; i < ids.size(); i++) {
                Requests.CompleteEntry entry = body.items().get(i);
                entries.add(
                    new BatchService.CompleteEntry(
                        ids.get(i), entry.claimToken(), entry.externalRef()));
              }
              return batches.complete(entries, actor);
            })
        .map(
            answers -> {
              record("claimq.complete", answers, request, start);
              return Views.BatchResults.of(
                  answers, body.items().stream().map(Requests.CompleteEntry::id).toList());
            });
  }

  @POST
  @Path("/items:fail")
  @RolesAllowed(Role.WORKER)
  @Tag(name = "workers")
  @Operation(
      operationId = "failBatch",
      summary = "Report up to 500 failed attempts at once",
      description =
          "Each entry is decided exactly as a single fail (its own backoff, its own cap): 200,"
              + " 404 or 409. Entries that name one claim are taken in order, as if sent one by"
              + " one: the first is applied, each later one answers as its repeat. One statement"
              + " for the whole batch.")
  @APIResponse(responseCode = "200", ref = "BatchResults")
  @APIResponse(responseCode = "400", ref = "InvalidRequest")
  @RequestBody(
      content =
          @Content(
              schema = @Schema(implementation = Requests.FailBatch.class),
              examples =
                  @ExampleObject(
                      name = "a provider asking to wait",
                      value = ApiExamples.FAIL_BATCH)))
  public Uni<Views.BatchResults> fail(@Valid @NotNull Requests.FailBatch body) {
    List<Long> asked = body.items().stream().map(e -> Params.itemIdOrZero(e.id())).toList();
    Instant start = Instant.now();
    String actor = guard.actor();
    SpanContext request = ItemTraces.request();
    return WorkerThread.call(
            () -> {
              List<Long> ids = guard.items(asked);
              List<BatchService.FailEntry> entries = new ArrayList<>();
              for (int i = 0; i < ids.size(); i++) {
                Requests.FailEntry entry = body.items().get(i);
                entries.add(
                    new BatchService.FailEntry(
                        ids.get(i),
                        entry.claimToken(),
                        entry.error(),
                        entry.retryable() == null || entry.retryable(),
                        "unknown".equals(entry.sent()),
                        entry.retryAfterSeconds()));
              }
              return batches.fail(entries, actor);
            })
        .map(
            answers -> {
              record("claimq.fail", answers, request, start);
              return Views.BatchResults.of(
                  answers, body.items().stream().map(Requests.FailEntry::id).toList());
            });
  }

  /** Each entry's span in its item's trace, as the single call records it. */
  private void record(String name, List<Answer> answers, SpanContext request, Instant start) {
    for (Answer answer : answers) {
      traces.record(name, answer.item(), answer.outcome(), request, start);
    }
  }
}
