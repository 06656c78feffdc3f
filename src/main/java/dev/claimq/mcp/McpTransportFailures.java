package dev.claimq.mcp;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.claimq.api.AcceptableAnswers;
import dev.claimq.api.Problem;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.ws.rs.core.MediaType;
import java.util.List;

/**
 * Says what is wrong when the MCP extension refuses a request with a bare status: a session id the
 * service does not know (404). Without this, the generic problem sent the client to the REST API's
 * documentation. A POST whose Accept header does not take both types Streamable HTTP answers with
 * is refused before the extension reads it (McpEnvelope, by {@link #whyNotAcceptable}): the
 * extension looks only for the two names, so it took "application/json;q=0" as a yes.
 */
@ApplicationScoped
public class McpTransportFailures {
  static final String SESSION_HEADER = "Mcp-Session-Id";

  private final ObjectMapper json;

  McpTransportFailures(ObjectMapper json) {
    this.json = json;
  }

  void answerFirst(@Observes Router router) {
    router.route("/mcp").order(Integer.MIN_VALUE).failureHandler(this::explain);
  }

  private void explain(RoutingContext context) {
    if (context.failure() != null || context.response().headWritten()) {
      context.next(); // not one of the extension's bare refusals
      return;
    }
    if (context.statusCode() == 404 && context.request().getHeader(SESSION_HEADER) != null) {
      answer(
          context,
          404,
          "Not Found",
          "There is no MCP session with this Mcp-Session-Id (it was ended, or the service"
              + " restarted): send initialize again, without Mcp-Session-Id, for a new session.");
    } else {
      context.next();
    }
  }

  /**
   * Null when a POST with these Accept header lines takes both answers of Streamable HTTP; else the
   * detail of its 406, the REST API's status for an Accept header that excludes its answer. The
   * transport asks the client to list both application/json and text/event-stream, and a weight of
   * 0 says "not acceptable", as it does to the REST API (AcceptableAnswers): a type listed only
   * with q=0 is not taken. Each must also be written as here, in lower case: the extension, which
   * reads the request next, looks for these very strings.
   */
  static String whyNotAcceptable(List<String> accept) {
    String both =
        "list both application/json and text/event-stream, neither with q=0: MCP's Streamable"
            + " HTTP answers a POST with either.";
    if (accept.isEmpty()) {
      return "The request has no Accept header: " + both;
    }
    String header = String.join(", ", accept);
    if (takes(header, MediaType.APPLICATION_JSON_TYPE)
        && takes(header, MediaType.SERVER_SENT_EVENTS_TYPE)) {
      return null;
    }
    return "The Accept header " + AcceptableAnswers.quoted(header) + " does not take both: " + both;
  }

  private static boolean takes(String accept, MediaType type) {
    return accept.contains(type.getType() + "/" + type.getSubtype())
        && AcceptableAnswers.lists(accept, type);
  }

  private void answer(RoutingContext context, int status, String title, String detail) {
    String body;
    try {
      body = json.writeValueAsString(new Problem("about:blank", title, status, detail, null));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e); // a record of strings always writes
    }
    context
        .response()
        .setStatusCode(status)
        .putHeader("Content-Type", Problem.MEDIA_TYPE)
        .end(body);
  }
}
