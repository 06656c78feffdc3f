package dev.claimq.api;

import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

/**
 * Keeps every answer of the API and of MCP out of caches (every answer but the console's files and
 * Quarkus's own pages). Items carry payloads (addresses, card tokens) and failure reasons, and a
 * proxy or browser that kept them would hand them to whoever asks next. Conditional reads still
 * work: a client sends the ETag it read as If-None-Match.
 */
@Singleton
public class NoStore {
  static final String VALUE = "no-store";

  void install(@Observes Router router) {
    // First of all routes, so that every answer carries it, refusals before authentication too.
    router.route().order(Integer.MIN_VALUE).handler(NoStore::mark);
  }

  private static void mark(RoutingContext context) {
    if (holdsData(context.normalizedPath())) {
      context.addHeadersEndHandler(
          ended -> context.response().headers().set(HttpHeaders.CACHE_CONTROL, VALUE));
    }
    context.next();
  }

  /**
   * Everything but the console's files and Quarkus's own pages (health, metrics, the API document
   * and its UI): an allow-list of the API's paths would miss a spelling that reaches it anyway.
   */
  private static boolean holdsData(String path) {
    return path == null || !(path.startsWith("/console") || path.startsWith("/q/"));
  }
}
