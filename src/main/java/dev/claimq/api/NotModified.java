package dev.claimq.api;

import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.core.HttpHeaders;
import org.jboss.resteasy.reactive.server.ServerResponseFilter;

/**
 * A read sent with an If-None-Match that names the version it would answer, or {@code *}, is a 304
 * without a body (RFC 9110, 13.1.2 and 15.4.5), as a client polling an item or a policy for a
 * change asks. {@code *} names any current representation, and every read that succeeds has one,
 * whether or not it carries an ETag; entity tags can name only an answer that carries one (an
 * item's and a policy's reads), so on any other read they never match and the read is answered.
 * Only a read that would succeed (2xx) is made a 304: the condition is not evaluated on an error.
 * The header's form is checked, as If-Match's is, by AmbiguousRequests before the read.
 */
public class NotModified {
  @ServerResponseFilter
  public void notModified(ContainerRequestContext request, ContainerResponseContext response) {
    String method = request.getMethod();
    int status = response.getStatus();
    if (status >= 200
        && status < 300
        && (method.equals("GET") || method.equals("HEAD"))
        && request.getHeaders().containsKey(EntityTags.IF_NONE_MATCH)
        && EntityTags.noneMatchNames(
            request.getHeaders().get(EntityTags.IF_NONE_MATCH),
            response.getHeaderString(HttpHeaders.ETAG))) {
      response.setStatus(304);
      response.setEntity(null);
    }
  }
}
