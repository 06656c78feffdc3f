package dev.claimq.store;

import java.time.Instant;

/**
 * What an agent asks to enqueue, already validated, as sent. The payload is JSON text; null
 * priority, maxAttempts and runAt take their defaults (0; the queue's policy or the service's;
 * now), and a replay is not compared on them. The traceparent is the enqueue's W3C trace context,
 * or null.
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
