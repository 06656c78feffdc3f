package dev.claimq.store;

/**
 * One queue's live items by state, how many pending items come due within the next minute, how long
 * its oldest due item and its oldest held item have waited (null if none), and whether its claims
 * are paused. Done and cancelled items are not counted: their number only grows, and counting it
 * would cost a scan.
 */
public record QueueStats(
    String queue,
    long held,
    long pending,
    long sending,
    long failed,
    long dueNextMinute,
    Double oldestDuePendingAgeSeconds,
    Double oldestHeldAgeSeconds,
    boolean paused) {}
