package dev.claimq.api;

import dev.claimq.telemetry.ItemLog;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.core.UriInfo;
import org.jboss.logging.MDC;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;
import org.jboss.resteasy.reactive.server.ServerResponseFilter;

/**
 * The item or queue a request names, as log fields for every line the request logs (a refusal among
 * them), before any use case has read the item; the use case's answer adds the rest.
 */
class LogContext {

  @ServerRequestFilter
  void fromPath(UriInfo uri) {
    MultivaluedMap<String, String> path = uri.getPathParameters(); // a new copy on every call
    String id = path.getFirst("id");
    String queue = path.getFirst("queue");
    if (id != null) {
      MDC.put("itemId", id);
    }
    if (queue != null) {
      MDC.put("queue", queue);
    }
  }

  @ServerResponseFilter
  void clear(ContainerRequestContext request) {
    ItemLog.clear();
  }
}
