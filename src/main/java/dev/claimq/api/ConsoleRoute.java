package dev.claimq.api;

import io.vertx.ext.web.Router;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

/**
 * Sends /console to /console/, where the console's static files are served: the page's relative
 * links (its script and style sheet) only resolve from the directory.
 */
@Singleton
public class ConsoleRoute {

  void install(@Observes Router router) {
    router
        .get("/console")
        .handler(
            context -> {
              // Vert.x matches the route "/console" for "/console/" too: that is the directory.
              if (!context.request().path().equals("/console")) {
                context.next();
                return;
              }
              // Relative, so that it holds behind a proxy or under another root path.
              context.response().setStatusCode(301).putHeader("Location", "console/").end();
            });
  }
}
