package dev.claimq.mcp;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.claimq.api.Problem;
import dev.claimq.api.ProblemMappers;
import dev.claimq.api.SchemaGate;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.Optional;

/**
 * Refuses every MCP request, initialize and tools/list included, with the REST API's 503
 * schema-newer once a newer release has migrated the schema under this instance (SchemaGate). An
 * HTTP 503, not a tool error: an agent's client, or the load balancer in front of it, then goes to
 * another instance, where the session's id is unknown (404), and opens a new session there, as
 * Streamable HTTP asks. A tool error would keep the agent on this instance, retrying.
 */
@ApplicationScoped
public class McpSchemaGate {
  // After the key is checked (Quarkus's authorization runs at -100), before the body is read (-50).
  private static final int BEFORE_ENVELOPE = -60;

  private final SchemaGate gate;
  private final ObjectMapper json;

  McpSchemaGate(SchemaGate gate, ObjectMapper json) {
    this.gate = gate;
    this.json = json;
  }

  void checkFirst(@Observes Router router) {
    router.route("/mcp*").order(BEFORE_ENVELOPE).handler(this::refuseOnNewerSchema);
  }

  private void refuseOnNewerSchema(RoutingContext context) {
    Optional<Problem> problem = gate.problem();
    if (problem.isEmpty()) {
      context.next();
      return;
    }
    String body;
    try {
      body = json.writeValueAsString(problem.get());
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e); // a record of strings and an int always writes
    }
    context
        .response()
        .setStatusCode(problem.get().status())
        .putHeader(HttpHeaders.CONTENT_TYPE, Problem.MEDIA_TYPE)
        .putHeader("Retry-After", ProblemMappers.RETRY_AFTER_SECONDS)
        .end(body);
  }
}
