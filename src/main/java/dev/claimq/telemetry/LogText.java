package dev.claimq.telemetry;

import java.util.Locale;

/**
 * Client-supplied text on its way into a log line (a worker's name, a field name, a reason): CR, LF
 * and other control characters are escaped, so no request can start a log line of its own, and so
 * are bidirectional controls, so none can reorder what a viewer shows.
 */
public final class LogText {
  private LogText() {}

  /** At most 80 characters of value, never cut between the two UTF-16 units of one; "" for null. */
  public static String shortened(String value) {
    if (value == null) {
      return "";
    }
    return value.codePointCount(0, value.length()) <= 80
        ? value
        : value.substring(0, value.offsetByCodePoints(0, 80)) + "…";
  }

  /** A client's value as a detail quotes it: on one line, cut short if long, in single quotes. */
  public static String quoted(String value) {
    return "'" + oneLine(shortened(value)) + "'";
  }

  public static String oneLine(String text) {
    if (text == null) {
      return null;
    }
    StringBuilder escaped = new StringBuilder(text.length());
    text.codePoints()
        .forEach(
            c -> {
              switch (c) {
                case '\\' -> escaped.append("\\\\");
                case '\n' -> escaped.append("\\n");
                case '\r' -> escaped.append("\\r");
                case '\t' -> escaped.append("\\t");
                default -> {
                  if (Character.isISOControl(c)
                      || c == 0x2028
                      || c == 0x2029
                      || c == 0x85
                      || isBidiControl(c)) {
                    escaped.append(String.format(Locale.ROOT, "\\u%04x", c));
                  } else {
                    escaped.appendCodePoint(c);
                  }
                }
              }
            });
    return escaped.toString();
  }

  /**
   * The marks and embeddings that reorder the text around them: a log viewer would show a line
   * other than the one written ("…txt.exe" as "…exe.txt").
   */
  private static boolean isBidiControl(int c) {
    return c == 0x061C
        || c == 0x200E
        || c == 0x200F
        || (c >= 0x202A && c <= 0x202E)
        || (c >= 0x2066 && c <= 0x2069);
  }
}
