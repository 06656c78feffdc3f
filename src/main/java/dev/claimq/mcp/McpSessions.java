package dev.claimq.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import dev.claimq.config.ClaimqConfig;
import io.quarkiverse.mcp.server.runtime.ConnectionManager;
import io.quarkus.security.identity.SecurityIdentity;
import io.quarkus.vertx.http.runtime.security.QuarkusHttpUser;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Provider;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;

/**
 * Ties an MCP session to the API key that opened it. The extension knows a session by its id alone,
 * so any valid key that had the id could call tools in it or end it with DELETE. Here a session id
 * sent with another key than its own is answered exactly as an id the service does not know
 * (McpTransportFailures' 404): it neither reveals the session nor touches it.
 *
 * <p>It also bounds the sessions one key holds open. The extension keeps a session until it has
 * been idle for 30 minutes, and one client opened 10,000 in 23 s. At the bound, an initialize ends
 * the key's least recently used session with no request or stream in progress, if that one has been
 * idle for claimq.mcp.reclaim-idle-session-after (MCP lets a server end a session: its client meets
 * a 404 and initializes again), and is refused (429) if none has. The official SDKs close a client
 * without ending its session, so a script that connects often would otherwise lock its key out for
 * 30 minutes.
 */
@ApplicationScoped
public class McpSessions {
  // After McpEnvelope (-50), whose refusals of a broken body come first for an unknown session as
  // well, and before the extension's routes (from 0).
  private static final int AFTER_ENVELOPE = -40;

  private final ConnectionManager connections;
  private final Provider<ClaimqConfig> config; // not yet readable when the router is built

  /** The most sessions one key may hold open. */
  static final int MAX_SESSIONS_PER_KEY = 100;

  /** Each open session's id, and the name of the key that opened it. */
  private final Map<String, String> owners = new ConcurrentHashMap<>();

  /** Each key's sessions, by the name of the key; each guarded by its own lock. */
  private final Map<String, KeySessions> byKey = new ConcurrentHashMap<>();

  /**
   * A key's open sessions, least recently used first, each with the nanoTime its last request began
   * or ended; those with requests or streams in progress; and its initializes under way, whose
   * sessions are not named yet.
   */
  private static final class KeySessions {
    final LinkedHashMap<String, Long> lastUsed = new LinkedHashMap<>();

    /** Requests and streams in progress, by session. */
    final Map<String, Integer> inUse = new HashMap<>();

    int opening;
  }

  McpSessions(ConnectionManager connections, Provider<ClaimqConfig> config) {
    this.connections = connections;
    this.config = config;
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
    int named = context.request().headers().getAll(McpTransportFailures.SESSION_HEADER).size();
    if (named > 1) {
      // Read as the first, it could pass the ownership check while the extension read another.
      McpEnvelope.refuseProblem(
          context,
          400,
          "Bad Request",
          "The request has "
              + named
              + " Mcp-Session-Id headers: send one, the id of the session it belongs to.");
      return;
    }
    String session = context.request().getHeader(McpTransportFailures.SESSION_HEADER);
    if (session == null) {
      JsonNode message = context.get(McpEnvelope.MESSAGE);
      if (message != null
          && any(message, McpSessions::isRequest)
          && !any(message, McpSessions::isInitialize)) {
        // Streamable HTTP: a server that needs sessions answers such a request 400. The
        // extension answered 200 with "method not found", which reads as an unknown method.
        McpEnvelope.refuseProblem(
            context,
            400,
            "Bad Request",
            "The request has no Mcp-Session-Id, and every request but initialize belongs to a"
                + " session: send initialize first (without Mcp-Session-Id), then the id its"
                + " answer gives in the Mcp-Session-Id header of every request after it.");
        return;
      }
      // The extension opens a session for a POST without one, whatever it holds (an
      // initialize, alone or in a batch): each such POST counts against the key's bound.
      if (context.request().method() == HttpMethod.POST && !opening(context, key)) {
        return;
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
    if (!using(key, session)) {
      context.fail(404); // ended a moment ago to make room for another of the key's sessions
      return;
    }
    // A request, or a stream, in progress: the session is in use until it ends.
    context.addEndHandler(ended -> done(key, session));
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

  /**
   * Counts an initialize (a POST without a session) against its key's bound, and names the session
   * the extension opens for it, if any, as it answers. False when refused: at the bound.
   */
  private boolean opening(RoutingContext context, String key) {
    KeySessions sessions = byKey.computeIfAbsent(key, k -> new KeySessions());
    Duration idleTime = config.get().mcp().reclaimIdleSessionAfter();
    long reclaimAfter = idleTime.toNanos();
    int open;
    String reclaimed = null;
    long untilReclaimable = 0;
    synchronized (sessions) {
      // Sessions ended while idle are the extension's to forget; here they are found, one key's
      // at a time, by its next initialize.
      sessions
          .lastUsed
          .keySet()
          .removeIf(
              id -> {
                if (connections.has(id)) {
                  return false;
                }
                owners.remove(id);
                return true;
              });
      open = sessions.lastUsed.size() + sessions.opening;
      if (open >= MAX_SESSIONS_PER_KEY) {
        // The least recently used session with no request or stream in progress, if any. With
        // none, the wait is a whole idle time, or a moment when initializes under way may fail.
        untilReclaimable = sessions.opening > 0 ? 0 : reclaimAfter;
        for (Map.Entry<String, Long> session : sessions.lastUsed.entrySet()) {
          if (sessions.inUse.containsKey(session.getKey())) {
            continue;
          }
          long idle = System.nanoTime() - session.getValue();
          if (idle >= reclaimAfter) {
            reclaimed = session.getKey();
          } else {
            untilReclaimable = reclaimAfter - idle;
          }
          break;
        }
        if (reclaimed != null) {
          sessions.lastUsed.remove(reclaimed);
          owners.remove(reclaimed);
          open--;
        }
      }
      if (open < MAX_SESSIONS_PER_KEY) {
        sessions.opening++;
      }
    }
    if (reclaimed != null) {
      connections.remove(reclaimed); // its next request meets the 404, and initializes again
    }
    if (open >= MAX_SESSIONS_PER_KEY) {
      long seconds = Math.max(1, (untilReclaimable + 999_999_999) / 1_000_000_000);
      context.response().putHeader("Retry-After", Long.toString(seconds));
      McpEnvelope.refuseProblem(
          context,
          429,
          "Too many sessions",
          "This key has "
              + MAX_SESSIONS_PER_KEY
              + " MCP sessions open or opening, the most one key may hold, and none has been idle"
              + " for "
              + idleTime.toSeconds()
              + " s (one with a request or a stream open is in use): end one you no longer use"
              + " (DELETE /mcp with its Mcp-Session-Id), or reuse it. One idle that long is"
              + " ended to open a new one (in "
              + seconds
              + " s at the earliest, as Retry-After says).");
      return false;
    }
    // Settled once, with the session the answer names: as its headers go out, or at the end of a
    // request that never got that far (its connection closed), which may still have opened one.
    AtomicBoolean settled = new AtomicBoolean();
    Runnable settle =
        () ->
            settle(
                key,
                sessions,
                context.response().headers().get(McpTransportFailures.SESSION_HEADER),
                settled);
    context.addHeadersEndHandler(ended -> settle.run());
    context.addEndHandler(ended -> settle.run());
    return true;
  }

  /** Whether the message, or a message of the batch, is one of these. */
  private static boolean any(JsonNode message, Predicate<JsonNode> kind) {
    if (!message.isArray()) {
      return kind.test(message);
    }
    for (JsonNode each : message) {
      if (kind.test(each)) {
        return true;
      }
    }
    return false;
  }

  /** A request, not a notification. */
  private static boolean isRequest(JsonNode message) {
    return message.has("method") && message.has("id");
  }

  private static boolean isInitialize(JsonNode message) {
    return "initialize".equals(message.path("method").textValue());
  }

  /** How many sessions the key (by its name) holds open now. */
  int open(String key) {
    KeySessions sessions = byKey.get(key);
    if (sessions == null) {
      return 0;
    }
    synchronized (sessions) {
      return (int) sessions.lastUsed.keySet().stream().filter(connections::has).count();
    }
  }

  /**
   * Marks the key's session as in use from now until done: the last to be ended to make room for
   * another, and never while in use. False when it was ended (for room) since it was checked.
   */
  private boolean using(String key, String session) {
    KeySessions sessions = byKey.get(key);
    if (sessions == null) {
      return true;
    }
    synchronized (sessions) {
      if (!usedNow(sessions, session)) {
        return false;
      }
      sessions.inUse.merge(session, 1, Integer::sum);
      return true;
    }
  }

  /** A request or a stream of the session ended: it was last used now. */
  private void done(String key, String session) {
    KeySessions sessions = byKey.get(key);
    if (sessions == null) {
      return;
    }
    synchronized (sessions) {
      sessions.inUse.computeIfPresent(session, (id, n) -> n == 1 ? null : n - 1);
      usedNow(sessions, session);
    }
  }

  /**
   * Moves the session to the end of its key's order, used now; false when it is not there (ended).
   * The caller holds the key's lock.
   */
  private static boolean usedNow(KeySessions sessions, String session) {
    if (sessions.lastUsed.remove(session) == null) {
      return false;
    }
    sessions.lastUsed.put(session, System.nanoTime());
    return true;
  }

  private void settle(String key, KeySessions sessions, String opened, AtomicBoolean settled) {
    if (!settled.compareAndSet(false, true)) {
      return;
    }
    synchronized (sessions) {
      sessions.opening--;
      if (opened != null) {
        owners.put(opened, key);
        sessions.lastUsed.put(opened, System.nanoTime());
      }
    }
  }
}
