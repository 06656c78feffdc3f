package dev.claimq.store;

import java.time.Instant;

/**
 * What an agent asks to enqueue, already validated. The payload is JSON text; null priority and
 * maxAttempts take the configured defaults.
 */
public record NewItem(
    String queue,
    String dedupeKey,
    String payload,
    Integer priority,
    Integer maxAttempts,
    Instant runAt,
    String enqueuedBy) {}
