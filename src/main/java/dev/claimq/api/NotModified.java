package dev.claimq.api;

import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.core.HttpHeaders;
import org.jboss.resteasy.reactive.server.ServerResponseFilter;

/**
 * A read sent with an If-None-Match that names the version it would answer is a 304 without a body
 * (RFC 9110, 13.1.2 and 15.4.5), as a client polling an item or a policy for a change asks. Only
 * answers that carry an ETag (an item's and a policy's reads) have a version to compare; the
 * header's form is checked, as If-Match's is, by AmbiguousRequests before the read.
 */
public class NotModified {
  @ServerResponseFilter
  public void notModified(ContainerRequestContext request, ContainerResponseContext response) {
    String method = request.getMethod();
    String etag = response.getHeaderString(HttpHeaders.ETAG);
    if (etag != null
        && response.getStatus() == 200
        && (method.equals("GET") || method.equals("HEAD"))
        && request.getHeaders().containsKey(EntityTags.IF_NONE_MATCH)
        && EntityTags.noneMatchNames(request.getHeaders().get(EntityTags.IF_NONE_MATCH), etag)) {
      response.setStatus(304);
      response.setEntity(null);
    }
  }
}
