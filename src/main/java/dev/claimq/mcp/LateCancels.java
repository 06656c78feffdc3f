package dev.claimq.mcp;

import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.logging.Filter;
import java.util.logging.Logger;
import org.jboss.logmanager.Level;

/**
 * Lowers to DEBUG the MCP extension's WARN about a notifications/cancelled for a request it is not
 * running: one it never saw, one answered already, or one cancelled before. MCP expects a cancel to
 * cross its request's answer on the wire, and asks the receiver to ignore it then; the extension
 * does, and answers 202 as for any notification, but warns as if the service were at fault.
 *
 * <p>No check before the extension can tell these apart from a cancel of a running request: which
 * requests run is the extension's own state, and changes while the notification is on its way. So
 * the one line is lowered where it is logged, on its own logger: every other line of that logger
 * keeps its level, and with that logger at DEBUG the line is there to see.
 */
@ApplicationScoped
class LateCancels {
  static final String CATEGORY = "io.quarkiverse.mcp.server.runtime.McpMessageHandler";

  /** The line's format, as the extension (1.13) writes it, with the id and session after. */
  private static final String IGNORED = "Ignored unknown/completed/invalid cancel request";

  // Held here, so that the logger, and the filter set on it, outlive any collection.
  private static final Logger LOGGER = Logger.getLogger(CATEGORY);

  void lower(@Observes StartupEvent started) {
    Filter others = LOGGER.getFilter();
    LOGGER.setFilter(
        record -> {
          if (record.getLevel() == Level.WARN
              && record.getMessage() != null
              && record.getMessage().startsWith(IGNORED)) {
            record.setLevel(Level.DEBUG);
            // Its level was checked as WARN: it goes on only where DEBUG would.
            if (!LOGGER.isLoggable(Level.DEBUG)) {
              return false;
            }
          }
          return others == null || others.isLoggable(record);
        });
  }
}
