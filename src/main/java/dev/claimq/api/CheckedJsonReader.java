package dev.claimq.api;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import dev.claimq.config.ClaimqConfig;
import io.quarkus.resteasy.reactive.jackson.runtime.serialisers.FullyFeaturedServerJacksonMessageBodyReader;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.ext.Provider;
import jakarta.ws.rs.ext.Providers;
import java.io.ByteArrayInputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.annotation.Annotation;
import java.lang.reflect.Type;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Reads every JSON request body, chunked or not, through checks: it stops at
 * claimq.limits.body-bytes (413), refuses bytes that are not UTF-8 (400), and tells a broken chunk
 * (400, see HttpFraming) from the service's own failures. Jackson's own decoder lets some through,
 * the overlong C0 80 for one, which it reads as NUL. This runs where the body is read, not in a
 * request filter, so that a chunked body on a non-blocking endpoint (every endpoint with a body on
 * the workers' and agents' path, see WorkerThread) is never read with blocking reads on the I/O
 * thread.
 *
 * <p>It is Quarkus's own Jackson reader with the stream wrapped, and as an application provider it
 * is chosen before the built-in one. A reader interceptor did this before, and cost 4.2% of the
 * drain's CPU: with any interceptor, RESTEasy Reactive asks for the resource method's parameter
 * annotations on every body, and the JDK parses them anew each time (docs/profile.md). The class
 * extended is Quarkus's runtime class, not a public API: should an upgrade change it, the
 * hostile-input and raw-HTTP suites, which fail without these checks, say so.
 */
@Provider
@Consumes(MediaType.APPLICATION_JSON)
public class CheckedJsonReader extends FullyFeaturedServerJacksonMessageBodyReader {
  // Looked up when the first body is read (readers are made before the runtime config is
  // there), then kept: the config bean is dependent, and Instance.get() made a new one per body.
  private final Instance<ClaimqConfig> config;
  private volatile long maxBytes = -1;

  @Inject
  CheckedJsonReader(
      Instance<ObjectMapper> mapper, Providers providers, Instance<ClaimqConfig> config) {
    super(mapper, providers);
    this.config = config;
  }

  // Both of the reader's entry points end here (the request-context one calls this one).
  @Override
  public Object readFrom(
      Class<Object> type,
      Type genericType,
      Annotation[] annotations,
      MediaType mediaType,
      MultivaluedMap<String, String> headers,
      InputStream body)
      throws IOException {
    long maxBytes = this.maxBytes;
    if (maxBytes < 0) {
      maxBytes = config.get().limits().bodyBytes();
      this.maxBytes = maxBytes;
    }
    Checked checked = new Checked(body, maxBytes);
    Object value = super.readFrom(type, genericType, annotations, mediaType, headers, checked);
    if (value == null && checked.read > 0) {
      // Quarkus reads a body of null, or of white space alone, as no body. Sent where a body is
      // optional (a claim's) that took every default: an explicit null, which a field is refused.
      throw MismatchedInputException.from((JsonParser) null, type, "no JSON object in the body");
    }
    return value;
  }

  /**
   * Null when these bytes are strict UTF-8, else the detail a REST body of them is refused with:
   * for /mcp, whose body no REST reader reads.
   */
  public static String notUtf8(byte[] body) {
    try (Checked checked = new Checked(new ByteArrayInputStream(body), Long.MAX_VALUE)) {
      byte[] chunk = new byte[8192];
      while (checked.read(chunk, 0, chunk.length) >= 0) {
        // each chunk is decoded as it is read
      }
      return null;
    } catch (BadRequestException e) {
      return e.getMessage();
    } catch (IOException e) {
      throw new UncheckedIOException(e); // bytes in memory are always read
    }
  }

  /** Counts what is read, stops at the limit, and decodes strictly, keeping nothing. */
  static final class Checked extends FilterInputStream {
    static final int DISCARDED_CHARS = 128;

    private final long maxBytes;
    private final CharsetDecoder utf8 =
        StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT);
    // Where the decoded characters go to be dropped: small, since it is made for every body and
    // a longer body only goes round the decoding loop more often. At 4,096 characters it was 8 KB,
    // a sixth of all that an enqueue allocated (docs/profile.md).
    private final CharBuffer discard = CharBuffer.allocate(DISCARDED_CHARS);
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
