package dev.claimq.api;

/** Example bodies for the OpenAPI document, kept together so they stay consistent. */
final class ApiExamples {
  private ApiExamples() {}

  /** A claim token as a claim answers one; a request with it is a 409 until a real one is sent. */
  static final String TOKEN = "qG6d0m1fX2r4b3y-8ZkP0w5cJv7nT9sLhQe1uAaBcDe";

  static final String OTHER_TOKEN = "Zr8pW2kQ5nB0vX7cM3tY9hLsD1fGaJeUoR4iK6wN2bP";

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
       "enqueuedBy": "dev-agent", "createdAt": "2026-11-30T09:00:00Z", "updatedAt": "2026-11-30T09:00:00Z",
       "duplicateSends": 0, "pruned": false,
       "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}""";

  static final String ITEM_RETRIED =
      """
      {"id": "4711", "queue": "emails", "dedupeKey": "welcome-email/user-42", "state": "pending",
       "payload": {"to": "ada@example.com", "template": "welcome"}, "priority": 0,
       "attempts": 0, "maxAttempts": 5, "runAt": "2026-11-30T10:00:00Z",
       "idempotencyKey": "6f1c2a3e-8d4b-4c1e-9a57-2b8f0d3e4c51", "claimedBy": "mailer-1",
       "leaseExpiresAt": null, "externalRef": null,
       "lastError": "SMTP 550: mailbox unavailable", "enqueuedBy": "dev-agent",
       "createdAt": "2026-11-30T09:00:00Z", "updatedAt": "2026-11-30T10:00:00Z",
       "duplicateSends": 0, "pruned": false,
       "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}""";

  static final String CLAIM =
      """
      {"worker": "mailer-1", "leaseSeconds": 60}""";

  static final String CLAIM_NEXT =
      """
      {"worker": "mailer-1", "leaseSeconds": 60, "waitSeconds": 20}""";

  static final String CLAIM_BATCH =
      """
      {"worker": "mailer-1", "leaseSeconds": 60, "waitSeconds": 20, "max": 10}""";

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
       "enqueuedBy": "dev-agent", "createdAt": "2026-11-30T09:00:00Z", "updatedAt": "2026-11-30T09:00:03Z",
       "duplicateSends": 0, "pruned": false,
       "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}""";

  static final String COMPLETE_WITH_NEXT =
      """
      {"claimToken": "qG6d0m1fX2r4b3y-8ZkP0w5cJv7nT9sLhQe1uAaBcDe", "externalRef": "msg_0193",
       "next": {"worker": "mailer-1", "leaseSeconds": 60, "waitSeconds": 20}}""";

  static final String ITEM_DONE_NOTHING_NEXT =
      """
      {"id": "4711", "queue": "emails", "dedupeKey": "welcome-email/user-42", "state": "done",
       "payload": {"to": "ada@example.com", "template": "welcome"}, "priority": 0,
       "attempts": 1, "maxAttempts": 5, "runAt": "2026-11-30T09:00:00Z",
       "idempotencyKey": "6f1c2a3e-8d4b-4c1e-9a57-2b8f0d3e4c51", "claimedBy": "mailer-1",
       "leaseExpiresAt": null, "externalRef": "msg_0193", "lastError": null,
       "enqueuedBy": "dev-agent", "createdAt": "2026-11-30T09:00:00Z", "updatedAt": "2026-11-30T09:00:03Z",
       "duplicateSends": 0, "pruned": false,
       "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "next": null}""";

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
         "intentAt": "2026-11-30T09:00:02Z", "finishedAt": "2026-11-30T09:00:03Z",
         "outcome": "retry", "sentUnknown": false, "error": "SMTP 451: try again later",
         "finishedBy": "mailer"},
        {"attempt": 2, "worker": "mailer-2", "claimedAt": "2026-11-30T09:00:15Z",
         "intentAt": "2026-11-30T09:00:15Z", "finishedAt": "2026-11-30T09:00:16Z",
         "outcome": "done", "sentUnknown": false, "error": null, "finishedBy": "mailer"}]}""";

  static final String QUEUES =
      """
      {"queues": [{"queue": "emails",
        "counts": {"held": 0, "pending": 12, "sending": 2, "failed": 1}, "dueNextMinute": 4,
        "oldestDuePendingAgeSeconds": 3.2, "oldestHeldAgeSeconds": null, "paused": false,
        "doneLastMinute": 640, "failedLastMinute": 3}],
       "nextCursor": null,
       "totals": {"queues": 1,
        "counts": {"held": 0, "pending": 12, "sending": 2, "failed": 1}}}""";

  // Each body below works as shown (a token once a real claim's is pasted in) and is safe to send
  // from the Swagger UI: a bulk action's example is a dry run, the policy's the service's
  // defaults with a longer lease.

  static final String ENQUEUE_BATCH =
      """
      {"items": [
        {"dedupeKey": "welcome-email/user-43",
         "payload": {"to": "grace@example.com", "template": "welcome"}},
        {"dedupeKey": "welcome-email/user-44",
         "payload": {"to": "alan@example.com", "template": "welcome"}}]}""";

  static final String INTENT = "{\"claimToken\": \"" + TOKEN + "\"}";

  static final String RELEASE = "{\"claimToken\": \"" + TOKEN + "\", \"delaySeconds\": 30}";

  static final String COMPLETE_BATCH =
      "{\"items\": [\n"
          + "  {\"id\": \"4711\", \"claimToken\": \""
          + TOKEN
          + "\", \"externalRef\": \"msg_0193\"},\n"
          + "  {\"id\": \"4712\", \"claimToken\": \""
          + OTHER_TOKEN
          + "\", \"externalRef\": \"msg_0194\"}]}";

  static final String FAIL_BATCH =
      "{\"items\": [\n"
          + "  {\"id\": \"4711\", \"claimToken\": \""
          + TOKEN
          + "\", \"error\": \"SMTP 451: try again later\",\n"
          + "   \"retryAfterSeconds\": 30}]}";

  static final String POLICY =
      """
      {"maxAttempts": 5, "leaseSeconds": 120}""";

  static final String BULK_DRY_RUN =
      """
      {"queue": "emails", "state": "failed", "reason": "SMTP 451", "dryRun": true}""";

  static final String BULK_APPROVE_DRY_RUN =
      """
      {"queue": "emails", "dryRun": true}""";

  static final String BULK_REJECT_DRY_RUN =
      """
      {"queue": "emails", "reason": "not to be sent: campaign withdrawn", "dryRun": true}""";

  static final String RESOLVE =
      """
      {"externalRef": "msg_0193", "note": "Provider confirms delivery of msg_0193."}""";

  static final String APPROVE =
      """
      {"note": "Checked with the customer."}""";

  static final String REJECT =
      """
      {"reason": "Wrong recipient: this customer unsubscribed."}""";
}
