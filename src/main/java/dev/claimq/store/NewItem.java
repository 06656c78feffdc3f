package dev.claimq.store;

import java.time.Instant;

/**
 * What an agent asks to enqueue, already validated. The payload is JSON text; null priority and
 * maxAttempts take the configured defaults. The traceparent is the enqueue's W3C trace context, or
 * null.
 */
public record NewItem(
    String queue,
    String dedupeKey,
    String payload,
    Integer priority,
    Integer maxAttempts,
    Instant runAt,
    String enqueuedBy,
    String traceparent) {}
