package dev.claimq.policy;

import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Makes a worker's failure reason safe to store and show to operators. Provider errors often echo
 * the request that failed, credentials included, so secrets are redacted before anything is
 * written; control characters (other than newline and tab) are dropped; the result is cut short.
 */
public final class FailureReason {
  public static final int MAX_LENGTH = 2000;
  static final String REDACTED = "[REDACTED]";

  private record Rule(Pattern pattern, String replacement) {
    String apply(String text) {
      return pattern.matcher(text).replaceAll(replacement);
    }
  }

  // A quoted value runs to its closing quote, past spaces, delimiters and backslash-escaped
  // quotes, so a multi-word secret goes whole. The opening quote is matched with the key and the
  // closing one only looked at, so both quotes stay around [REDACTED]. If the text was cut before
  // the closing quote, the value runs to the end of the line: what follows is likely the secret.
  // An empty value has nothing to hide, so it is left as it is. The loop is possessive (++): its
  // two branches never overlap, so there is nothing to backtrack into, and a plain loop over a
  // group recurses once per character, which overflows the stack on a long reason.
  private static final String QUOTED =
      "(?:(?<=\")(?:\\\\.|[^\"\\\\\\n])++(?=[\"\\n]|\\z)"
          + "|(?<=')(?:\\\\.|[^'\\\\\\n])++(?=['\\n]|\\z))";
  // Unquoted, a value ends at whitespace or at a character that usually follows one: in running
  // text a multi-word secret cannot be told from the words after it ("api_key: abc is invalid"),
  // so a header such as "X-Api-Key: abc def" keeps "def".
  private static final String UNQUOTED = "[^\\s\"'&,;]+";
  private static final String VALUE = "(?:" + QUOTED + "|" + UNQUOTED + ")";

  // Order matters: whole blocks and structured tokens first, then key=value pairs.
  private static final List<Rule> RULES =
      List.of(
          new Rule(
              Pattern.compile(
                  "-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(-----END [A-Z0-9 ]*PRIVATE KEY-----|$)",
                  Pattern.DOTALL),
              REDACTED),
          // Credentials inside URLs: scheme://user:password@host
          new Rule(
              Pattern.compile("(?i)\\b([a-z][a-z0-9+.-]*://)[^\\s/@:]+:[^\\s/@]+@"),
              "$1" + Matcher.quoteReplacement(REDACTED) + "@"),
          // Authorization headers, whatever the scheme: keep the header name only. A quoted value
          // holds the scheme too; an unquoted one is a scheme, if any, and one word.
          new Rule(
              Pattern.compile(
                  "(?i)\\b((?:proxy-)?authorization[\"']?\\s*[:=]\\s*[\"']?)"
                      + "(?:"
                      + QUOTED
                      + "|(?:[A-Za-z]+\\s+)?"
                      + UNQUOTED
                      + ")"),
              "$1" + Matcher.quoteReplacement(REDACTED)),
          new Rule(
              Pattern.compile("(?i)\\b(bearer)\\s+" + UNQUOTED),
              "$1 " + Matcher.quoteReplacement(REDACTED)),
          new Rule(
              Pattern.compile("\\b(Basic)\\s+[A-Za-z0-9+/]{8,}={0,2}"),
              "$1 " + Matcher.quoteReplacement(REDACTED)),
          // JSON Web Tokens: three base64url parts, the first a JSON header ("eyJ").
          new Rule(
              Pattern.compile("\\beyJ[A-Za-z0-9_-]{5,}\\.[A-Za-z0-9_-]{5,}\\.[A-Za-z0-9_-]*"),
              REDACTED),
          // Well-known key formats: AWS access keys, Stripe, GitHub, Slack.
          new Rule(Pattern.compile("\\b(?:AKIA|ASIA)[0-9A-Z]{16}\\b"), REDACTED),
          new Rule(Pattern.compile("\\b(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{8,}"), REDACTED),
          new Rule(
              Pattern.compile("\\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
              REDACTED),
          new Rule(Pattern.compile("\\bxox[abprs]-[A-Za-z0-9-]{10,}"), REDACTED),
          // key=value and "key": "value" pairs whose key names a secret.
          new Rule(
              Pattern.compile(
                  "(?i)\\b([a-z0-9_.-]*(?:password|passwd|pwd|secret|token|api[_-]?key|apikey"
                      + "|access[_-]?key|private[_-]?key|credential|session[_-]?id|cookie)"
                      + "[a-z0-9_.-]*[\"']?\\s*[:=]\\s*[\"']?)"
                      + VALUE),
              "$1" + Matcher.quoteReplacement(REDACTED)));

  private FailureReason() {}

  public static String sanitize(String reason) {
    String text = stripControlCharacters(reason);
    for (Rule rule : RULES) {
      text = rule.apply(text);
    }
    return truncate(text);
  }

  private static String stripControlCharacters(String text) {
    StringBuilder kept = new StringBuilder(text.length());
    text.codePoints()
        .filter(c -> c == '\n' || c == '\t' || !Character.isISOControl(c))
        .forEach(kept::appendCodePoint);
    return kept.toString();
  }

  /**
   * At most MAX_LENGTH characters (code points, as the README counts them, not UTF-16 units): a
   * longer text keeps its first MAX_LENGTH - 1 and ends in "…". Cutting at a code point never
   * splits a character's surrogate pair.
   */
  private static String truncate(String text) {
    if (text.codePointCount(0, text.length()) <= MAX_LENGTH) {
      return text;
    }
    return text.substring(0, text.offsetByCodePoints(0, MAX_LENGTH - 1)) + "…";
  }
}
