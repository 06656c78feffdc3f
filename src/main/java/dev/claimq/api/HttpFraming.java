package dev.claimq.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.claimq.config.ClaimqConfig;
import dev.claimq.telemetry.LogText;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.quarkus.runtime.configuration.MemorySize;
import io.quarkus.vertx.http.runtime.RouteConstants;
import io.vertx.core.Vertx;
import io.vertx.core.VertxException;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.HttpVersion;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Provider;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;
import org.jboss.resteasy.reactive.RestResponse;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

/** Gives broken HTTP framing a problem+json answer, not a bare status or an ERROR log. */
@Singleton
public class HttpFraming {
  private static final Logger LOG = Logger.getLogger(HttpFraming.class);

  // What Vert.x's decoder refuses itself it answers with a bare status, and Quarkus 3.33 offers no
  // hook into that answer (Vert.x's invalidRequestHandler is out of reach). So the decoder's limits
  // on the request line and headers are raised (application.properties) and the limits clients
  // meet are enforced here, on the parsed request, before any other route. Past the decoder's
  // limits, and for a head it cannot parse at all (a broken request line, header syntax or
  // Content-Length), Vert.x still answers a bare 400, 414 or 431 and closes the connection: the
  // right status, logged at no level, but without a body. So does Quarkus for a request target
  // that is no URI (a broken percent escape such as %zz, or a '%' at the end): it parses every
  // target before any route runs, and its only switch, the vertx.disableURIValidation system
  // property, turns the check off altogether, which Quarkus warns against outside benchmarks.
  // Targets that parse but are not UTF-8 are refused with a problem, by RequestTargets.

  /**
   * The longest request line (method, target and version) served. Twice Vert.x's default, so that
   * the longest query the API documents fits in any script: a 500-character reason or q filter of
   * four-byte characters is 6,000 bytes percent-encoded.
   */
  static final int REQUEST_LINE_BYTES = 8192;

  /** The most header bytes (names, values and separators) served: Quarkus' own default. */
  static final int HEADER_BYTES = 20 * 1024;

  /** Before Quarkus' own check of a declared body size, which answers a bare 413. */
  private static final int ORDER = RouteConstants.ROUTE_ORDER_UPLOAD_LIMIT - 1;

  /**
   * How long, at most, a connection refused with Connection: close reads and drops the rest of the
   * request before it closes: time for a client to finish the body it was sending, while one that
   * never ends its body holds the connection only briefly (and then meets the reset it would have
   * met at once).
   */
  private static final long LINGER_MILLIS = 2000;

  /** Marks a request answered here, whatever the rest of the service then tries. */
  private static final String ANSWERED = HttpFraming.class.getName() + ".answered";

  private final ObjectMapper json;
  private final Provider<ClaimqConfig> config; // not yet readable when the router is built
  private final long hardCap;

  HttpFraming(
      ObjectMapper json,
      Provider<ClaimqConfig> config,
      @ConfigProperty(name = "quarkus.http.limits.max-body-size") Optional<MemorySize> hardCap) {
    this.json = json;
    this.config = config;
    this.hardCap = hardCap.map(MemorySize::asLongValue).orElse(Long.MAX_VALUE);
  }

  void install(@Observes Router router) {
    router.route().order(ORDER).handler(this::check);
    router.route().order(ORDER).failureHandler(this::failed);
  }

  /**
   * Refuses a request whose head is over the limits, and watches a chunked body for bad framing.
   */
  private void check(RoutingContext context) {
    HttpServerRequest request = context.request();
    if (requestLineBytes(request) > REQUEST_LINE_BYTES) {
      answer(
          context,
          414,
          "request-line-too-long",
          "Request line too long",
          "The request line (method, path and query) is longer than "
              + REQUEST_LINE_BYTES
              + " bytes. Send long data in the body, not in the URL.");
    } else if (headerBytes(request) > HEADER_BYTES) {
      answer(
          context,
          431,
          "headers-too-large",
          "Request headers too large",
          "The request headers are larger than " + HEADER_BYTES + " bytes in all.");
    } else if (request.version() != HttpVersion.HTTP_2
        && request.headers().getAll(HttpHeaders.HOST).size() > 1) {
      answerBadHost(context, "The request carries more than one Host header; send exactly one.");
    } else if (request.authority() == null && !servedWithoutHost(context.normalizedPath())) {
      // HTTP/1.0 needs no Host (HTTP/1.1 without one Vert.x refuses itself, see failed), but the
      // REST layer builds each request's URI from it: without one, a 500 and an ERROR.
      answerBadHost(
          context,
          "The request has no Host header, which the API needs: send one (HTTP/1.1 asks for it"
              + " on every request). Health, metrics and the console answer without it.");
    } else if (declaredLength(request) > hardCap) {
      answerTooLarge(context);
    } else if (!refusedFraming(context)) {
      if (request.headers().contains(HttpHeaders.TRANSFER_ENCODING)) {
        watchChunks(context);
      }
      context.next();
    }
  }

  /** Answers a request whose body's framing or expectation is not served here; false if none. */
  private boolean refusedFraming(RoutingContext context) {
    HttpServerRequest request = context.request();
    List<String> codings = transferCodings(request);
    String fault = framingFault(codings);
    String coding = fault == null ? unknownTransferCoding(codings) : null;
    String expectation = fault == null && coding == null ? unmetExpectation(request) : null;
    if (fault != null) {
      answer(context, 400, "invalid-framing", "Invalid message framing", fault);
    } else if (coding != null) {
      answer(
          context,
          501,
          "about:blank",
          "Not Implemented",
          "The body is sent with the transfer coding '"
              + LogText.oneLine(LogText.shortened(coding))
              + "', which is not implemented here: send it chunked alone, or with a"
              + " Content-Length.");
    } else if (expectation != null) {
      answer(
          context,
          417,
          "about:blank",
          "Expectation Failed",
          "The Expect header asks for '"
              + LogText.oneLine(LogText.shortened(expectation))
              + "': only 100-continue is met here. Send the request without it.");
    } else {
      return false;
    }
    return true;
  }

  /**
   * When a chunk of the body is malformed (a bad chunk size, no CRLF after a chunk), Vert.x tells
   * the response, then closes the connection at once: the answer is written and flushed here,
   * before that close.
   */
  private void watchChunks(RoutingContext context) {
    HttpServerResponse response = context.response();
    response.exceptionHandler(
        cause -> {
          if (isBrokenFraming(cause) && !response.headWritten()) {
            answer(
                context,
                400,
                "malformed-chunk",
                "Malformed chunked body",
                malformedChunkDetail(cause) + ".",
                false);
          }
        });
  }

  /**
   * Client errors that Vert.x raises before any route runs (no or a bad Host, a path without '/'),
   * and the resource's late attempt to answer a request already answered here.
   */
  private void failed(RoutingContext context) {
    int status = context.statusCode();
    Throwable failure = context.failure();
    if (context.get(ANSWERED) != null && context.response().ended()) {
      LOG.debugf(
          "already answered %s: %s",
          LogText.oneLine(context.request().path()), LogText.oneLine(String.valueOf(failure)));
      return;
    }
    boolean fromVertx = failure == null || failure instanceof VertxException;
    if (status < 400 || status >= 500 || !fromVertx || context.response().headWritten()) {
      context.next(); // the service's own failures: Quarkus logs and answers them
      return;
    }
    HttpServerRequest request = context.request();
    if (status == 400 && request.authority() == null) {
      answerBadHost(
          context,
          request.headers().contains(HttpHeaders.HOST)
              ? "The Host header is not a valid host[:port]."
              : "An HTTP/1.1 request must carry a Host header.");
    } else if (status == 404) {
      answer(
          context,
          404,
          "about:blank",
          "Not Found",
          "There is no such resource; see /q/swagger-ui for the API.");
    } else if (status == 413) {
      answerTooLarge(context);
    } else {
      String reason = HttpResponseStatus.valueOf(status).reasonPhrase();
      answer(context, status, "about:blank", reason, reason + ".");
    }
  }

  /**
   * Paths (as routed: /q/../v1/me is /v1/me) whose handlers need no Host: health checks and scrapes
   * by load balancers and agents that send HTTP/1.0 without one (HAProxy's default check does), the
   * document and the console.
   */
  private static boolean servedWithoutHost(String path) {
    return path != null && (path.startsWith("/q/") || path.startsWith("/console"));
  }

  private void answerBadHost(RoutingContext context, String detail) {
    answer(context, 400, "invalid-host", "Missing or invalid Host", detail);
  }

  private void answerTooLarge(RoutingContext context) {
    long limit = Math.min(config.get().limits().bodyBytes(), hardCap);
    answer(
        context,
        413,
        "too-large",
        "Request too large",
        "The request body is larger than " + limit + " bytes.");
  }

  /**
   * Sends the problem and closes the connection: what is left of the request (its body, a broken
   * chunk) cannot be read as the next request. A body whose length the head settles is read to its
   * end first (see closeOnceRead).
   */
  private void answer(
      RoutingContext context, int status, String slug, String title, String detail) {
    HttpServerRequest request = context.request();
    List<String> codings = transferCodings(request);
    boolean framed = framingFault(codings) == null && unknownTransferCoding(codings) == null;
    answer(context, status, slug, title, detail, framed);
  }

  /** As above; framed is false when the body's end cannot be found as the client meant it. */
  private void answer(
      RoutingContext context,
      int status,
      String slug,
      String title,
      String detail,
      boolean framed) {
    LOG.debugf("%d %s: %s", status, title, LogText.oneLine(detail));
    context.put(ANSWERED, Boolean.TRUE);
    HttpServerRequest request = context.request();
    HttpServerResponse response = context.response();
    boolean http1 = request.version() != HttpVersion.HTTP_2;
    response.setStatusCode(status).putHeader(HttpHeaders.CONTENT_TYPE, Problem.MEDIA_TYPE);
    if (http1) {
      response.putHeader(HttpHeaders.CONNECTION, "close");
    }
    response.end(Buffer.buffer(body(Problem.of(status, slug, title, detail, null))));
    if (http1) {
      closeOnceRead(context, framed);
    }
  }

  /**
   * Closes the connection once the rest of the request is read and dropped, and after LINGER_MILLIS
   * at the latest (RFC 9112, 9.6). A client writes its whole body before it reads the answer
   * (Java's HttpClient does), and a connection closed while the body still arrives is reset: the
   * client's write fails, and with it the exchange, so the answer is never read. A body of
   * unsettled length (framing refused, a broken chunk) is not read on, as what follows it would be
   * read as a next request: that connection closes at once. Closing flushes what was written: while
   * Vert.x is reading, an answer waits for the read to end, and a connection Vert.x itself closes
   * next would drop it.
   */
  private static void closeOnceRead(RoutingContext context, boolean framed) {
    HttpServerRequest request = context.request();
    HttpConnection connection = request.connection();
    if (!framed || request.isEnded()) {
      connection.close();
      return;
    }
    Vertx vertx = context.vertx();
    long linger = vertx.setTimer(LINGER_MILLIS, late -> connection.close());
    request.handler(dropped -> {});
    // A client that hangs up meanwhile ends the wait; it is nothing to report.
    request.exceptionHandler(
        gone -> {
          vertx.cancelTimer(linger);
          connection.close();
        });
    request.endHandler(
        read -> {
          vertx.cancelTimer(linger);
          connection.close();
        });
    request.resume();
  }

  private byte[] body(Problem problem) {
    try {
      return json.writeValueAsBytes(problem);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e); // a record of strings and an int always serializes
    }
  }

  private static int requestLineBytes(HttpServerRequest request) {
    if (request.version() == HttpVersion.HTTP_2) {
      return 0; // no request line; its pseudo-headers count as headers
    }
    return request.method().name().length() + 1 + request.uri().length() + 1 + "HTTP/1.1".length();
  }

  private static int headerBytes(HttpServerRequest request) {
    int bytes = 0;
    for (Map.Entry<String, String> header : request.headers()) {
      bytes += header.getKey().length() + ": ".length() + header.getValue().length() + 2;
    }
    return bytes;
  }

  /**
   * Why the body's length cannot be known from the head (RFC 9112, 6.1 and 6.3), so that the
   * connection must close with a 400; null when it can. Transfer-Encoding whose last coding is not
   * chunked (such as "identity", which the decoder reads by the Content-Length beside it), or
   * chunked twice: each is how a request is smuggled past a proxy that frames it otherwise. (The
   * decoder refuses chunked before another coding, and any in HTTP/1.0, itself: a bare 400.)
   */
  static String framingFault(List<String> codings) {
    if (codings.isEmpty()) {
      return null;
    }
    String declared = LogText.oneLine(LogText.shortened(String.join(", ", codings)));
    if (!codings.get(codings.size() - 1).equals("chunked")) {
      return "The Transfer-Encoding '"
          + declared
          + "' does not end with chunked, so the body's length cannot be known: send the body"
          + " chunked, or with a Content-Length and no Transfer-Encoding.";
    }
    if (codings.indexOf("chunked") != codings.size() - 1) {
      return "The Transfer-Encoding '" + declared + "' applies chunked twice: apply it once.";
    }
    return null;
  }

  /** A transfer coding other than chunked, which nothing here undoes; null when there is none. */
  static String unknownTransferCoding(List<String> codings) {
    for (String coding : codings) {
      if (!coding.equals("chunked")) {
        return coding;
      }
    }
    return null;
  }

  /**
   * The transfer codings named (RFC 9112, 6.1), in order, lowercased, without parameters; empty
   * list elements say nothing (RFC 9110, 5.6.1). HTTP/2 has no Transfer-Encoding.
   */
  private static List<String> transferCodings(HttpServerRequest request) {
    if (request.version() == HttpVersion.HTTP_2) {
      return List.of();
    }
    List<String> codings = new ArrayList<>();
    for (String value : request.headers().getAll(HttpHeaders.TRANSFER_ENCODING)) {
      for (String element : value.split(",")) {
        String coding = element.split(";", 2)[0].strip().toLowerCase(Locale.ROOT);
        if (!coding.isEmpty()) {
          codings.add(coding);
        }
      }
    }
    return codings;
  }

  /**
   * An expectation other than 100-continue, which Vert.x meets itself; null when there is none. A
   * server may refuse such a request with 417 (RFC 9110, 10.1.1), and a client that waits for it to
   * be met should be told it will not be.
   */
  static String unmetExpectation(HttpServerRequest request) {
    for (String value : request.headers().getAll(HttpHeaders.EXPECT)) {
      for (String element : value.split(",")) {
        String expectation = element.strip();
        if (!expectation.isEmpty() && !expectation.equalsIgnoreCase("100-continue")) {
          return expectation;
        }
      }
    }
    return null;
  }

  private static long declaredLength(HttpServerRequest request) {
    String declared = request.getHeader(HttpHeaders.CONTENT_LENGTH);
    try {
      return declared == null ? -1 : Long.parseLong(declared.strip());
    } catch (NumberFormatException e) {
      return -1; // the decoder refuses a malformed Content-Length itself
    }
  }

  /**
   * True when the HTTP decoder refused the body's framing (its errors are the root cause), as
   * opposed to the connection closing or failing, which is the client leaving.
   */
  static boolean isBrokenFraming(Throwable error) {
    Throwable root = root(error);
    return root instanceof DecoderException || root instanceof IllegalArgumentException;
  }

  /** The decoder's own words (e.g. "Invalid character in chunk size"), never a class name. */
  private static String malformedChunkDetail(Throwable error) {
    String words = root(error).getMessage();
    return "The chunked request body is malformed"
        + (words == null || words.isBlank() ? "" : " (" + words + ")");
  }

  private static Throwable root(Throwable error) {
    Throwable root = error;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return root;
  }

  @ServerExceptionMapper
  public RestResponse<Problem> brokenFraming(BrokenFramingException e) {
    // Normally already answered by watchChunks, on a connection now closed: this keeps it quiet.
    return ProblemMappers.problem(
        400, "malformed-chunk", "Malformed chunked body", e.getMessage() + ".", null);
  }

  /**
   * A body the decoder could not unframe, as a resource reading it meets it (see
   * CheckedJsonReader); an IOException, so that readers pass it on as it is.
   */
  static final class BrokenFramingException extends IOException {
    BrokenFramingException(IOException cause) {
      super(malformedChunkDetail(cause), cause);
    }
  }

  /** A reading error as it is, or as a BrokenFramingException when the framing broke. */
  static IOException translated(IOException e) {
    return isBrokenFraming(e) && !(e instanceof BrokenFramingException)
        ? new BrokenFramingException(e)
        : e;
  }
}
