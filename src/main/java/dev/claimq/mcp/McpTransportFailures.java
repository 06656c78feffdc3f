package dev.claimq.mcp;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.claimq.api.Problem;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.List;

/**
 * Says what is wrong when the MCP extension refuses a request with a bare status: a POST whose
 * Accept header lacks one of the two types Streamable HTTP answers with (400), and a session id the
 * service does not know (404). Without this, the generic problem said only "Bad Request." or sent
 * the client to the REST API's documentation.
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
    int status = context.statusCode();
    if (status == 400
        && context.request().method() == HttpMethod.POST
        && !acceptsBoth(context.request().headers().getAll(HttpHeaders.ACCEPT))) {
      answer(
          context,
          400,
          "Bad Request",
          "The Accept header must list both application/json and text/event-stream: MCP's"
              + " Streamable HTTP answers a POST with either.");
    } else if (status == 404 && context.request().getHeader(SESSION_HEADER) != null) {
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

  /** As the extension reads the header: each type named anywhere in any of its values. */
  private static boolean acceptsBoth(List<String> accept) {
    return accept.stream().anyMatch(value -> value.contains("application/json"))
        && accept.stream().anyMatch(value -> value.contains("text/event-stream"));
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
