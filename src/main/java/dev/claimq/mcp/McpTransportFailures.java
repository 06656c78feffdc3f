package dev.claimq.mcp;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.claimq.api.AcceptableAnswers;
import dev.claimq.api.AmbiguousRequests;
import dev.claimq.api.Problem;
import io.quarkiverse.mcp.server.runtime.McpMessageHandler;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.ws.rs.core.MediaType;
import java.util.List;
import java.util.Locale;
import java.util.Set;

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
  private static final String PROTOCOL_HEADER = "MCP-Protocol-Version";
  private static final List<String> SUPPORTED_VERSIONS =
      McpMessageHandler.SUPPORTED_PROTOCOL_VERSIONS;
  private static final Set<HttpMethod> ALLOWED =
      Set.of(HttpMethod.GET, HttpMethod.POST, HttpMethod.DELETE);
  private static final String ALLOW = "GET, POST, DELETE";

  /** An Accept header that takes both answers, as the extension looks for them. */
  static final String BOTH = "application/json, text/event-stream";

  // After McpEnvelope (-50), whose refusals of a POST's body come first, and before McpSessions.
  private static final int AFTER_ENVELOPE = -45;

  // After the key is checked (-100) and before McpEnvelope (-50) reads the body.
  private static final int BEFORE_ENVELOPE = -55;

  private final ObjectMapper json;

  McpTransportFailures(ObjectMapper json) {
    this.json = json;
  }

  void answerFirst(@Observes Router router) {
    router.route("/mcp").order(Integer.MIN_VALUE).failureHandler(this::explain);
    router.route("/mcp*").order(BEFORE_ENVELOPE).handler(this::refuseBrowsers);
    router.route("/mcp").order(AFTER_ENVELOPE).handler(this::refuseEarly);
  }

  /**
   * The transport's refusals that the extension answers with a bare status (a 400 "Bad Request.", a
   * 405 without Allow, a 404 that points at the REST API's documentation): each is answered here
   * first, saying what is wrong and what to do, with the status the Streamable HTTP spec gives it.
   */
  /**
   * Streamable HTTP: a server must validate Origin, against DNS rebinding (a page whose host name
   * comes to point at this service reaches it through a visitor's browser, from inside the
   * network). No page is served /mcp, and none may call it cross-origin (no CORS), so every Origin
   * is refused, before the body is read: agents' programs send none.
   */
  private void refuseBrowsers(RoutingContext context) {
    if (!context.request().headers().contains(HttpHeaders.ORIGIN)) {
      context.next();
      return;
    }
    answer(
        context,
        403,
        "Forbidden",
        "/mcp serves MCP clients, not web pages: a request with an Origin header, which"
            + " browsers send, is refused, so that no page can call it through a visitor's"
            + " browser. Call it from a program (an MCP client sends no Origin).");
  }

  private void refuseEarly(RoutingContext context) {
    HttpMethod method = context.request().method();
    if (!ALLOWED.contains(method)) {
      context.response().putHeader(HttpHeaders.ALLOW, ALLOW);
      answer(
          context,
          405,
          "Method Not Allowed",
          "/mcp does not take "
              + method.name()
              + ": it takes POST (JSON-RPC messages, an initialize first), GET (the stream of a"
              + " session's messages from the server) and DELETE (ends a session).");
      return;
    }
    List<String> versions = context.request().headers().getAll(PROTOCOL_HEADER);
    if (!versions.isEmpty()
        && (versions.size() > 1 || !SUPPORTED_VERSIONS.contains(versions.get(0)))) {
      answer(
          context,
          400,
          "Bad Request",
          "The MCP-Protocol-Version header "
              + AcceptableAnswers.quoted(String.join(", ", versions))
              + " is not one version this server speaks: send the version initialize agreed on,"
              + " one of "
              + String.join(", ", SUPPORTED_VERSIONS)
              + ".");
      return;
    }
    if (method != HttpMethod.POST && context.request().getHeader(SESSION_HEADER) == null) {
      answer(
          context,
          400,
          "Bad Request",
          (method == HttpMethod.GET
                  ? "GET /mcp opens the stream of a session's messages from the server"
                  : "DELETE /mcp ends a session")
              + ": send the session's Mcp-Session-Id header, from the answer to its initialize"
              + " (POST initialize without one to open a session).");
      return;
    }
    if (method != HttpMethod.POST
        && AmbiguousRequests.declaresBody(
            context.request().getHeader(HttpHeaders.TRANSFER_ENCODING),
            context.request().getHeader(HttpHeaders.CONTENT_LENGTH))) {
      // An ended session would drop what the body said, as the API's calls without a body refuse.
      answer(
          context,
          400,
          "Bad Request",
          method.name() + " /mcp takes no body: send it without one (Content-Length: 0, or none).");
      return;
    }
    if (method == HttpMethod.GET) {
      String unacceptable = whyNoStream(context.request().headers().getAll(HttpHeaders.ACCEPT));
      if (unacceptable != null) {
        answer(context, 406, "Not Acceptable", unacceptable);
        return;
      }
    }
    // A proxy that buffers answers (nginx does, by default) would hold a stream of events back
    // until it ends, which a session's stream never does: this header asks nginx not to.
    context.addHeadersEndHandler(
        ended -> {
          String type = context.response().headers().get(HttpHeaders.CONTENT_TYPE);
          if (type != null && type.startsWith("text/event-stream")) {
            context.response().putHeader("X-Accel-Buffering", "no");
          }
        });
    context.next();
  }

  /**
   * Null when a GET with these Accept header lines takes the stream it opens; else the detail of
   * its 406. Streamable HTTP asks the client to list text/event-stream; the extension opened the
   * stream whatever the header said, application/json alone included.
   */
  static String whyNoStream(List<String> accept) {
    String list =
        "GET /mcp answers a stream of server-sent events: list text/event-stream, not with q=0.";
    if (accept.isEmpty()) {
      return "The request has no Accept header: " + list;
    }
    String header = String.join(", ", accept);
    String badWeight = AcceptableAnswers.badWeight(header);
    if (badWeight != null) {
      return badWeight;
    }
    return takes(header, MediaType.SERVER_SENT_EVENTS_TYPE)
        ? null
        : "The Accept header " + AcceptableAnswers.quoted(header) + " does not take it: " + list;
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
          "There is no MCP session with this Mcp-Session-Id on this instance (it was ended,"
              + " the instance restarted, or the session is another instance's: sessions live"
              + " in the instance that opened them): send initialize again, without"
              + " Mcp-Session-Id, for a new session.");
    } else {
      context.next();
    }
  }

  /**
   * Null when a POST with these Accept header lines takes both answers of Streamable HTTP; else the
   * detail of its 406, the REST API's status for an Accept header that excludes its answer. The
   * transport asks the client to list both application/json and text/event-stream, and a weight of
   * 0 says "not acceptable", as it does to the REST API (AcceptableAnswers): a type listed only
   * with q=0 is not taken. Either may be written in any case, though the extension, which reads the
   * request next, looks for these very strings: media types are read without regard to case (RFC
   * 9110, 8.3.1), so McpEnvelope hands it the header in these words.
   */
  static String whyNotAcceptable(List<String> accept) {
    String both =
        "list both application/json and text/event-stream, neither with q=0: MCP's Streamable"
            + " HTTP answers a POST with either.";
    if (accept.isEmpty()) {
      return "The request has no Accept header: " + both;
    }
    String header = String.join(", ", accept);
    String badWeight = AcceptableAnswers.badWeight(header);
    if (badWeight != null) {
      return badWeight;
    }
    if (takes(header, MediaType.APPLICATION_JSON_TYPE)
        && takes(header, MediaType.SERVER_SENT_EVENTS_TYPE)) {
      return null;
    }
    return "The Accept header " + AcceptableAnswers.quoted(header) + " does not take both: " + both;
  }

  private static boolean takes(String accept, MediaType type) {
    return accept.toLowerCase(Locale.ROOT).contains(type.getType() + "/" + type.getSubtype())
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
