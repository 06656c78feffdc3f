package dev.claimq.telemetry;

import dev.claimq.config.NonApplicationPaths;
import io.micrometer.prometheus.PrometheusMeterRegistry;
import io.prometheus.client.exporter.common.TextFormat;
import io.quarkus.vertx.http.ManagementInterface;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.MIMEHeader;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import java.util.List;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * /q/metrics in the format the scraper prefers. Quarkus's own route answers the text format to any
 * Accept that names {@code text/plain} at all, and Prometheus names it as its last fallback, so
 * Prometheus never got OpenMetrics, the only format that carries exemplars; and it answers a 406
 * with no body to an OpenMetrics Accept without a {@code charset}. This route, ahead of Quarkus's,
 * weighs each format by the Accept header's most specific media range that matches it (RFC 9110,
 * 12.5.1: {@code application/openmetrics-text}, then {@code application/*}, then {@code *}{@code
 * /*} for OpenMetrics; {@code text/plain}, or a browser's {@code text/html}, then {@code text/*},
 * then {@code *}{@code /*} for the text format) and answers the heavier, OpenMetrics on a tie, as
 * Quarkus answers no Accept at all. A format of weight 0 is not acceptable ({@code q=0} excludes
 * it): when neither is acceptable the answer is a 406 problem, as the API's is. It serves the path
 * Quarkus serves, on the server Quarkus serves it on: the main one, or the management interface
 * when that is enabled.
 */
@Singleton
public class MetricsScrape {

  /** Ahead of Quarkus's scrape routes, which are ordered 1. */
  private static final int ORDER = 0;

  private final PrometheusMeterRegistry registry;
  private final boolean management;
  private final String path;

  MetricsScrape(
      PrometheusMeterRegistry registry,
      @ConfigProperty(name = "quarkus.management.enabled") boolean management,
      @ConfigProperty(name = "quarkus.management.root-path") String managementRoot,
      @ConfigProperty(name = "quarkus.http.non-application-root-path") String mainRoot,
      @ConfigProperty(name = "quarkus.micrometer.export.prometheus.path") String prometheusPath) {
    this.registry = registry;
    this.management = management;
    this.path =
        NonApplicationPaths.resolved(management ? managementRoot : mainRoot, prometheusPath);
  }

  void onMainServer(@Observes Router router) {
    if (!management) {
      install(router);
    }
  }

  void onManagementInterface(@Observes ManagementInterface managementInterface) {
    install(managementInterface.router());
  }

  private void install(Router router) {
    // Off the event loop, as Quarkus's route is: a gauge may read what it measures when asked.
    router.get(path).order(ORDER).blockingHandler(this::scrape, false);
  }

  private void scrape(RoutingContext context) {
    List<MIMEHeader> accepted = context.parsedHeaders().accept();
    String sent = String.join(", ", context.request().headers().getAll(HttpHeaders.ACCEPT));
    String badWeight = badWeight(sent, accepted);
    String format = badWeight == null ? format(accepted) : null;
    if (format == null) {
      // The API's 406 as written out (its Problem is a layer above this one), quoting alike.
      context
          .response()
          .setStatusCode(406)
          .putHeader(HttpHeaders.CONTENT_TYPE, "application/problem+json")
          .end(
              new JsonObject()
                  .put("type", "about:blank")
                  .put("title", "Not Acceptable")
                  .put("status", 406)
                  .put("detail", badWeight == null ? notAcceptable(sent) : badWeight)
                  .encode());
      return;
    }
    context.response().putHeader(HttpHeaders.CONTENT_TYPE, format).end(registry.scrape(format));
  }

  /**
   * Null when each of these media ranges gives at most one weight, spelled as RFC 9110 spells it;
   * else the 406's detail. Vert.x reads q=abc or q=1.5 as some weight, and q =0 as none.
   */
  static String badWeight(String accept, List<MIMEHeader> accepted) {
    for (MIMEHeader range : accepted) {
      // From the range as sent: Vert.x keeps no q among a range's parameters once it has read it.
      List<String> parts = List.of(range.rawValue().split(";"));
      String why = AcceptWeight.whyNot(accept, parts.subList(1, parts.size()));
      if (why != null) {
        return why;
      }
    }
    return null;
  }

  /** The 406's detail: the formats there are, and the Accept header that takes neither. */
  static String notAcceptable(String sent) {
    return "The metrics are served as application/openmetrics-text or as text/plain (the"
        + " Prometheus text format), and the Accept header "
        + LogText.quoted(sent)
        + " takes neither: accept one of them (or */*), or send no Accept header.";
  }

  /**
   * The format to answer, by the weight the Accept header's media ranges give each; null when it
   * gives both 0. No media range at all (no Accept header) takes anything.
   */
  static String format(List<MIMEHeader> accepted) {
    if (accepted.isEmpty()) {
      return TextFormat.CONTENT_TYPE_OPENMETRICS_100;
    }
    float openMetrics = weight(accepted, "application", "openmetrics-text", null);
    float text = weight(accepted, "text", "plain", "html");
    if (openMetrics <= 0 && text <= 0) {
      return null;
    }
    return text > openMetrics
        ? TextFormat.CONTENT_TYPE_004
        : TextFormat.CONTENT_TYPE_OPENMETRICS_100;
  }

  /**
   * The weight of type/subtype: that of the most specific media range matching it (the highest,
   * when it is named more than once, with other parameters); {@code alias}, when not null, is
   * another subtype taken as naming it, less specifically, when it is accepted; 0 when none
   * matches.
   */
  private static float weight(
      List<MIMEHeader> accepted, String type, String subtype, String alias) {
    float[] bySpecificity = {-1, -1, -1, -1}; // */*, type/*, type/alias, type/subtype
    for (MIMEHeader range : accepted) {
      // Vert.x parses a range when first asked its weight, and only then has its type.
      float rangeWeight = range.weight();
      String rangeType = range.component();
      String rangeSubtype = range.subComponent();
      int specificity;
      if (rangeType.equals("*") && rangeSubtype.equals("*")) {
        specificity = 0;
      } else if (!rangeType.equalsIgnoreCase(type)) {
        continue;
      } else if (rangeSubtype.equals("*")) {
        specificity = 1;
      } else if (alias != null && rangeSubtype.equalsIgnoreCase(alias)) {
        if (rangeWeight <= 0) {
          continue; // refusing the alias (no page, say) says nothing of the type itself
        }
        specificity = 2;
      } else if (rangeSubtype.equalsIgnoreCase(subtype)) {
        specificity = 3;
      } else {
        continue;
      }
      bySpecificity[specificity] = Math.max(bySpecificity[specificity], rangeWeight);
    }
    for (int specificity = 3; specificity >= 0; specificity--) {
      if (bySpecificity[specificity] >= 0) {
        return bySpecificity[specificity];
      }
    }
    return 0;
  }
}
