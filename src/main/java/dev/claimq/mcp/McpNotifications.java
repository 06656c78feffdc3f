package dev.claimq.mcp;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import io.quarkiverse.mcp.server.McpConnection;
import io.quarkiverse.mcp.server.runtime.ConnectionManager;
import io.quarkiverse.mcp.server.runtime.McpConnectionBase;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Keeps from the MCP extension the notifications it would answer: JSON-RPC 2.0 forbids answering a
 * notification, and Streamable HTTP answers a POST of notifications alone with 202 and no body. The
 * extension answers a notification it does not know (notifications/whatever), or one not expected
 * in the session's state (a second notifications/initialized), with a -32601 error whose id is
 * null, in a batch beside its requests' answers too. Those are taken and ignored here: a POST of
 * them alone is a 202 with no body, and a batch goes on without them, its requests answered.
 */
@ApplicationScoped
public class McpNotifications {
  // After McpSessions (-40): the session is known to be this key's, or there is none.
  private static final int AFTER_SESSIONS = -30;

  /** What the extension takes without an answer while a session is being initialized. */
  private static final Set<String> WHILE_INITIALIZING = Set.of("notifications/initialized");

  /** What the extension takes without an answer in an initialized session. */
  private static final Set<String> IN_OPERATION =
      Set.of(
          "notifications/cancelled", "notifications/progress", "notifications/roots/list_changed");

  private static final JsonFactory JSON = new JsonFactory();

  private final ConnectionManager connections;

  McpNotifications(ConnectionManager connections) {
    this.connections = connections;
  }

  void checkFirst(@Observes Router router) {
    router.route(HttpMethod.POST, "/mcp").order(AFTER_SESSIONS).handler(this::drop);
  }

  private void drop(RoutingContext context) {
    JsonNode body = context.get(McpEnvelope.MESSAGE);
    if (body == null) {
      context.next();
      return;
    }
    Set<String> taken = taken(context.request().getHeader(McpTransportFailures.SESSION_HEADER));
    if (!body.isArray()) {
      if (ignored(body, taken)) {
        context.response().setStatusCode(202).end();
      } else {
        context.next();
      }
      return;
    }
    List<Integer> kept = new ArrayList<>();
    for (int at = 0; at < body.size(); at++) {
      if (!ignored(body.get(at), taken)) {
        kept.add(at);
      }
    }
    if (kept.isEmpty()) {
      context.response().setStatusCode(202).end();
      return;
    }
    if (kept.size() < body.size()) {
      // The messages kept, as sent, for the extension to read (tools find their arguments by
      // id in the tree McpEnvelope read, which still holds them all).
      context.setBody(Buffer.buffer(only(context.body().buffer().getBytes(), kept)));
    }
    context.next();
  }

  /** The notifications the extension takes, without answering, in this session's state. */
  private Set<String> taken(String session) {
    McpConnectionBase connection = session == null ? null : connections.get(session);
    if (connection == null) {
      return Set.of(); // an initialize, or a session McpSessions has refused
    }
    McpConnection.Status status = connection.status();
    return switch (status) {
      case INITIALIZING -> WHILE_INITIALIZING;
      case IN_OPERATION -> IN_OPERATION;
      default -> Set.of();
    };
  }

  /** A notification the extension would answer, or one it need not see. */
  private static boolean ignored(JsonNode message, Set<String> taken) {
    return message.has("method")
        && !message.has("id")
        && !taken.contains(message.path("method").textValue());
  }

  /** The batch of these messages of a batch, each written as it was sent. */
  private static String only(byte[] bytes, List<Integer> kept) {
    String text = new String(bytes, StandardCharsets.UTF_8);
    if (text.startsWith("\uFEFF")) {
      text = text.substring(1); // McpEnvelope has read past it
    }
    StringBuilder batch = new StringBuilder("[");
    try (JsonParser parser = JSON.createParser(text)) {
      parser.nextToken(); // the batch's [
      int at = 0;
      while (parser.nextToken() == JsonToken.START_OBJECT) {
        int start = (int) parser.currentTokenLocation().getCharOffset();
        parser.skipChildren();
        int end = (int) parser.currentTokenLocation().getCharOffset() + 1;
        if (kept.contains(at++)) {
          batch.append(batch.length() == 1 ? "" : ",").append(text, start, end);
        }
      }
    } catch (IOException e) {
      throw new IllegalStateException("a batch McpEnvelope has read does not parse again", e);
    }
    return batch.append(']').toString();
  }
}
