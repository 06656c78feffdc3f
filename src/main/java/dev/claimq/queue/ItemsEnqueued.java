package dev.claimq.queue;

/** New items went into a queue: fired inside the enqueue transaction, observed after commit. */
public record ItemsEnqueued(String queue) {}
