package dev.claimq.telemetry;

import dev.claimq.store.Item;
import org.jboss.logging.Logger;
import org.jboss.logging.MDC;

/**
 * Log lines about an item carry it as fields (MDC): {@code itemId}, {@code queue} and {@code
 * attempt}, so a JSON log can be searched by item without parsing messages. The fields stay for the
 * rest of the request, which is how the api's problem lines get them too. Messages never hold a
 * claim token or a key: callers pass what they log, and nothing here reads a request.
 */
public final class ItemLog {
  private ItemLog() {}

  /** Puts the item's fields into the log context of this request (or job run). */
  public static void about(Item item) {
    if (item == null) {
      return;
    }
    MDC.put("itemId", String.valueOf(item.id));
    MDC.put("queue", item.queue);
    MDC.put("attempt", String.valueOf(item.attempts));
  }

  /** Logs a line about the item, with its fields. */
  public static void info(Logger log, Item item, String format, Object... args) {
    about(item);
    log.infof(format, args);
  }

  /** Logs a warning about the item, with its fields. */
  public static void warn(Logger log, Item item, String format, Object... args) {
    about(item);
    log.warnf(format, args);
  }

  /** Takes the item's fields out of the log context. */
  public static void clear() {
    MDC.remove("itemId");
    MDC.remove("queue");
    MDC.remove("attempt");
  }
}
