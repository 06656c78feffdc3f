package dev.claimq.mcp;

import io.quarkiverse.mcp.server.runtime.ConnectionManager;
import io.quarkus.security.identity.SecurityIdentity;
import io.quarkus.vertx.http.runtime.security.QuarkusHttpUser;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Ties an MCP session to the API key that opened it. The extension knows a session by its id alone,
 * so any valid key that had the id could call tools in it or end it with DELETE. Here a session id
 * sent with another key than its own is answered exactly as an id the service does not know
 * (McpTransportFailures' 404): it neither reveals the session nor touches it.
 */
@ApplicationScoped
public class McpSessions {
  // After McpEnvelope (-50), whose refusals of a broken body come first for an unknown session as
  // well, and before the extension's routes (from 0).
  private static final int AFTER_ENVELOPE = -40;

  private final ConnectionManager connections;

  /** Each open session's id, and the name of the key that opened it. */
  private final Map<String, String> owners = new ConcurrentHashMap<>();

  McpSessions(ConnectionManager connections) {
    this.connections = connections;
  }

  void checkFirst(@Observes Router router) {
    for (HttpMethod method :
        new HttpMethod[] {HttpMethod.GET, HttpMethod.POST, HttpMethod.DELETE}) {
      router.route(method, "/mcp").order(AFTER_ENVELOPE).handler(this::check);
    }
  }

  private void check(RoutingContext context) {
    Uni<SecurityIdentity> identity = context.get(QuarkusHttpUser.DEFERRED_IDENTITY_KEY);
    if (identity == null) {
      context.next(); // no key: refused before (McpAuthFailures)
      return;
    }
    identity
        .subscribe()
        .with(
            found -> check(context, found.getPrincipal().getName()),
            failure -> {
              if (!context.failed() && !context.response().headWritten()) {
                context.fail(failure);
              }
            });
  }

  private void check(RoutingContext context, String key) {
    String session = context.request().getHeader(McpTransportFailures.SESSION_HEADER);
    if (session == null) {
      if (context.request().method() == HttpMethod.POST) {
        // An initialize: the extension names the new session in its answer's header.
        context.addHeadersEndHandler(
            ended -> {
              String opened = context.response().headers().get(McpTransportFailures.SESSION_HEADER);
              if (opened != null) {
                owners.keySet().removeIf(id -> !connections.has(id)); // ended while idle
                owners.put(opened, key);
              }
            });
      }
      context.next();
      return;
    }
    if (!connections.has(session)) {
      owners.remove(session);
    }
    if (!key.equals(owners.get(session))) {
      context.fail(404); // as the extension answers an id it does not know
      return;
    }
    if (context.request().method() == HttpMethod.DELETE) {
      context.addHeadersEndHandler(
          ended -> {
            if (!connections.has(session)) {
              owners.remove(session);
            }
          });
    }
    context.next();
  }
}
