package dev.claimq.telemetry;

/**
 * Client-supplied text on its way into a log line (a worker's name, a field name, a reason): CR, LF
 * and other control characters are escaped, so no request can start a log line of its own.
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
                  if (Character.isISOControl(c) || c == 0x2028 || c == 0x2029 || c == 0x85) {
                    escaped.append(String.format("\\u%04x", c));
                  } else {
                    escaped.appendCodePoint(c);
                  }
                }
              }
            });
    return escaped.toString();
  }
}
