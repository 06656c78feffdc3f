package dev.claimq.api;

import dev.claimq.config.ClaimqConfig;
import jakarta.enterprise.inject.Instance;
import jakarta.ws.rs.ext.Provider;
import jakarta.ws.rs.ext.ReaderInterceptor;
import jakarta.ws.rs.ext.ReaderInterceptorContext;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Checks every request body as it is read, chunked or not: it stops at claimq.limits.body-bytes
 * (413), refuses bytes that are not UTF-8 (400), and tells a broken chunk (400, see HttpFraming)
 * from the service's own failures. Jackson's own decoder lets some through, the overlong C0 80 for
 * one, which it reads as NUL. This runs where the body is read, not in a request filter, so that a
 * chunked body on a non-blocking endpoint (the claims) is never read on the I/O thread.
 */
@Provider
public class CheckedBody implements ReaderInterceptor {
  // Looked up when the first body is read: interceptors are made before the runtime config is
  // there. Then kept: the config bean is dependent, and Instance.get() made a new one per body
  // (0.8% of the drain's CPU samples, docs/profile.md).
  private final Instance<ClaimqConfig> config;
  private volatile long maxBytes = -1;

  CheckedBody(Instance<ClaimqConfig> config) {
    this.config = config;
  }

  @Override
  public Object aroundReadFrom(ReaderInterceptorContext context) throws IOException {
    long maxBytes = this.maxBytes;
    if (maxBytes < 0) {
      maxBytes = config.get().limits().bodyBytes();
      this.maxBytes = maxBytes;
    }
    context.setInputStream(new Checked(context.getInputStream(), maxBytes));
    return context.proceed();
  }

  /** Counts what is read, stops at the limit, and decodes strictly, keeping nothing. */
  static final class Checked extends FilterInputStream {
    private final long maxBytes;
    private final CharsetDecoder utf8 =
        StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT);
    private final CharBuffer discard = CharBuffer.allocate(4096);
    private ByteBuffer carried = ByteBuffer.allocate(0); // the start of a split character
    private long read;
    private boolean ended;

    Checked(InputStream in, long maxBytes) {
      super(in);
      this.maxBytes = maxBytes;
    }

    @Override
    public int read() throws IOException {
      byte[] one = new byte[1];
      int n = read(one, 0, 1);
      return n < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] buffer, int offset, int length) throws IOException {
      int n;
      try {
        n = super.read(buffer, offset, length);
      } catch (IOException e) {
        throw HttpFraming.translated(e); // a broken chunk is the client's, not the service's
      }
      if (n < 0) {
        end();
      } else {
        read += n;
        if (read > maxBytes) {
          throw BodyLimit.tooLarge(maxBytes);
        }
        decode(ByteBuffer.wrap(buffer, offset, n), false);
      }
      return n;
    }

    @Override
    public long skip(long n) throws IOException {
      return read(new byte[(int) Math.min(n, 4096)], 0, (int) Math.min(n, 4096));
    }

    private void end() {
      if (!ended) {
        ended = true;
        decode(ByteBuffer.allocate(0), true);
      }
    }

    private void decode(ByteBuffer bytes, boolean last) {
      ByteBuffer input = bytes;
      if (carried.hasRemaining()) {
        input = ByteBuffer.allocate(carried.remaining() + bytes.remaining());
        input.put(carried).put(bytes).flip();
      }
      long start = read - input.remaining();
      while (true) {
        discard.clear();
        CoderResult result = utf8.decode(input, discard, last);
        if (result.isError()) {
          throw notUtf8(start + input.position());
        }
        if (result.isUnderflow()) {
          break;
        }
      }
      if (last && (input.hasRemaining() || utf8.flush(discard).isError())) {
        throw notUtf8(start + input.position());
      }
      carried = ByteBuffer.allocate(input.remaining()).put(input).flip();
    }

    private static BadRequestException notUtf8(long at) {
      return new BadRequestException(
          "body",
          "The body is not valid UTF-8 (at byte "
              + at
              + "): send JSON text encoded as UTF-8, without overlong forms or encoded"
              + " surrogates.");
    }
  }
}
