package dev.claimq.store;

/**
 * Counts by state of one queue, how long its oldest due item has waited (null if none), and whether
 * its claims are paused.
 */
public record QueueStats(
    String queue,
    long pending,
    long sending,
    long done,
    long failed,
    long cancelled,
    Double oldestDuePendingAgeSeconds,
    boolean paused) {}
