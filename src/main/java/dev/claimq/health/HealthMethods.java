package dev.claimq.health;

import dev.claimq.config.NonApplicationPaths;
import io.quarkus.vertx.http.ManagementInterface;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * The health checks are read with GET (or HEAD), as the API's reads are. SmallRye Health's routes
 * answer every method, so a POST or DELETE got 200 and the checks, and OPTIONS no Allow header;
 * here those are a 405 problem with Allow, and OPTIONS a 200 with it, as on the API
 * (AllowedMethods). On the server the checks are served on: the main one, or the management
 * interface when enabled.
 */
@Singleton
public class HealthMethods {
  private static final String ALLOW = "GET, HEAD, OPTIONS";

  private final boolean management;
  private final String path;

  HealthMethods(
      @ConfigProperty(name = "quarkus.management.enabled") boolean management,
      @ConfigProperty(name = "quarkus.management.root-path") String managementRoot,
      @ConfigProperty(name = "quarkus.http.non-application-root-path") String mainRoot,
      @ConfigProperty(name = "quarkus.smallrye-health.root-path", defaultValue = "health")
          String healthPath) {
    this.management = management;
    this.path = NonApplicationPaths.resolved(management ? managementRoot : mainRoot, healthPath);
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
    // Ahead of the health routes; the path and every check under it (live, ready, well, ...).
    router.route(path).order(0).handler(this::check);
    router.route(path + "/*").order(0).handler(this::check);
  }

  private void check(RoutingContext context) {
    HttpMethod method = context.request().method();
    if (method == HttpMethod.GET || method == HttpMethod.HEAD) {
      context.next();
      return;
    }
    context.response().putHeader(HttpHeaders.ALLOW, ALLOW);
    if (method == HttpMethod.OPTIONS) {
      context.response().setStatusCode(200).end();
      return;
    }
    context
        .response()
        .setStatusCode(405)
        .putHeader(HttpHeaders.CONTENT_TYPE, "application/problem+json")
        .end(
            new JsonObject()
                .put("type", "about:blank")
                .put("title", "Method Not Allowed")
                .put("status", 405)
                .put(
                    "detail",
                    "The health checks are read with GET (or HEAD); "
                        + method.name()
                        + " is not taken here.")
                .encode());
  }
}
