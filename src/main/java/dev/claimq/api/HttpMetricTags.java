package dev.claimq.api;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.config.MeterFilter;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Keeps the HTTP server metrics' tags to a set no client can grow. Quarkus tags a request with its
 * method as sent, and one that reached no resource method (a 405, an OPTIONS) with its raw path, so
 * requests without a key could add series at will (a made-up method each, a 5,000-digit id), and
 * once 100 paths were tagged the routes used after them had no metrics at all. A method other than
 * HTTP's own is tagged OTHER; an API path is tagged with its template, or UNKNOWN, as is a path
 * below /mcp.
 *
 * <p>Micrometer maps an id once, when it first makes the id's meter (it keeps meters by the id as
 * recorded), so the template lookup runs once per series, not on every request.
 */
@Singleton
public class HttpMetricTags {
  private static final Set<String> METHODS =
      Set.of("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT");

  @Produces
  @Singleton
  MeterFilter bounded() {
    return new MeterFilter() {
      @Override
      public Meter.Id map(Meter.Id id) {
        if (!id.getName().startsWith("http.server")) {
          return id;
        }
        List<Tag> tags = new ArrayList<>();
        for (Tag tag : id.getTagsAsIterable()) {
          tags.add(
              switch (tag.getKey()) {
                case "method" -> METHODS.contains(tag.getValue()) ? tag : Tag.of("method", "OTHER");
                case "uri" -> Tag.of("uri", uri(tag.getValue()));
                default -> tag;
              });
        }
        return id.replaceTags(tags);
      }
    };
  }

  /**
   * A path under /v1 as its template; one below /mcp, whose only route is /mcp itself, as UNKNOWN
   * (without a key the HTTP layer's 401 comes before any route, so it is tagged as sent); anything
   * else (a route's own template) as it is.
   */
  static String uri(String tagged) {
    if (tagged.startsWith("/mcp/")) {
      return "UNKNOWN";
    }
    if (!tagged.startsWith("/v1") || tagged.contains("{")) {
      return tagged;
    }
    String template = AllowedMethods.template(tagged);
    return template == null ? "UNKNOWN" : template;
  }
}
