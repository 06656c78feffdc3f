package dev.claimq.mcp;

import dev.claimq.api.ItemView;
import java.util.List;

/** An item as an agent follows it over MCP: where its work is, without its payload. */
public record Work(
    String id,
    String queue,
    String dedupeKey,
    String state,
    int attempts,
    int maxAttempts,
    String runAt,
    String lastError,
    String externalRef,
    String enqueuedBy,
    String createdAt,
    String updatedAt,
    boolean pruned) {

  static Work of(ItemView item) {
    return new Work(
        item.id(),
        item.queue(),
        item.dedupeKey(),
        item.state().wireName(),
        item.attempts(),
        item.maxAttempts(),
        String.valueOf(item.runAt()),
        item.lastError(),
        item.externalRef(),
        item.enqueuedBy(),
        String.valueOf(item.createdAt()),
        String.valueOf(item.updatedAt()),
        item.pruned());
  }

  /** What enqueue_work did: "created", or "already enqueued" (the same work was there). */
  public record Enqueued(String result, Work item) {}

  /** A page of list_my_work, newest first; nextCursor is null on the last page. */
  public record Page(List<Work> items, String nextCursor) {}
}
