package dev.claimq.api;

import dev.claimq.telemetry.LogText;
import io.vertx.core.http.HttpServerRequest;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.jboss.resteasy.reactive.RestResponse;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;

/**
 * Refuses a request target (path and query) that would be read otherwise than it was sent, with a
 * 400 naming the path or the query parameter as sent:
 *
 * <ul>
 *   <li>a byte outside ASCII. The target is ASCII (RFC 9112, 3.2), and the HTTP decoder reads such
 *       a byte as one ISO-8859-1 character: the UTF-8 bytes of "é" became "Ã©", a reason filter
 *       looked for that, and an item id was answered as "No item has id 'Ã©'".
 *   <li>percent-encoded bytes that are not UTF-8 (%E0%A4, %FF). JAX-RS decodes them to U+FFFD, so a
 *       refusal quoted, and a lookup used, text the client never sent.
 *   <li>a ';' in the path. JAX-RS reads what follows it in a segment as matrix parameters, which no
 *       claimq resource takes, and drops them: /v1/queues/emails;v=2/items enqueued into "emails",
 *       and /v1/items;queue=emails listed every queue.
 *   <li>a ';' in the query. The query decoder takes it for a separator, as '&amp;': a reason filter
 *       sent as "a;queue=emails" was read as the reason "a" in the queue "emails". Encoded (%3B),
 *       it is text.
 * </ul>
 *
 * A broken escape (%zz, or a '%' at the end) never gets here: Quarkus's HTTP layer parses every
 * request target as a URI before any route runs, and answers one that is not with a bare 400 (see
 * HttpFraming). Checked before matching, so that every path gets the same answer, routed or not.
 */
public class RequestTargets {
  private static final String HOW =
      "percent-encode the UTF-8 bytes of each character, as %C3%A9 for 'é'.";

  @ServerRequestFilter(preMatching = true)
  public RestResponse<Problem> refuse(HttpServerRequest request) {
    String target = request.uri();
    if (target == null || isPlain(target)) {
      return null; // the usual case: one look at the target, nothing built
    }
    for (int at = 0; at < target.length(); at++) {
      if (target.charAt(at) >= 0x80) {
        return invalid(
            "The request target has a byte that is not ASCII (at byte "
                + at
                + "): percent-encode each byte of UTF-8 text, as %C3%A9 for 'é'.",
            null);
      }
    }
    String path = request.path();
    if (path != null && path.indexOf(';') >= 0) {
      return invalid(
          "The path '"
              + LogText.oneLine(LogText.shortened(path))
              + "' has a ';': no path of this API takes parameters after one (matrix parameters),"
              + " which would be dropped, not read. Send filters as query parameters.",
          null);
    }
    if (path != null && decoded(path, false) == null) {
      return invalid(
          "The path '"
              + LogText.oneLine(LogText.shortened(path))
              + "' is not UTF-8 text once percent-decoded: "
              + HOW,
          null);
    }
    String query = request.query();
    if (query != null && query.indexOf(';') >= 0) {
      return invalid(
          "The query has a ';', which is read as a separator between parameters, as '&' is, and"
              + " by some clients as text: percent-encode a ';' in a value as %3B, and separate"
              + " parameters with '&'.",
          null);
    }
    if (query != null) {
      for (String pair : query.split("&")) {
        int equals = pair.indexOf('=');
        String rawName = equals < 0 ? pair : pair.substring(0, equals);
        String name = decoded(rawName, true);
        if (name == null || equals >= 0 && decoded(pair.substring(equals + 1), true) == null) {
          String named = LogText.oneLine(LogText.shortened(name == null ? rawName : name));
          String detail =
              "The query parameter '"
                  + named
                  + "' is not UTF-8 text once percent-decoded ('"
                  + LogText.oneLine(LogText.shortened(pair))
                  + "'): "
                  + HOW;
          return invalid(detail, new Problem.FieldError(named, detail));
        }
      }
    }
    return null;
  }

  /** Nothing to decode or refuse: no escape, no byte outside ASCII, no ';'. */
  private static boolean isPlain(String target) {
    for (int i = 0; i < target.length(); i++) {
      char c = target.charAt(i);
      if (c == '%' || c >= 0x80 || c == ';') {
        return false;
      }
    }
    return true;
  }

  /**
   * The text these percent-encoded UTF-8 bytes spell ('+' a space in a query), or null when they
   * spell none: bytes that are not UTF-8, or an escape that is not one.
   */
  static String decoded(String encoded, boolean query) {
    if (encoded.indexOf('%') < 0) {
      return query ? encoded.replace('+', ' ') : encoded;
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(encoded.length());
    for (int i = 0; i < encoded.length(); i++) {
      char c = encoded.charAt(i);
      if (c == '%') {
        int high = i + 2 < encoded.length() ? Character.digit(encoded.charAt(i + 1), 16) : -1;
        int low = high < 0 ? -1 : Character.digit(encoded.charAt(i + 2), 16);
        if (low < 0) {
          return null;
        }
        bytes.write(high * 16 + low);
        i += 2;
      } else {
        bytes.write(query && c == '+' ? ' ' : c); // ASCII, as checked before
      }
    }
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes.toByteArray()))
          .toString();
    } catch (CharacterCodingException notUtf8) {
      return null;
    }
  }

  private static RestResponse<Problem> invalid(String detail, Problem.FieldError field) {
    return ProblemMappers.problem(
        400, "invalid-request", "Invalid request", detail, field == null ? null : List.of(field));
  }
}
