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
 * Refuses a body that would be read otherwise than it was declared: one whose Content-Type names a
 * charset other than UTF-8. Every body is read as UTF-8 (see CheckedJsonReader), so ISO-8859-1
 * text, say, would be stored as other characters than the client sent: a 415 that names the charset
 * instead. US-ASCII too: ASCII text is UTF-8 already, and declaring it as UTF-8 (or not at all)
 * costs the client nothing, while reading it as declared would mean refusing every other byte.
 * Checked before the body is read; a request without a body has nothing to misread.
 */
public class BodyEncoding {

  @ServerRequestFilter
  public void refuse(ContainerRequestContext request) {
    if (AmbiguousRequests.hasBody(request)) {
      String why = whyUnreadable(request.getHeaderString("Content-Type"));
      if (why != null) {
        throw new UnreadableBodyException(why);
      }
    }
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
            + LogText.oneLine(Params.shorten(charset))
            + "': this API reads UTF-8 only. Send the body as UTF-8, with charset=utf-8 or no"
            + " charset.";
      }
    }
    return null;
  }

  /**
   * The parameters of a media type, each "name=value" as sent: what follows each ';' that is not
   * inside a quoted string (RFC 9110, 5.6.6).
   */
  private static List<String> parameters(String mediaType) {
    List<String> parameters = new ArrayList<>();
    boolean quoted = false;
    int start = -1;
    for (int i = 0; i < mediaType.length(); i++) {
      char c = mediaType.charAt(i);
      if (quoted && c == '\\') {
        i++;
      } else if (c == '"') {
        quoted = !quoted;
      } else if (c == ';' && !quoted) {
        if (start >= 0) {
          parameters.add(mediaType.substring(start, i));
        }
        start = i + 1;
      }
    }
    if (start >= 0) {
      parameters.add(mediaType.substring(start));
    }
    return parameters;
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
    return ProblemMappers.problem(
        415, "about:blank", "Unsupported Media Type", e.getMessage(), null);
  }

  /** A body declared in a way it is not read (415). */
  static final class UnreadableBodyException extends RuntimeException {
    UnreadableBodyException(String detail) {
      super(detail, null, false, false);
    }
  }
}
