package dev.claimq.mcp;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.claimq.api.Problem;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

/**
 * Takes the MCP extension's old HTTP/SSE transport (MCP 2024-11-05: GET /mcp/sse, then POST
 * /mcp/messages/{id}) off the air: 404, as for any path the service does not serve. The extension
 * always serves it, with no setting to turn it off, and its messages bypass McpEnvelope (a batch or
 * params of the wrong shape were a 500 there); agents use Streamable HTTP at /mcp (README, Agents).
 */
@ApplicationScoped
public class McpSseTransportOff {
  // After the key is checked, as on /mcp, and before the extension's routes (from 0).
  private static final int AFTER_AUTHORIZATION = -50;

  private final ObjectMapper json;

  McpSseTransportOff(ObjectMapper json) {
    this.json = json;
  }

  void answerFirst(@Observes Router router) {
    router.route("/mcp/sse").order(AFTER_AUTHORIZATION).handler(this::notFound);
    router.route("/mcp/messages/*").order(AFTER_AUTHORIZATION).handler(this::notFound);
  }

  private void notFound(RoutingContext context) {
    Problem problem =
        new Problem(
            "about:blank",
            "Not Found",
            404,
            "There is no such resource; MCP is served at /mcp, over Streamable HTTP.",
            null);
    String body;
    try {
      body = json.writeValueAsString(problem);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e); // a record of strings always writes
    }
    context.response().setStatusCode(404).putHeader("Content-Type", Problem.MEDIA_TYPE).end(body);
  }
}
