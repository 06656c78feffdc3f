package dev.claimq.api;

import dev.claimq.config.ClaimqConfig;
import jakarta.ws.rs.container.ContainerRequestContext;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;

/**
 * Refuses at once, before reading, a body whose declared Content-Length is over
 * claimq.limits.body-bytes (problem+json 413). A body streamed without one is counted while it is
 * read, by {@link CheckedJsonReader}. (quarkus.http.limits.max-body-size stays as a higher,
 * last-resort cap in the HTTP layer.)
 */
public class BodyLimit {
  private final long maxBytes;

  BodyLimit(ClaimqConfig config) {
    this.maxBytes = config.limits().bodyBytes();
  }

  @ServerRequestFilter
  public void limit(ContainerRequestContext request) {
    String declared = request.getHeaderString("Content-Length");
    if (declared != null && isOver(declared)) {
      throw tooLarge(maxBytes);
    }
  }

  private boolean isOver(String declared) {
    try {
      return Long.parseLong(declared.strip()) > maxBytes;
    } catch (NumberFormatException e) {
      return false; // the HTTP layer rejects a malformed Content-Length itself
    }
  }

  static TooLargeException tooLarge(long maxBytes) {
    return new TooLargeException(
        "The request body is larger than " + maxBytes + " bytes (claimq.limits.body-bytes).");
  }
}
