package dev.claimq.mcp;

import dev.claimq.api.Agents;
import io.quarkiverse.mcp.server.InputSchemaGenerator;
import io.quarkiverse.mcp.server.ToolManager.ToolInfo;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import jakarta.inject.Singleton;
import java.util.List;

/**
 * The tools' input schemas, written out: the arguments are read as REST reads its bodies (see
 * ToolArguments), so the schemas say what that reader accepts, with the API's own limits, and
 * refuse any argument they do not name.
 */
public final class AgentSchemas {
  private AgentSchemas() {}

  static final String QUEUE =
      """
      "queue": {"type": "string", "pattern": "^[a-z0-9][a-z0-9._-]{0,63}$",
        "description": "The queue's name: 1-64 characters of a-z, 0-9, '.', '_' or '-'."}""";

  static final String DEDUPE_KEY =
      """
      "dedupeKey": {"type": "string", "minLength": 1, "maxLength": 200,
        "description": "%s"}""";

  @Singleton
  public static class Enqueue implements InputSchemaGenerator<JsonObject> {
    @Override
    public JsonObject generate(ToolInfo tool) {
      return new JsonObject(
          """
          {"type": "object", "additionalProperties": false,
           "required": ["queue", "dedupeKey", "payload"],
           "properties": {
             %s,
             %s,
             "payload": {"description": "Any JSON value but null: what the worker needs to do the\
           work. Numbers keep their digits (1.50 stays 1.50; -0 is stored as 0); object keys come\
           back in the store's order."},
             "runAt": {"type": "string", "format": "date-time", "maxLength": 64,
               "description": "RFC 3339 time before which it is not done, e.g.\
           2026-11-30T09:00:00Z; omit for now."},
             "priority": {"type": "integer", "minimum": -32768, "maximum": 32767,
               "description": "Higher is done first; default 0."},
             "maxAttempts": {"type": "integer", "minimum": 1, "maximum": 100,
               "description": "Tries before the item stays failed for a human; default: the\
           queue's."}
           }}"""
              .formatted(
                  QUEUE,
                  DEDUPE_KEY.formatted(
                      "Names this piece of work in its queue: enqueueing the same key with the"
                          + " same payload (and the same runAt, priority and maxAttempts, where"
                          + " given) again is a no-op that answers the existing item.")));
    }
  }

  @Singleton
  public static class Status implements InputSchemaGenerator<JsonObject> {
    @Override
    public JsonObject generate(ToolInfo tool) {
      return new JsonObject(
          """
          {"type": "object", "additionalProperties": false,
           "properties": {
             "id": {"type": "string", "maxLength": 20,
               "description": "The item's id, as enqueue_work answered it."},
             %s,
             %s
           }}"""
              .formatted(
                  QUEUE.replace("The queue's name", "With dedupeKey instead of id: the queue"),
                  DEDUPE_KEY.formatted("With queue instead of id: the key it was enqueued with.")));
    }
  }

  @Singleton
  public static class Mine implements InputSchemaGenerator<JsonObject> {
    @Override
    public JsonObject generate(ToolInfo tool) {
      return new JsonObject(
          """
          {"type": "object", "additionalProperties": false,
           "properties": {
             "state": {"type": "string", "enum": %s,
               "description": "Only items in this state."},
             "limit": {"type": "integer", "minimum": 1, "maximum": %s,
               "description": "Items per page; default %s."},
             "cursor": {"type": "string", "maxLength": 200,
               "description": "nextCursor of the previous page, for older items, with the same state."}
           }}"""
              .formatted(
                  new JsonArray(List.copyOf(Agents.STATES)).encode(),
                  // As text: %d would write the default locale's digits (١٠٠ in Arabic).
                  Integer.toString(Agents.MAX_PAGE),
                  Integer.toString(Agents.DEFAULT_PAGE)));
    }
  }
}
