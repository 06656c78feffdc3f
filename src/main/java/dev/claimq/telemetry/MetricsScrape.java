package dev.claimq.telemetry;

import io.micrometer.prometheus.PrometheusMeterRegistry;
import io.prometheus.client.exporter.common.TextFormat;
import io.quarkus.vertx.http.ManagementInterface;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.MIMEHeader;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import java.net.URI;
import java.util.List;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * /q/metrics in the format the scraper prefers. Quarkus's own route answers the text format to any
 * Accept that names {@code text/plain} at all, and Prometheus names it as its last fallback, so
 * Prometheus never got OpenMetrics, the only format that carries exemplars; and it answers a 406
 * with no body to an OpenMetrics Accept without a {@code charset}. This route, ahead of Quarkus's,
 * reads the Accept header's media ranges by weight: the first that is OpenMetrics or the text
 * format decides, and an Accept that names neither (none, {@code *}{@code /*}, anything else) gets
 * OpenMetrics, as Quarkus gives it. It serves the path Quarkus serves, on the server Quarkus serves
 * it on: the main one, or the management interface when that is enabled.
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
    this.path = resolved(management ? managementRoot : mainRoot, prometheusPath);
  }

  /** As Quarkus resolves it: a relative path under the root, an absolute one as it is. */
  static String resolved(String root, String prometheusPath) {
    return URI.create("/")
        .resolve(root.endsWith("/") ? root : root + "/")
        .resolve(prometheusPath)
        .getPath();
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
    String format = format(context.parsedHeaders().accept());
    context.response().putHeader(HttpHeaders.CONTENT_TYPE, format).end(registry.scrape(format));
  }

  static String format(List<MIMEHeader> accepted) {
    for (MIMEHeader range : accepted) {
      if (range.weight() <= 0) {
        continue; // q=0: not acceptable
      }
      String type = range.component() + "/" + range.subComponent();
      if (type.equalsIgnoreCase("application/openmetrics-text")) {
        return TextFormat.CONTENT_TYPE_OPENMETRICS_100;
      }
      if (type.equalsIgnoreCase("text/plain") || type.equalsIgnoreCase("text/html")) {
        return TextFormat.CONTENT_TYPE_004;
      }
    }
    return TextFormat.CONTENT_TYPE_OPENMETRICS_100;
  }
}
