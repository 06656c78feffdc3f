package dev.claimq.api;

/** Example bodies for the OpenAPI document, kept together so they stay consistent. */
final class ApiExamples {
  private ApiExamples() {}

  static final String ENQUEUE =
      """
      {"dedupeKey": "welcome-email/user-42",
       "payload": {"to": "ada@example.com", "template": "welcome"},
       "maxAttempts": 5}""";

  static final String ITEM_PENDING =
      """
      {"id": "4711", "queue": "emails", "dedupeKey": "welcome-email/user-42", "state": "pending",
       "payload": {"to": "ada@example.com", "template": "welcome"}, "priority": 0,
       "attempts": 0, "maxAttempts": 5, "runAt": "2026-11-30T09:00:00Z",
       "idempotencyKey": "6f1c2a3e-8d4b-4c1e-9a57-2b8f0d3e4c51", "claimedBy": null,
       "leaseExpiresAt": null, "externalRef": null, "lastError": null,
       "createdAt": "2026-11-30T09:00:00Z", "updatedAt": "2026-11-30T09:00:00Z"}""";

  static final String CLAIM =
      """
      {"worker": "mailer-1", "leaseSeconds": 60}""";

  static final String CLAIM_NEXT =
      """
      {"worker": "mailer-1", "leaseSeconds": 60, "waitSeconds": 20}""";

  static final String ITEM_CLAIMED =
      """
      {"id": "4711", "queue": "emails", "dedupeKey": "welcome-email/user-42", "state": "sending",
       "payload": {"to": "ada@example.com", "template": "welcome"}, "priority": 0,
       "attempts": 1, "maxAttempts": 5, "runAt": "2026-11-30T09:00:00Z",
       "idempotencyKey": "6f1c2a3e-8d4b-4c1e-9a57-2b8f0d3e4c51", "claimedBy": "mailer-1",
       "leaseExpiresAt": "2026-11-30T09:01:02Z", "externalRef": null, "lastError": null,
       "createdAt": "2026-11-30T09:00:00Z", "updatedAt": "2026-11-30T09:00:02Z",
       "claimToken": "qG6d0m1fX2r4b3y-8ZkP0w5cJv7nT9sLhQe1uAaBcDe"}""";

  static final String COMPLETE =
      """
      {"claimToken": "qG6d0m1fX2r4b3y-8ZkP0w5cJv7nT9sLhQe1uAaBcDe", "externalRef": "msg_0193"}""";

  static final String ITEM_DONE =
      """
      {"id": "4711", "queue": "emails", "dedupeKey": "welcome-email/user-42", "state": "done",
       "payload": {"to": "ada@example.com", "template": "welcome"}, "priority": 0,
       "attempts": 1, "maxAttempts": 5, "runAt": "2026-11-30T09:00:00Z",
       "idempotencyKey": "6f1c2a3e-8d4b-4c1e-9a57-2b8f0d3e4c51", "claimedBy": "mailer-1",
       "leaseExpiresAt": null, "externalRef": "msg_0193", "lastError": null,
       "createdAt": "2026-11-30T09:00:00Z", "updatedAt": "2026-11-30T09:00:03Z"}""";

  static final String FAIL =
      """
      {"claimToken": "qG6d0m1fX2r4b3y-8ZkP0w5cJv7nT9sLhQe1uAaBcDe",
       "error": "SMTP 451: try again later", "retryable": true}""";

  static final String HEARTBEAT =
      """
      {"claimToken": "qG6d0m1fX2r4b3y-8ZkP0w5cJv7nT9sLhQe1uAaBcDe", "leaseSeconds": 120}""";

  static final String ATTEMPTS =
      """
      {"attempts": [
        {"attempt": 1, "worker": "mailer-1", "claimedAt": "2026-11-30T09:00:02Z",
         "finishedAt": "2026-11-30T09:00:03Z", "outcome": "retry",
         "error": "SMTP 451: try again later"},
        {"attempt": 2, "worker": "mailer-2", "claimedAt": "2026-11-30T09:00:15Z",
         "finishedAt": "2026-11-30T09:00:16Z", "outcome": "done", "error": null}]}""";

  static final String QUEUES =
      """
      {"queues": [{"queue": "emails",
        "counts": {"pending": 12, "sending": 2, "done": 340, "failed": 1, "cancelled": 0},
        "oldestDuePendingAgeSeconds": 3.2}]}""";

  static final String INVALID =
      """
      {"type": "https://claimq.dev/problems/invalid-request", "title": "Invalid request",
       "status": 400, "detail": "The request is invalid: dedupeKey must not be null.",
       "errors": [{"field": "dedupeKey", "message": "must not be null"}]}""";

  static final String UNAUTHORIZED =
      """
      {"type": "https://claimq.dev/problems/unauthorized", "title": "Unauthorized",
       "status": 401, "detail": "Send a known API key as Authorization: Bearer <key>."}""";

  static final String FORBIDDEN =
      """
      {"type": "https://claimq.dev/problems/forbidden", "title": "Forbidden", "status": 403,
       "detail": "This API key may not use this queue."}""";

  static final String TOO_LARGE =
      """
      {"type": "https://claimq.dev/problems/too-large", "title": "Request too large",
       "status": 413, "detail": "The payload is 300112 bytes of JSON; the limit is 262144       (claimq.limits.payload-bytes). Store large content elsewhere and enqueue a reference to it."}""";

  static final String NOT_FOUND =
      """
      {"type": "https://claimq.dev/problems/item-not-found", "title": "Item not found",
       "status": 404, "detail": "No item has id '4711'."}""";

  static final String STALE_CLAIM =
      """
      {"type": "https://claimq.dev/problems/stale-claim", "title": "Stale claim", "status": 409,
       "detail": "The claim token is not the current claim of item 4711 (the item is now pending).\
       Its lease may have expired; stop working on this item."}""";

  static final String STATE_CONFLICT =
      """
      {"type": "https://claimq.dev/problems/state-conflict", "title": "Not allowed in this state",
       "status": 409,
       "detail": "Item 4711 is done: only failed or cancelled items can be retried."}""";

  static final String DEDUPE_CONFLICT =
      """
      {"type": "https://claimq.dev/problems/dedupe-key-reused", "title": "Dedupe key reused",
       "status": 422, "detail": "Queue 'emails' already has item 4711 with dedupe key\
       'welcome-email/user-42' and a different payload. A dedupe key names one piece of work:\
       use a new key for different work."}""";
}
