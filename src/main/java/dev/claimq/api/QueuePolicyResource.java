package dev.claimq.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.claimq.queue.Outcome;
import dev.claimq.queue.QueuePolicies;
import dev.claimq.security.Role;
import dev.claimq.store.QueuePolicy;
import jakarta.annotation.security.RolesAllowed;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.Arrays;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.enums.ParameterIn;
import org.eclipse.microprofile.openapi.annotations.headers.Header;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;
import org.jboss.resteasy.reactive.RestResponse;

/**
 * Operators' settings of one queue: its policy, pause and resume, and who changed them. Its path is
 * QueuesResource's, not "/v1/queues/{queue}": a class path that also matched the agents' and
 * workers' queue paths sent each of their requests here first, and RESTEasy Reactive built a new
 * request mapper for every one of them to go on to QueuesResource (docs/profile.md).
 */
@Path("/v1/queues")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "operators")
public class QueuePolicyResource {
  private final QueuePolicies policies;
  private final QueueGuard guard;
  private final ObjectMapper json;

  QueuePolicyResource(QueuePolicies policies, QueueGuard guard, ObjectMapper json) {
    this.policies = policies;
    this.guard = guard;
    this.json = json;
  }

  /** A queue's policy as set (null: the service's default), and what is in effect. */
  @Schema(
      name = "Policy",
      requiredProperties = {
        "queue",
        "maxAttempts",
        "leaseSeconds",
        "crashLoopAfter",
        "onUnknownOutcome",
        "maxReleases",
        "providerKeyTtl",
        "backoffBaseSeconds",
        "backoffCapSeconds",
        "requireApproval",
        "paused",
        "updatedAt",
        "updatedBy",
        "effective"
      })
  public record PolicyView(
      String queue,
      @Schema(nullable = true) Integer maxAttempts,
      @Schema(nullable = true) Integer leaseSeconds,
      @Schema(nullable = true) Integer crashLoopAfter,
      @Schema(
              enumeration = {"retry", "hold"},
              nullable = true)
          String onUnknownOutcome,
      @Schema(nullable = true) Integer maxReleases,
      @Schema(description = "An ISO 8601 duration; null: no horizon.", nullable = true)
          String providerKeyTtl,
      @Schema(nullable = true) Integer backoffBaseSeconds,
      @Schema(nullable = true) Integer backoffCapSeconds,
      @Schema(description = "New items are held for an operator's approval.", nullable = true)
          Boolean requireApproval,
      @Schema(description = "Claims answer 204 until the queue is resumed.") boolean paused,
      @Schema(description = "Null when nothing was ever set.", nullable = true) Instant updatedAt,
      @Schema(description = "The key that last changed it.", nullable = true) String updatedBy,
      @Schema(description = "Every setting as it applies: the policy's, or the default.")
          Effective effective) {}

  @Schema(
      name = "EffectivePolicy",
      requiredProperties = {
        "maxAttempts",
        "leaseSeconds",
        "crashLoopAfter",
        "onUnknownOutcome",
        "maxReleases",
        "backoffBaseSeconds",
        "backoffCapSeconds",
        "requireApproval"
      })
  public record Effective(
      int maxAttempts,
      int leaseSeconds,
      int crashLoopAfter,
      @Schema(enumeration = {"retry", "hold"}) String onUnknownOutcome,
      int maxReleases,
      int backoffBaseSeconds,
      int backoffCapSeconds,
      boolean requireApproval) {}

  @RolesAllowed({Role.AGENT, Role.WORKER, Role.OPERATOR})
  @GET
  @Path("/{queue}/policy")
  @Operation(
      operationId = "getPolicy",
      summary = "A queue's policy",
      description =
          "The settings as set (null: the service's default) and as they apply."
              + " Any role may read it; a key limited to some queues, only theirs.")
  @Parameter(ref = "IfMatch")
  @Parameter(ref = "IfNoneMatch", name = "If-None-Match", in = ParameterIn.HEADER)
  @APIResponse(
      responseCode = "200",
      description = "The policy.",
      headers = @Header(name = "ETag", ref = "ETag"),
      content = @Content(schema = @Schema(implementation = PolicyView.class)))
  @APIResponse(responseCode = "304", ref = "NotModified")
  @APIResponse(responseCode = "400", ref = "InvalidRequest")
  @APIResponse(responseCode = "412", ref = "PolicyChanged")
  public RestResponse<PolicyView> get(
      @Parameter(ref = "Queue") @PathParam("queue") String queue, @Context HttpHeaders headers) {
    long[] versions = ifMatch(headers);
    QueuePolicy policy = policies.get(guard.queue(Params.queue(queue)));
    // A read changes nothing, so comparing after it decides nothing but the answer.
    if (versions != null && Arrays.stream(versions).noneMatch(v -> v == policy.version)) {
      throw stale(
          policy,
          ". Read it without If-Match to see it as it is now (its ETag is the new version).");
    }
    return tagged(policy);
  }

  @RolesAllowed(Role.OPERATOR)
  @PUT
  @Path("/{queue}/policy")
  @Consumes(MediaType.APPLICATION_JSON)
  @Operation(
      operationId = "setPolicy",
      summary = "Replace a queue's policy",
      description =
          "Every setting at once: one left out is the service's default again. Takes effect"
              + " with the next statement on the queue's items: new enqueues and claims, and"
              + " leases that expire from now. A pause is kept. Recorded in the queue's actions"
              + " with the key's name; settings the queue has already (a repeat whose answer was"
              + " lost, or none at all on a queue never set, which stays at version 0) change"
              + " nothing and are not recorded again. Send If-Match with the ETag"
              + " of the read the change was made from, so that it cannot overwrite a change"
              + " made since (412).")
  @Parameter(ref = "IfMatch")
  @APIResponse(
      responseCode = "200",
      description = "The policy as it is now.",
      headers = @Header(name = "ETag", ref = "ETag"),
      content = @Content(schema = @Schema(implementation = PolicyView.class)))
  @APIResponse(responseCode = "400", ref = "InvalidRequest")
  @APIResponse(responseCode = "412", ref = "PolicyChanged")
  @APIResponse(responseCode = "422", ref = "PolicyDoesNotFit")
  @RequestBody(
      content =
          @Content(
              schema = @Schema(implementation = Requests.Policy.class),
              examples =
                  @ExampleObject(
                      name = "five attempts, two-minute leases",
                      value = ApiExamples.POLICY)))
  public RestResponse<PolicyView> set(
      @Parameter(ref = "Queue") @PathParam("queue") String queue,
      @Valid @NotNull Requests.Policy body,
      @Context HttpHeaders headers) {
    long[] versions = ifMatch(headers);
    QueuePolicy policy = new QueuePolicy();
    policy.queue = guard.queue(Params.queue(queue));
    policy.maxAttempts = body.maxAttempts();
    policy.leaseSeconds = body.leaseSeconds();
    policy.crashLoopAfter = body.crashLoopAfter();
    policy.onUnknownOutcome = body.onUnknownOutcome();
    policy.maxReleases = body.maxReleases();
    policy.providerKeyTtlSeconds =
        Params.durationSeconds(
            "providerKeyTtl", body.providerKeyTtl(), Params.MAX_PROVIDER_KEY_TTL);
    policy.backoffBaseSeconds = body.backoffBaseSeconds();
    policy.backoffCapSeconds = body.backoffCapSeconds();
    policy.requireApproval = body.requireApproval();
    refuseCapBelowBase(body);
    QueuePolicies.Change change = policies.set(policy, asJson(body), guard.actor(), versions);
    if (change.outcome() == Outcome.POLICY_DOES_NOT_FIT) {
      QueuePolicies.Schedule schedule = change.schedule();
      throw new Outcomes.RefusedException(
          Outcomes.of(change.outcome()),
          "In the worst case "
              + schedule.maxAttempts()
              + " attempts of "
              + schedule.leaseSeconds()
              + " s leases with backoffs of "
              + schedule.backoffSeconds()
              + " s take "
              + schedule.worstCaseSeconds()
              + " s, past providerKeyTtl "
              + body.providerKeyTtl()
              + " ("
              + policy.providerKeyTtlSeconds
              + " s): retries after it would be new sends to the provider. Lower maxAttempts"
              + " or leaseSeconds, or raise providerKeyTtl.");
    }
    return answer(change);
  }

  @RolesAllowed(Role.OPERATOR)
  @POST
  @Path("/{queue}/pause")
  @Operation(
      operationId = "pause",
      summary = "Pause a queue's claims",
      description =
          "Claims of the queue answer 204 (long polls keep waiting) until it is resumed;"
              + " enqueues are still accepted, and claims already held run on. No body. A pause"
              + " of a paused queue (a repeat whose answer was lost) changes nothing and is not"
              + " recorded again.")
  @Parameter(ref = "IfMatch")
  @APIResponse(
      responseCode = "200",
      description = "Paused.",
      headers = @Header(name = "ETag", ref = "ETag"),
      content = @Content(schema = @Schema(implementation = PolicyView.class)))
  @APIResponse(responseCode = "400", ref = "InvalidRequest")
  @APIResponse(responseCode = "412", ref = "PolicyChanged")
  public RestResponse<PolicyView> pause(
      @Parameter(ref = "Queue") @PathParam("queue") String queue, @Context HttpHeaders headers) {
    long[] versions = ifMatch(headers);
    return answer(policies.pause(guard.queue(Params.queue(queue)), guard.actor(), versions));
  }

  @RolesAllowed(Role.OPERATOR)
  @POST
  @Path("/{queue}/resume")
  @Operation(
      operationId = "resume",
      summary = "Resume a paused queue",
      description =
          "Claims go on, and long polls parked on the queue are woken at once. No body. A resume"
              + " of a running queue (a repeat whose answer was lost) changes nothing and is not"
              + " recorded.")
  @Parameter(ref = "IfMatch")
  @APIResponse(
      responseCode = "200",
      description = "Resumed.",
      headers = @Header(name = "ETag", ref = "ETag"),
      content = @Content(schema = @Schema(implementation = PolicyView.class)))
  @APIResponse(responseCode = "400", ref = "InvalidRequest")
  @APIResponse(responseCode = "412", ref = "PolicyChanged")
  public RestResponse<PolicyView> resume(
      @Parameter(ref = "Queue") @PathParam("queue") String queue, @Context HttpHeaders headers) {
    long[] versions = ifMatch(headers);
    return answer(policies.resume(guard.queue(Params.queue(queue)), guard.actor(), versions));
  }

  @RolesAllowed({Role.AGENT, Role.WORKER, Role.OPERATOR})
  @GET
  @Path("/{queue}/actions")
  @Operation(
      operationId = "listQueueActions",
      summary = "Operators' policy changes, pauses and resumes of a queue",
      description =
          "Each with the name of the key that did it, oldest first."
              + " Any role may read it; a key limited to some queues, only theirs.")
  @APIResponse(
      responseCode = "200",
      description = "The actions, oldest first.",
      content = @Content(schema = @Schema(implementation = Views.QueueActionList.class)))
  @APIResponse(responseCode = "400", ref = "InvalidRequest")
  public Views.QueueActionList actions(@Parameter(ref = "Queue") @PathParam("queue") String queue) {
    return new Views.QueueActionList(
        policies.actions(guard.queue(Params.queue(queue))).stream()
            .map(Views.QueueActionView::of)
            .toList());
  }

  /**
   * A cap below the base the policy would have, the service's base or cap filling in for one left
   * out: refused, not applied as the base, which a client reading the answer back would not find.
   */
  private void refuseCapBelowBase(Requests.Policy body) {
    long defaultBase = policies.defaultBackoff().base().toSeconds();
    long defaultCap = policies.defaultBackoff().cap().toSeconds();
    Integer base = body.backoffBaseSeconds();
    Integer cap = body.backoffCapSeconds();
    if (base != null && cap != null && cap < base) {
      throw new BadRequestException(
          "backoffCapSeconds", "'backoffCapSeconds' must be at least 'backoffBaseSeconds'.");
    }
    if (base == null && cap != null && cap < defaultBase) {
      throw new BadRequestException(
          "backoffCapSeconds",
          "'backoffCapSeconds' ("
              + cap
              + ") must be at least the base, which is the service's "
              + defaultBase
              + " s when 'backoffBaseSeconds' is left out: raise the cap, or give a base too.");
    }
    if (base != null && cap == null && base > defaultCap) {
      throw new BadRequestException(
          "backoffBaseSeconds",
          "'backoffBaseSeconds' ("
              + base
              + ") must be at most the cap, which is the service's "
              + defaultCap
              + " s when 'backoffCapSeconds' is left out: lower the base, or give a cap too.");
    }
  }

  /** The versions an If-Match names; null when there is none (or it is *). */
  private static long[] ifMatch(HttpHeaders headers) {
    return EntityTags.versions(headers.getRequestHeader(EntityTags.IF_MATCH));
  }

  /** The policy as a change left it, or a 412 when its If-Match named another version. */
  private RestResponse<PolicyView> answer(QueuePolicies.Change change) {
    if (change.outcome() == Outcome.STALE_POLICY) {
      throw stale(
          change.policy(),
          ", and a change made from that read would overwrite what changed. Nothing was changed."
              + " Read the policy again (its ETag is the new version) and send the request again"
              + " if it still applies.");
    }
    return tagged(change.policy());
  }

  /** A 412: the policy is not at a version If-Match names; then what that means for the call. */
  private static Outcomes.RefusedException stale(QueuePolicy now, String meaning) {
    return new Outcomes.RefusedException(
        Outcomes.of(Outcome.STALE_POLICY),
        "The policy of queue '"
            + now.queue
            + "' is at "
            + EntityTags.of(now.version)
            + (now.updatedAt == null
                ? ""
                : ", changed by " + now.updatedBy + " at " + now.updatedAt)
            + ", not at a version If-Match names: it changed since the read that ETag came"
            + " from"
            + meaning);
  }

  /** The policy with its version as the ETag, which an If-Match names. */
  private RestResponse<PolicyView> tagged(QueuePolicy policy) {
    return RestResponse.ResponseBuilder.ok(view(policy))
        .header(HttpHeaders.ETAG, EntityTags.of(policy.version))
        .build();
  }

  private PolicyView view(QueuePolicy policy) {
    QueuePolicies.Effective applies = policies.effective(policy);
    Effective effective =
        new Effective(
            applies.maxAttempts(),
            applies.leaseSeconds(),
            applies.crashLoopAfter(),
            applies.onUnknownOutcome(),
            applies.maxReleases(),
            (int) applies.backoff().base().toSeconds(),
            (int) applies.backoff().cap().toSeconds(),
            applies.requireApproval());
    return new PolicyView(
        policy.queue,
        policy.maxAttempts,
        policy.leaseSeconds,
        policy.crashLoopAfter,
        policy.onUnknownOutcome,
        policy.maxReleases,
        policy.providerKeyTtlSeconds == null
            ? null
            : java.time.Duration.ofSeconds(policy.providerKeyTtlSeconds).toString(),
        policy.backoffBaseSeconds,
        policy.backoffCapSeconds,
        policy.requireApproval,
        policy.paused,
        policy.updatedAt,
        policy.updatedBy,
        effective);
  }

  private String asJson(Requests.Policy body) {
    try {
      return json.writeValueAsString(body);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }
}
