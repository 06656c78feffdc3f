package dev.claimq.api;

import io.vertx.core.http.HttpServerRequest;
import jakarta.ws.rs.container.ContainerRequestContext;
import java.net.URI;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;

/**
 * Lets a client that percent-encodes the ':' of the batch paths (items%3Abatch, items%3Acomplete,
 * items%3Afail) reach them, as it would with a literal ':'. Some HTTP libraries encode every ':' of
 * a path; routing matches the path as sent, so without this they would get a 404.
 */
public class EncodedColons {

  @ServerRequestFilter(preMatching = true)
  public void decode(ContainerRequestContext context, HttpServerRequest request) {
    String path = request.path();
    if (path == null || path.indexOf('%') < 0) {
      return; // the usual case: a look at the raw path, nothing built
    }
    String decoded = path.replace("%3A", ":").replace("%3a", ":");
    if (!decoded.equals(path)) {
      URI uri = context.getUriInfo().getRequestUri();
      String query = uri.getRawQuery();
      context.setRequestUri(
          URI.create(
              uri.getScheme()
                  + "://"
                  + uri.getRawAuthority()
                  + decoded
                  + (query == null ? "" : "?" + query)));
    }
  }
}
