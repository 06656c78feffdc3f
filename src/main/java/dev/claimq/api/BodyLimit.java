package dev.claimq.api;

import dev.claimq.config.ClaimqConfig;
import jakarta.ws.rs.container.ContainerRequestContext;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;

/**
 * Refuses request bodies over claimq.limits.body-bytes with a problem+json 413: at once when the
 * client declares a larger Content-Length, and while reading when it streams without one.
 * (quarkus.http.limits.max-body-size stays as a higher, last-resort cap in the HTTP layer.)
 */
public class BodyLimit {
  private final long maxBytes;

  BodyLimit(ClaimqConfig config) {
    this.maxBytes = config.limits().bodyBytes();
  }

  @ServerRequestFilter
  public void limit(ContainerRequestContext request) {
    String declared = request.getHeaderString("Content-Length");
    if (declared != null) {
      if (isOver(declared)) {
        throw tooLarge();
      }
    } else if (request.hasEntity()) {
      request.setEntityStream(new Bounded(request.getEntityStream()));
    }
  }

  private boolean isOver(String declared) {
    try {
      return Long.parseLong(declared.strip()) > maxBytes;
    } catch (NumberFormatException e) {
      return false; // the HTTP layer rejects a malformed Content-Length itself
    }
  }

  private TooLargeException tooLarge() {
    return new TooLargeException(
        "The request body is larger than " + maxBytes + " bytes (claimq.limits.body-bytes).");
  }

  /** Counts what is read and stops at the limit. */
  private final class Bounded extends FilterInputStream {
    private long read;

    Bounded(InputStream in) {
      super(in);
    }

    @Override
    public int read() throws IOException {
      int b = super.read();
      count(b < 0 ? 0 : 1);
      return b;
    }

    @Override
    public int read(byte[] buffer, int offset, int length) throws IOException {
      int n = super.read(buffer, offset, length);
      count(Math.max(n, 0));
      return n;
    }

    private void count(int n) {
      read += n;
      if (read > maxBytes) {
        throw tooLarge();
      }
    }
  }
}
