package dev.claimq.queue;

/**
 * New items went into a queue: fired once the statement that inserted them has committed (enqueues
 * run in autocommit), so a claim woken by it finds them.
 */
public record ItemsEnqueued(String queue) {}
