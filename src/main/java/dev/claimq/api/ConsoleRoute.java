package dev.claimq.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.claimq.telemetry.LogText;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

/**
 * Sends /console to /console/, where the console's static files are served: the page's relative
 * links (its script and style sheet) only resolve from the directory. The files are served to GET
 * and HEAD only; another method on one of them is a 405 problem with an Allow header, as on the
 * API, rather than the 404 ("no such resource") that the request met when it fell through to the
 * API's routes.
 */
@Singleton
public class ConsoleRoute {
  private static final Logger LOG = Logger.getLogger(ConsoleRoute.class);

  /** Before the extensions' routes (from 0), the static files' among them. */
  private static final int BEFORE_STATIC_FILES = -50;

  private static final String ALLOWED = "GET, HEAD";

  private final ObjectMapper json;

  ConsoleRoute(ObjectMapper json) {
    this.json = json;
  }

  void install(@Observes Router router) {
    router
        .get("/console")
        .handler(
            context -> {
              // Vert.x matches the route "/console" for "/console/" too: that is the directory.
              if (!context.request().path().equals("/console")) {
                context.next();
                return;
              }
              // Relative, so that it holds behind a proxy or under another root path.
              context.response().setStatusCode(301).putHeader("Location", "console/").end();
            });
    router.route("/console*").order(BEFORE_STATIC_FILES).handler(this::otherMethods);
  }

  private void otherMethods(RoutingContext context) {
    HttpMethod method = context.request().method();
    if (method == HttpMethod.GET || method == HttpMethod.HEAD || !isConsoleFile(context)) {
      context.next();
      return;
    }
    String detail =
        "The console's files are read with GET (or HEAD) only, not with "
            + LogText.oneLine(LogText.shortened(method.name()))
            + ".";
    LOG.debugf("405 Method Not Allowed: %s", detail);
    context
        .response()
        .setStatusCode(405)
        .putHeader(HttpHeaders.ALLOW, ALLOWED)
        .putHeader(HttpHeaders.CONTENT_TYPE, Problem.MEDIA_TYPE)
        .end(
            Buffer.buffer(
                body(Problem.of(405, "about:blank", "Method Not Allowed", detail, null))));
  }

  /** /console, its directory, or a file the console serves from under it. */
  private static boolean isConsoleFile(RoutingContext context) {
    String path = context.normalizedPath();
    if (path.equals("/console") || path.equals("/console/")) {
      return true;
    }
    if (!path.startsWith("/console/") || path.endsWith("/")) {
      return false;
    }
    return Thread.currentThread().getContextClassLoader().getResource("META-INF/resources" + path)
        != null;
  }

  private byte[] body(Problem problem) {
    try {
      return json.writeValueAsBytes(problem);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e); // a record of strings and an int always serializes
    }
  }
}
