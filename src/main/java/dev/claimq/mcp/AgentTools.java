package dev.claimq.mcp;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import dev.claimq.api.Agents;
import dev.claimq.api.Problem;
import dev.claimq.api.ProblemMappers;
import dev.claimq.api.Requests;
import dev.claimq.api.SchemaGate;
import dev.claimq.api.StrictJson;
import io.quarkiverse.mcp.server.RawMessage;
import io.quarkiverse.mcp.server.TextContent;
import io.quarkiverse.mcp.server.Tool;
import io.quarkiverse.mcp.server.ToolResponse;
import io.quarkus.vertx.http.runtime.CurrentVertxRequest;
import jakarta.validation.constraints.NotNull;
import java.io.IOException;
import java.util.List;
import org.hibernate.validator.constraints.CodePointLength;

/**
 * The agents' MCP tools: enqueue work once, and follow it. Each makes the call the REST API makes
 * for an agent (through {@link Agents}), as the key's name, within the key's queues; a refusal is a
 * tool error whose text is the API's problem detail. There are no worker or operator tools.
 */
public class AgentTools {
  private final Agents agents;
  private final ToolArguments arguments;
  private final ObjectMapper json;
  private final CurrentVertxRequest request;
  private final SchemaGate schemaGate;

  AgentTools(
      Agents agents,
      ToolArguments arguments,
      ObjectMapper json,
      CurrentVertxRequest request,
      SchemaGate schemaGate) {
    this.agents = agents;
    this.arguments = arguments;
    this.json = json;
    this.request = request;
    this.schemaGate = schemaGate;
  }

  /** The queue beside an enqueue's body, which is the REST API's (Requests.Enqueue). */
  public record QueueArgument(@NotNull String queue) {}

  public record StatusArguments(
      String id, String queue, @CodePointLength(min = 1, max = 200) String dedupeKey) {}

  /** The limit has a default, so it may be left out but not sent as null, as on the REST API. */
  public record MineArguments(
      String state,
      @JsonDeserialize(using = StrictJson.NullRefused.class) Integer limit,
      String cursor) {}

  @Tool(
      name = "enqueue_work",
      description =
          "Puts one piece of work (send this email, publish this post) in a claimq queue, where a"
              + " worker will do it once. Safe to repeat: the dedupeKey names the work, so calling"
              + " again with the same queue, dedupeKey and payload makes nothing new and answers"
              + " \"already enqueued\" with the existing item; the same dedupeKey with a different"
              + " payload, or a priority, maxAttempts or runAt other than the item's, is refused"
              + " (use a new key for different work). Answers the item: its id,"
              + " state (pending until a worker claims it) and attempts. Follow it with"
              + " get_work_status. On a queue that requires approval the item is held until"
              + " an operator approves it (then pending) or rejects it (then cancelled, with the"
              + " reason as lastError); repeating the call never proposes it twice.",
      inputSchema = @Tool.InputSchema(generator = AgentSchemas.Enqueue.class),
      annotations =
          @Tool.Annotations(
              title = "Enqueue work",
              readOnlyHint = false,
              destructiveHint = false,
              idempotentHint = true,
              openWorldHint = false))
  ToolResponse enqueueWork(RawMessage message) {
    return answer(
        () -> {
          JsonNode given = arguments.of(message);
          String queue = arguments.split(given, "queue", QueueArgument.class).queue();
          Requests.Enqueue body = arguments.read(given, Requests.Enqueue.class);
          // The agent's trace goes on through its work, as from POST .../items.
          String traceparent =
              Agents.traceparent(request.getCurrent().request().headers().getAll("traceparent"));
          Agents.Enqueued enqueued = agents.enqueue(queue, body, traceparent);
          Work item = Work.of(enqueued.item());
          String result = enqueued.created() ? "created" : "already enqueued";
          return success(
              (enqueued.created() ? "Created" : "Already enqueued")
                  + ": item "
                  + item.id()
                  + " in queue '"
                  + item.queue()
                  + "' is "
                  + item.state()
                  + ".",
              new Work.Enqueued(result, item));
        });
  }

  @Tool(
      name = "get_work_status",
      description =
          "Tells where a piece of work enqueued with enqueue_work is: its state (held: waiting"
              + " for an operator's approval; pending: waiting for a worker; sending: a worker has"
              + " it; done; failed: attempts used up or a permanent failure, waiting for a human;"
              + " cancelled: by an operator, or rejected, the reason in lastError), attempts so"
              + " far and allowed,"
              + " the last error, and the provider's reference once done. Name the item by id, or"
              + " by queue and dedupeKey. Reads only.",
      inputSchema = @Tool.InputSchema(generator = AgentSchemas.Status.class),
      annotations =
          @Tool.Annotations(
              title = "Get work status",
              readOnlyHint = true,
              destructiveHint = false,
              idempotentHint = true,
              openWorldHint = false))
  ToolResponse getWorkStatus(RawMessage message) {
    return answer(
        () -> {
          StatusArguments asked = arguments.read(arguments.of(message), StatusArguments.class);
          Work item = Work.of(agents.find(asked.id(), asked.queue(), asked.dedupeKey()));
          return success(
              "Item "
                  + item.id()
                  + " in queue '"
                  + item.queue()
                  + "' is "
                  + item.state()
                  + " after "
                  + item.attempts()
                  + " of "
                  + item.maxAttempts()
                  + " attempts.",
              item);
        });
  }

  @Tool(
      name = "list_my_work",
      description =
          "Lists the work this API key enqueued, newest first, a page at a time: pass nextCursor"
              + " from an answer as cursor for the next, older page (null: there is none)."
              + " Optionally only items in one state. Reads only.",
      inputSchema = @Tool.InputSchema(generator = AgentSchemas.Mine.class),
      annotations =
          @Tool.Annotations(
              title = "List my work",
              readOnlyHint = true,
              destructiveHint = false,
              idempotentHint = true,
              openWorldHint = false))
  ToolResponse listMyWork(RawMessage message) {
    return answer(
        () -> {
          MineArguments asked = arguments.read(arguments.of(message), MineArguments.class);
          var page = agents.enqueuedByMe(asked.state(), asked.limit(), asked.cursor());
          List<Work> items = page.items().stream().map(Work::of).toList();
          return success(
              items.size()
                  + (items.size() == 1 ? " item" : " items")
                  + (page.nextCursor() == null
                      ? "; no more."
                      : "; more with cursor " + page.nextCursor() + "."),
              new Work.Page(items, page.nextCursor()));
        });
  }

  /** A tool's work, which may refuse with anything the API refuses with. */
  private interface Call {
    ToolResponse answer() throws IOException;
  }

  /**
   * The key must be an agent's before anything else is looked at; every refusal is answered as a
   * tool error with the API's detail and, as structured content, its whole problem.
   */
  private ToolResponse answer(Call call) {
    try {
      // As on the REST API: nothing is read or written by an instance older than its schema.
      schemaGate.requireCurrent();
      agents.requireAgent();
      return call.answer();
    } catch (Exception e) {
      Problem problem = ProblemMappers.problemOf(e);
      return new ToolResponse(true, List.of(new TextContent(problem.detail())), problem, null);
    }
  }

  /**
   * A short sentence for a reader, then the answer as JSON, which is also the structured content.
   */
  private ToolResponse success(String summary, Object answer) throws JsonProcessingException {
    return new ToolResponse(
        false,
        List.of(new TextContent(summary + "\n" + json.writeValueAsString(answer))),
        answer,
        null);
  }
}
