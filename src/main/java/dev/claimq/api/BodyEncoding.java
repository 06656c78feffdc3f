package dev.claimq.api;

import dev.claimq.telemetry.LogText;
import jakarta.ws.rs.container.ContainerRequestContext;
import java.nio.charset.Charset;
import java.nio.charset.IllegalCharsetNameException;
import java.nio.charset.StandardCharsets;
import java.nio.charset.UnsupportedCharsetException;
import java.util.ArrayList;
import java.util.List;
import org.jboss.resteasy.reactive.RestResponse;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;

/**
 * Refuses a body that would be read otherwise than it was declared, before it is read (a request
 * without a body has nothing to misread), with a 415 that names the declaration:
 *
 * <ul>
 *   <li>a Content-Type naming a charset other than UTF-8. Every body is read as UTF-8 (see
 *       CheckedJsonReader), so ISO-8859-1 text, say, would be stored as other characters than the
 *       client sent. US-ASCII too: ASCII text is UTF-8 already, and declaring it as UTF-8 (or not
 *       at all) costs the client nothing, while reading it as declared would mean refusing every
 *       other byte.
 *   <li>a Content-Encoding other than identity. Nothing here undoes a content coding (Quarkus's
 *       request decompression stays off, application.properties), so a gzip body was refused as
 *       "not UTF-8", which sent the client looking in the wrong place. The answer carries
 *       Accept-Encoding: identity, as RFC 9110 (15.5.16) suggests.
 *   <li>more than one Content-Type. The first was read and the others dropped, so application/json
 *       then text/plain was read as JSON, and the other order refused.
 * </ul>
 */
public class BodyEncoding {
  /** The content codings a body may be sent with, as a 415 for another one says. */
  public static final String ACCEPTED_CODINGS = "identity";

  @ServerRequestFilter
  public void refuse(ContainerRequestContext request) {
    if (AmbiguousRequests.hasBody(request)) {
      String coded = whyCoded(request.getHeaderString("Content-Encoding"));
      if (coded != null) {
        throw new UnreadableBodyException(coded, true);
      }
      String types = whyNotOneType(request.getHeaders().get("Content-Type"));
      if (types != null) {
        throw new UnreadableBodyException(types, false);
      }
      String unreadable = whyUnreadable(request.getHeaderString("Content-Type"));
      if (unreadable != null) {
        throw new UnreadableBodyException(unreadable, false);
      }
    }
  }

  /**
   * Null when a body sent with this Content-Encoding (all its values, joined with commas; null for
   * none) is read as it was sent; else the detail it is refused with (415). Empty list elements say
   * nothing and are ignored, as RFC 9110 (5.6.1) asks.
   */
  public static String whyCoded(String contentEncoding) {
    if (contentEncoding == null) {
      return null;
    }
    for (String coding : contentEncoding.split(",")) {
      if (!coding.isBlank() && !coding.strip().equalsIgnoreCase("identity")) {
        return "The body is sent with Content-Encoding '"
            + LogText.oneLine(LogText.shortened(contentEncoding.strip()))
            + "': this API takes no content coding. Send the body as it is, without"
            + " Content-Encoding (or with identity).";
      }
    }
    return null;
  }

  /**
   * Null when the request carries at most one Content-Type header line; else the detail it is
   * refused with (415): which one says how to read the body would be a guess. For /mcp too.
   */
  public static String whyNotOneType(List<String> contentTypes) {
    if (contentTypes == null || contentTypes.size() < 2) {
      return null;
    }
    return "The request carries "
        + contentTypes.size()
        + " Content-Type headers: send exactly one, the body's media type.";
  }

  /**
   * Null when a body sent with this Content-Type is read as it was declared; else the detail it is
   * refused with (415). For /mcp too, whose body no REST filter sees.
   */
  public static String whyUnreadable(String contentType) {
    if (contentType == null) {
      return null;
    }
    for (String parameter : parameters(contentType)) {
      int equals = parameter.indexOf('=');
      if (equals < 0 || !parameter.substring(0, equals).strip().equalsIgnoreCase("charset")) {
        continue;
      }
      String charset = unquoted(parameter.substring(equals + 1).strip());
      if (!isUtf8(charset)) {
        return "The Content-Type header declares the charset '"
            + LogText.oneLine(LogText.shortened(charset))
            + "': this API reads UTF-8 only. Send the body as UTF-8, with charset=utf-8 or no"
            + " charset.";
      }
    }
    return null;
  }

  /**
   * Null when a body sent with this Content-Type is declared as JSON; else the detail it is refused
   * with (415). For /mcp, where no REST resource's @Consumes decides it.
   */
  public static String whyNotJson(String contentType) {
    if (contentType != null
        && split(contentType, ';').get(0).strip().equalsIgnoreCase("application/json")) {
      return null;
    }
    return (contentType == null
            ? "The body is sent without a Content-Type"
            : "The body is sent as '"
                + LogText.oneLine(LogText.shortened(contentType.strip()))
                + "'")
        + ": this endpoint reads application/json only. Send Content-Type: application/json.";
  }

  /**
   * The parameters of a media type, each "name=value" as sent: what follows each ';' that is not
   * inside a quoted string (RFC 9110, 5.6.6).
   */
  static List<String> parameters(String mediaType) {
    List<String> parts = split(mediaType, ';');
    return parts.subList(1, parts.size());
  }

  /** A header value's parts between the separators that are not inside a quoted string. */
  static List<String> split(String value, char separator) {
    List<String> parts = new ArrayList<>();
    boolean quoted = false;
    int start = 0;
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (quoted && c == '\\') {
        i++;
      } else if (c == '"') {
        quoted = !quoted;
      } else if (c == separator && !quoted) {
        parts.add(value.substring(start, i));
        start = i + 1;
      }
    }
    parts.add(value.substring(start));
    return parts;
  }

  private static String unquoted(String value) {
    if (value.length() < 2 || value.charAt(0) != '"' || value.charAt(value.length() - 1) != '"') {
      return value;
    }
    return value.substring(1, value.length() - 1).replaceAll("\\\\(.)", "$1");
  }

  /** UTF-8 by any of its names ("utf-8", "UTF8"): the body is then read as declared. */
  private static boolean isUtf8(String label) {
    try {
      return Charset.forName(label).equals(StandardCharsets.UTF_8);
    } catch (IllegalCharsetNameException | UnsupportedCharsetException unknown) {
      return false;
    }
  }

  @ServerExceptionMapper
  public RestResponse<Problem> unreadable(UnreadableBodyException e) {
    RestResponse<Problem> problem =
        ProblemMappers.problem(415, "about:blank", "Unsupported Media Type", e.getMessage(), null);
    return e.coded
        ? RestResponse.ResponseBuilder.fromResponse(problem)
            .header("Accept-Encoding", ACCEPTED_CODINGS)
            .build()
        : problem;
  }

  /** A body declared in a way it is not read (415); coded when the declaration is a coding. */
  static final class UnreadableBodyException extends RuntimeException {
    final boolean coded;

    UnreadableBodyException(String detail, boolean coded) {
      super(detail, null, false, false);
      this.coded = coded;
    }
  }
}
