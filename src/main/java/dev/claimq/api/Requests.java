package dev.claimq.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Size;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.hibernate.validator.constraints.CodePointLength;

/**
 * Request bodies, validated before any of them reaches a service. A field with a default may be
 * left out but not sent as null (StrictJson.NullRefused): null is not documented for it, and read
 * as absent it took a default the client did not ask for. A field without one (a worker's name, an
 * externalRef, a filter) takes null as "none", as left out, and is typed nullable in the document;
 * so do a Policy's settings, null being the service's default. NullableFieldsTest holds the two
 * together.
 */
public final class Requests {
  private Requests() {}

  static final int MAX_LEASE_SECONDS = 43_200;
  // No schema default for what the queue's policy decides: generators fill a default in, and
  // that would override the policy of every item their clients enqueue or claim.
  static final String LEASE_POLICY =
      "Left out: the queue's policy, else the service's default (60 unless configured).";
  static final String LEASE_LEFT_OUT =
      "How long the claim lasts without a heartbeat. " + LEASE_POLICY;
  static final int MAX_TOKEN_LENGTH = 100;
  static final int MAX_WAIT_SECONDS = 20;
  static final int MAX_CLAIM_BATCH = 100;
  static final int MAX_ENQUEUE_BATCH = 500;
  static final int MAX_FINISH_BATCH = 500;

  /**
   * White space as Java counts it (Character.isWhitespace, which String.isBlank and so @NotBlank
   * skip), written as the body of a character class that ECMAScript, and so a JSON Schema pattern,
   * reads the same. The extension documents @NotBlank as {@code \S}, whose white space is
   * ECMAScript's: it counts U+00A0 and U+FEFF, which Java does not, and not U+001C to U+001F, which
   * Java does.
   */
  static final String WHITE_SPACE =
      "\\u0009-\\u000D\\u001C-\\u0020\\u1680\\u2000-\\u2006\\u2008-\\u200A\\u2028\\u2029\\u205F\\u3000";

  /**
   * The schema's pattern for a @NotBlank field (ContractFilter puts it in place of \S): a character
   * that is not white space, anywhere. Anchored at both ends, so that a generator that matches
   * patterns from the start of the value (Python's re.match) reads it as JSON Schema does.
   */
  static final String NOT_BLANK = "^[\\s\\S]*[^" + WHITE_SPACE + "][\\s\\S]*$";

  /**
   * A failure reason keeps something once its control characters are dropped: one character that is
   * neither one of them (U+0000 to U+001F, U+007F to U+009F) nor white space. Without it, a reason
   * of U+0000 U+0001 was stored as "". The schema's pattern finds the class anywhere
   * (PRINTABLE_ANYWHERE); Bean Validation's must match the whole (PRINTABLE).
   */
  static final String PRINTABLE_CHARACTER = "[^\\u0000-\\u001F\\u007F-\\u009F" + WHITE_SPACE + "]";

  static final String PRINTABLE = "(?s).*" + PRINTABLE_CHARACTER + ".*";

  /** The schema's pattern for PRINTABLE, anchored as NOT_BLANK is. */
  static final String PRINTABLE_ANYWHERE = "^[\\s\\S]*" + PRINTABLE_CHARACTER + "[\\s\\S]*$";

  static final String PRINTABLE_MESSAGE =
      "must have a character other than white space and control characters, which are dropped";

  @Schema(name = "EnqueueRequest")
  public record Enqueue(
      @Schema(
              description = "Names this piece of work: enqueueing the same key again is a no-op.",
              examples = "welcome-email/user-42",
              minLength = 1,
              maxLength = 200)
          @NotNull
          @CodePointLength(min = 1, max = 200)
          String dedupeKey,
      @Schema(
              description = "Any JSON value but null: what the worker needs to do the work.",
              examples = "{\"to\":\"ada@example.com\",\"template\":\"welcome\"}")
          @NotNull
          @PresentJson
          JsonNode payload,
      @Schema(
              description =
                  "Claims allowed before the item stays failed. Left out: the queue's policy,"
                      + " else the service's default (5 unless configured).")
          @Min(1)
          @Max(100)
          @JsonDeserialize(using = StrictJson.NullRefused.class)
          Integer maxAttempts,
      @Schema(description = "Higher is claimed first.", defaultValue = "0")
          @Min(-32768)
          @Max(32767)
          @JsonDeserialize(using = StrictJson.NullRefused.class)
          Integer priority,
      @Schema(
              type = SchemaType.STRING,
              format = "date-time",
              description =
                  "RFC 3339 time before which it is not claimed; omit for now. From"
                      + " 1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999999Z, to the microsecond.",
              examples = "2026-11-30T09:00:00Z",
              maxLength = 64)
          @CodePointLength(max = 64)
          @JsonDeserialize(using = StrictJson.NullRefused.class)
          String runAt) {}

  @Schema(name = "ClaimRequest")
  public record Claim(
      @Schema(
              nullable = true,
              description = "A name for the claiming worker, shown to operators.",
              examples = "mailer-1",
              maxLength = 200)
          @CodePointLength(max = 200)
          String worker,
      @Schema(description = LEASE_LEFT_OUT)
          @Min(1)
          @Max(MAX_LEASE_SECONDS)
          @JsonDeserialize(using = StrictJson.NullRefused.class)
          Integer leaseSeconds) {}

  @Schema(name = "ClaimNextRequest")
  public record ClaimNext(
      @Schema(
              nullable = true,
              description = "A name for the claiming worker, shown to operators.",
              examples = "mailer-1",
              maxLength = 200)
          @CodePointLength(max = 200)
          String worker,
      @Schema(description = LEASE_LEFT_OUT)
          @Min(1)
          @Max(MAX_LEASE_SECONDS)
          @JsonDeserialize(using = StrictJson.NullRefused.class)
          Integer leaseSeconds,
      @Schema(
              description =
                  "Long poll: with nothing to claim, wait up to this long for an item before"
                      + " answering 204. The wait holds no server thread or database connection.",
              defaultValue = "0")
          @Min(0)
          @Max(MAX_WAIT_SECONDS)
          @JsonDeserialize(using = StrictJson.NullRefused.class)
          Integer waitSeconds,
      // The older form of claimNextBatch: still accepted, no longer documented, since a
      // client generated from the document cannot tell the two answers apart.
      @Schema(hidden = true)
          @Min(1)
          @Max(MAX_CLAIM_BATCH)
          @JsonDeserialize(using = StrictJson.NullRefused.class)
          Integer max) {}

  @Schema(name = "ClaimBatchRequest")
  public record ClaimBatch(
      @Schema(
              nullable = true,
              description = "A name for the claiming worker, shown to operators.",
              examples = "mailer-1",
              maxLength = 200)
          @CodePointLength(max = 200)
          String worker,
      @Schema(description = "How long each claim lasts without a heartbeat. " + LEASE_POLICY)
          @Min(1)
          @Max(MAX_LEASE_SECONDS)
          @JsonDeserialize(using = StrictJson.NullRefused.class)
          Integer leaseSeconds,
      @Schema(
              description =
                  "Long poll: with nothing to claim, wait up to this long for an item before"
                      + " answering 204.",
              defaultValue = "0")
          @Min(0)
          @Max(MAX_WAIT_SECONDS)
          @JsonDeserialize(using = StrictJson.NullRefused.class)
          Integer waitSeconds,
      @Schema(description = "Claim up to this many items.") @NotNull @Min(1) @Max(MAX_CLAIM_BATCH)
          Integer max) {}

  @Schema(name = "EnqueueBatchRequest")
  public record EnqueueBatch(
      @Schema(description = "1 to 500 items; each is decided as a single enqueue would be.")
          @NotNull
          @Size(min = 1, max = MAX_ENQUEUE_BATCH)
          List<@Valid @NotNull Enqueue> items) {}

  @Schema(name = "CompleteEntry")
  public record CompleteEntry(
      @Schema(examples = "4711", maxLength = 20) @NotBlank @CodePointLength(max = 20) String id,
      @Schema(maxLength = MAX_TOKEN_LENGTH) @NotBlank @CodePointLength(max = MAX_TOKEN_LENGTH)
          String claimToken,
      @Schema(nullable = true, maxLength = 500) @CodePointLength(max = 500) String externalRef) {}

  @Schema(name = "CompleteBatchRequest")
  public record CompleteBatch(
      @NotNull @Size(min = 1, max = MAX_FINISH_BATCH) List<@Valid @NotNull CompleteEntry> items) {}

  @Schema(name = "FailEntry")
  public record FailEntry(
      @Schema(examples = "4711", maxLength = 20) @NotBlank @CodePointLength(max = 20) String id,
      @Schema(maxLength = MAX_TOKEN_LENGTH) @NotBlank @CodePointLength(max = MAX_TOKEN_LENGTH)
          String claimToken,
      @Schema(pattern = PRINTABLE_ANYWHERE, maxLength = 100_000)
          @NotBlank
          @CodePointLength(max = 100_000)
          @Pattern(regexp = PRINTABLE, message = PRINTABLE_MESSAGE)
          @JsonDeserialize(using = StrictJson.ReasonText.class)
          String error,
      @JsonDeserialize(using = StrictJson.NullRefused.class) Boolean retryable,
      @Schema(
              description = "As in a single fail.",
              enumeration = {"no", "unknown"})
          @Pattern(regexp = "no|unknown", message = "must be no or unknown")
          @JsonDeserialize(using = StrictJson.NullRefused.class)
          String sent,
      @Schema(nullable = true) @Min(0) @Max(86_400) Long retryAfterSeconds) {}

  @Schema(name = "FailBatchRequest")
  public record FailBatch(
      @NotNull @Size(min = 1, max = MAX_FINISH_BATCH) List<@Valid @NotNull FailEntry> items) {}

  @Schema(name = "CompleteRequest")
  public record Complete(
      @Schema(maxLength = MAX_TOKEN_LENGTH) @NotBlank @CodePointLength(max = MAX_TOKEN_LENGTH)
          String claimToken,
      @Schema(
              nullable = true,
              description = "The provider's reference for the send, e.g. a message id.",
              examples = "msg_0193",
              maxLength = 500)
          @CodePointLength(max = 500)
          String externalRef,
      @Schema(nullable = true, description = NEXT_DESCRIPTION) @Valid Next next) {}

  static final String NEXT_DESCRIPTION =
      "Also claim the queue's next due item, answered as next in the same response (null when"
          + " nothing was claimable within next.waitSeconds). Only an accepted finish claims: a"
          + " refusal claims nothing, and a repeated finish answers next: null.";

  @Schema(
      name = "NextClaim",
      description =
          "The claim to make after a finish, from the finished item's queue, as claimNext makes"
              + " it; {} takes every default.")
  public record Next(
      @Schema(
              nullable = true,
              description = "A name for the claiming worker, shown to operators.",
              examples = "mailer-1",
              maxLength = 200)
          @CodePointLength(max = 200)
          String worker,
      @Schema(description = "How long the next claim lasts without a heartbeat. " + LEASE_POLICY)
          @Min(1)
          @Max(MAX_LEASE_SECONDS)
          @JsonDeserialize(using = StrictJson.NullRefused.class)
          Integer leaseSeconds,
      @Schema(
              description =
                  "Long poll: with nothing to claim, wait up to this long for an item before"
                      + " answering next: null. The finish is recorded before the wait.",
              defaultValue = "0")
          @Min(0)
          @Max(MAX_WAIT_SECONDS)
          @JsonDeserialize(using = StrictJson.NullRefused.class)
          Integer waitSeconds) {}

  @Schema(name = "FailRequest")
  public record Fail(
      @Schema(maxLength = MAX_TOKEN_LENGTH) @NotBlank @CodePointLength(max = MAX_TOKEN_LENGTH)
          String claimToken,
      @Schema(
              description =
                  "Why it failed; secrets are redacted, control characters (NUL included) other"
                      + " than newline and tab are dropped, and it is cut to 2,000 characters (a"
                      + " prefix the service adds, such as 'outcome unknown: ', comes on top).",
              examples = "SMTP 451: try again later",
              pattern = PRINTABLE_ANYWHERE,
              maxLength = 100_000)
          @NotBlank
          @CodePointLength(max = 100_000)
          @Pattern(regexp = PRINTABLE, message = PRINTABLE_MESSAGE)
          @JsonDeserialize(using = StrictJson.ReasonText.class)
          String error,
      @Schema(
              description = "false for a permanent error: no further attempts.",
              defaultValue = "true")
          @JsonDeserialize(using = StrictJson.NullRefused.class)
          Boolean retryable,
      @Schema(
              description =
                  "unknown when the worker cannot tell whether the provider acted (a timeout"
                      + " after the request went out): the next claim then says possiblySent,"
                      + " or, where the queue's policy is hold, the item is failed for a human.",
              enumeration = {"no", "unknown"},
              defaultValue = "no")
          @Pattern(regexp = "no|unknown", message = "must be no or unknown")
          @JsonDeserialize(using = StrictJson.NullRefused.class)
          String sent,
      @Schema(
              nullable = true,
              description = "The provider's Retry-After: replaces the computed backoff.")
          @Min(0)
          @Max(86_400)
          Long retryAfterSeconds,
      @Schema(nullable = true, description = NEXT_DESCRIPTION) @Valid Next next) {}

  @Schema(
      name = "BulkRequest",
      description = "Which items an operator's retry or cancel of many means, and how many.")
  public record Bulk(
      @Schema(
              nullable = true,
              description = "Only this queue; omit for every queue the key may use.",
              maxLength = 64)
          @CodePointLength(max = 64)
          String queue,
      @Schema(
              description =
                  "The state to act on: failed (the default), or cancelled for a retry, pending"
                      + " for a cancel.",
              enumeration = {"failed", "cancelled", "pending"},
              defaultValue = "failed")
          @JsonDeserialize(using = StrictJson.NullRefused.class)
          String state,
      @Schema(
              nullable = true,
              description = "Only items whose last error contains this text, in any case.",
              minLength = 1,
              maxLength = 500)
          @CodePointLength(min = 1, max = 500)
          String reason,
      @Schema(
              nullable = true,
              type = SchemaType.STRING,
              format = "date-time",
              description = "Only items last changed at or after this RFC 3339 time.",
              maxLength = 64)
          @CodePointLength(max = 64)
          String updatedAfter,
      @Schema(
              nullable = true,
              type = SchemaType.STRING,
              format = "date-time",
              description = "Only items last changed before this RFC 3339 time.",
              maxLength = 64)
          @CodePointLength(max = 64)
          String updatedBefore,
      @Schema(description = "True: change nothing, answer what would be.", defaultValue = "false")
          @JsonDeserialize(using = StrictJson.NullRefused.class)
          Boolean dryRun,
      @Schema(description = "Items per call, 1 to 500.", defaultValue = "100")
          @Min(1)
          @Max(500)
          @JsonDeserialize(using = StrictJson.NullRefused.class)
          Integer limit,
      @Schema(
              nullable = true,
              description = PREVIEW_TAG_DESCRIPTION,
              pattern = "^" + PREVIEW_TAG + "$",
              minLength = 32,
              maxLength = 32)
          @Pattern(regexp = PREVIEW_TAG, message = "must be the previewTag a dry run answered")
          String previewTag) {}

  /** A dry run's previewTag: an md5, in lower-case hex. */
  static final String PREVIEW_TAG = "[0-9a-f]{32}";

  static final String PREVIEW_TAG_DESCRIPTION =
      "The previewTag of the dry run this call confirms: the action is made only if the filter"
          + " picks exactly the items that dry run listed, each unchanged since; otherwise nothing"
          + " is done (409 preview-changed). Not on a dry run.";

  @Schema(name = "IntentRequest")
  public record Intent(
      @Schema(maxLength = MAX_TOKEN_LENGTH) @NotBlank @CodePointLength(max = MAX_TOKEN_LENGTH)
          String claimToken) {}

  @Schema(name = "ReleaseRequest")
  public record Release(
      @Schema(maxLength = MAX_TOKEN_LENGTH) @NotBlank @CodePointLength(max = MAX_TOKEN_LENGTH)
          String claimToken,
      @Schema(description = "Due again after this long.", defaultValue = "0")
          @Min(0)
          @Max(86_400)
          @JsonDeserialize(using = StrictJson.NullRefused.class)
          Long delaySeconds) {}

  @Schema(name = "ResolveRequest")
  public record Resolve(
      @Schema(
              nullable = true,
              description = "The provider's reference for the send, when known.",
              examples = "msg_0193",
              maxLength = 500)
          @CodePointLength(max = 500)
          String externalRef,
      @Schema(
              nullable = true,
              description = "Why, for the record: e.g. what the provider said.",
              examples = "Provider confirms delivery of msg_0193.",
              maxLength = 2_000)
          @CodePointLength(max = 2_000)
          String note) {}

  @Schema(name = "ApproveRequest")
  public record Approve(
      @Schema(
              nullable = true,
              description = "Why, for the record, kept in the item's actions.",
              examples = "Checked with the customer.",
              maxLength = 2_000)
          @CodePointLength(max = 2_000)
          String note) {}

  @Schema(name = "RejectRequest")
  public record Reject(
      @Schema(
              description =
                  "Why not: kept as the item's lastError, where its proposer reads it, and in its"
                      + " actions.",
              examples = "Wrong recipient: this customer unsubscribed.",
              maxLength = 2_000)
          @NotBlank
          @CodePointLength(max = 2_000)
          String reason) {}

  @Schema(
      name = "BulkApproveRequest",
      description = "Which held items an operator's approval of many means, and how many.")
  public record BulkApprove(
      @Schema(
              nullable = true,
              description = "Only this queue; omit for every queue the key may use.",
              maxLength = 64)
          @CodePointLength(max = 64)
          String queue,
      @Schema(
              nullable = true,
              type = SchemaType.STRING,
              format = "date-time",
              description = "Only items held since at or after this RFC 3339 time.",
              maxLength = 64)
          @CodePointLength(max = 64)
          String updatedAfter,
      @Schema(
              nullable = true,
              type = SchemaType.STRING,
              format = "date-time",
              description = "Only items held since before this RFC 3339 time.",
              maxLength = 64)
          @CodePointLength(max = 64)
          String updatedBefore,
      @Schema(description = "True: change nothing, answer what would be.", defaultValue = "false")
          @JsonDeserialize(using = StrictJson.NullRefused.class)
          Boolean dryRun,
      @Schema(description = "Items per call, 1 to 500.", defaultValue = "100")
          @Min(1)
          @Max(500)
          @JsonDeserialize(using = StrictJson.NullRefused.class)
          Integer limit,
      @Schema(
              nullable = true,
              description = PREVIEW_TAG_DESCRIPTION,
              pattern = "^" + PREVIEW_TAG + "$",
              minLength = 32,
              maxLength = 32)
          @Pattern(regexp = PREVIEW_TAG, message = "must be the previewTag a dry run answered")
          String previewTag) {}

  @Schema(
      name = "BulkRejectRequest",
      description =
          "Which held items an operator's rejection of many means, how many, and why not.")
  public record BulkReject(
      @Schema(
              nullable = true,
              description = "Only this queue; omit for every queue the key may use.",
              maxLength = 64)
          @CodePointLength(max = 64)
          String queue,
      @Schema(
              nullable = true,
              type = SchemaType.STRING,
              format = "date-time",
              description = "Only items held since at or after this RFC 3339 time.",
              maxLength = 64)
          @CodePointLength(max = 64)
          String updatedAfter,
      @Schema(
              nullable = true,
              type = SchemaType.STRING,
              format = "date-time",
              description = "Only items held since before this RFC 3339 time.",
              maxLength = 64)
          @CodePointLength(max = 64)
          String updatedBefore,
      @Schema(description = "True: change nothing, answer what would be.", defaultValue = "false")
          @JsonDeserialize(using = StrictJson.NullRefused.class)
          Boolean dryRun,
      @Schema(description = "Items per call, 1 to 500.", defaultValue = "100")
          @Min(1)
          @Max(500)
          @JsonDeserialize(using = StrictJson.NullRefused.class)
          Integer limit,
      @Schema(
              description =
                  "Why not: kept as each item's lastError, where its proposer reads it, and in"
                      + " its actions.",
              examples = "Campaign withdrawn.",
              maxLength = 2_000)
          @NotBlank
          @CodePointLength(max = 2_000)
          String reason,
      @Schema(
              nullable = true,
              description = PREVIEW_TAG_DESCRIPTION,
              pattern = "^" + PREVIEW_TAG + "$",
              minLength = 32,
              maxLength = 32)
          @Pattern(regexp = PREVIEW_TAG, message = "must be the previewTag a dry run answered")
          String previewTag) {}

  @Schema(
      name = "PolicyRequest",
      description = "A queue's settings; a setting left out (or null) is the service's default.")
  public record Policy(
      @Schema(nullable = true, description = "Attempts an item gets when its enqueue does not say.")
          @Min(1)
          @Max(100)
          Integer maxAttempts,
      @Schema(nullable = true, description = "A claim's lease when the worker does not say.")
          @Min(1)
          @Max(MAX_LEASE_SECONDS)
          Integer leaseSeconds,
      @Schema(
              nullable = true,
              description =
                  "Leases expired in a row after which an item is failed as a crash loop.")
          @Min(1)
          @Max(100)
          Integer crashLoopAfter,
      @Schema(
              nullable = true,
              description =
                  "After an attempt that may have sent (an intent, then no complete): retry, with"
                      + " the next claim saying possiblySent, or hold, failed for a human.",
              enumeration = {"retry", "hold"})
          @Pattern(regexp = "retry|hold", message = "must be retry or hold")
          String onUnknownOutcome,
      @Schema(
              nullable = true,
              description = "Releases (claims handed back unused) allowed per item.")
          @Min(0)
          @Max(1_000)
          Integer maxReleases,
      @Schema(
              nullable = true,
              description =
                  "How long the provider remembers an idempotency key, as an ISO 8601 duration"
                      + " (Stripe: PT24H), from PT1S to PT87600H (3,650 days), written as it is"
                      + " answered: hours, minutes and seconds, minutes and seconds under 60,"
                      + " without the parts that are 0 (PT36H, PT1H30M, PT90S is PT1M30S; no"
                      + " days). No retry is scheduled past it, and a policy whose"
                      + " worst-case schedule does not fit is refused with 422.",
              examples = "PT24H",
              maxLength = 40)
          @CodePointLength(max = 40)
          String providerKeyTtl,
      @Schema(
              nullable = true,
              description =
                  "The first retry's delay in seconds; it doubles on each further one. At most"
                      + " the cap (the service's, when backoffCapSeconds is left out).")
          @Min(1)
          @Max(86_400)
          Integer backoffBaseSeconds,
      @Schema(
              nullable = true,
              description =
                  "The longest delay between two attempts, in seconds; at least the base (the"
                      + " service's, when backoffBaseSeconds is left out).")
          @Min(1)
          @Max(604_800)
          Integer backoffCapSeconds,
      @Schema(
              nullable = true,
              description =
                  "New items wait in state held, unclaimable, until an operator approves"
                      + " (pending) or rejects (cancelled) each one. Off when left out.")
          Boolean requireApproval) {}

  @Schema(name = "HeartbeatRequest")
  public record Heartbeat(
      @Schema(maxLength = MAX_TOKEN_LENGTH) @NotBlank @CodePointLength(max = MAX_TOKEN_LENGTH)
          String claimToken,
      @Schema(
              description =
                  "New lease from now, kept for later heartbeats; defaults to the length the"
                      + " claim last set (its claim's, or an earlier heartbeat's).")
          @Min(1)
          @Max(MAX_LEASE_SECONDS)
          @JsonDeserialize(using = StrictJson.NullRefused.class)
          Integer leaseSeconds) {}
}
