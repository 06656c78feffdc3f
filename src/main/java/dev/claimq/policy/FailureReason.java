package dev.claimq.policy;

import java.util.List;
import java.util.function.UnaryOperator;
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

  private static UnaryOperator<String> rule(Pattern pattern, String replacement) {
    return text -> pattern.matcher(text).replaceAll(replacement);
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
  // Digest credentials: the scheme's comma-separated parameters, quoted or not, all of them.
  private static final String DIGEST_PARAMETERS =
      "(?:[A-Za-z0-9_-]++\\s*+=\\s*+(?:\"(?:\\\\.|[^\"\\\\\\n])*+\"?|[^\\s,\"]*+)(?:\\s*+,\\s*+)?)++";

  // Order matters: whole blocks and structured tokens first, then key=value pairs.
  private static final List<UnaryOperator<String>> RULES =
      List.of(
          rule(
              Pattern.compile(
                  "-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(-----END [A-Z0-9 ]*PRIVATE KEY-----|$)",
                  Pattern.DOTALL),
              REDACTED),
          // Credentials inside URLs: scheme://user:password@host. Matched from the "://", the
          // scheme only looked at, so no start inside a long run of scheme characters scans it
          // again (that grew with the square of the length).
          rule(
              Pattern.compile("(?<=[A-Za-z0-9+.-])://[^\\s/@:]++:[^\\s/@]++@"),
              "://" + Matcher.quoteReplacement(REDACTED) + "@"),
          // Authorization headers, whatever the scheme: keep the header name only. A quoted value
          // holds the scheme too; an unquoted one is a scheme, if any, and one word, or Digest's
          // parameters (also redacted where no header names them).
          rule(
              Pattern.compile(
                  "(?i)\\b((?:proxy-)?authorization[\"']?\\s*[:=]\\s*[\"']?)"
                      + "(?:"
                      + QUOTED
                      + "|Digest\\s++"
                      + DIGEST_PARAMETERS
                      + "|(?:[A-Za-z]+\\s+)?"
                      + UNQUOTED
                      + ")"),
              "$1" + Matcher.quoteReplacement(REDACTED)),
          rule(
              Pattern.compile("(?i)\\b(Digest)\\s++" + DIGEST_PARAMETERS),
              "$1 " + Matcher.quoteReplacement(REDACTED)),
          // "Bearer x", "Bearer: x", and a no-break space as a copied text may have it.
          rule(
              Pattern.compile("(?i)\\b(bearer(?:\\s*+:\\s*+|[\\s\\u00a0]++))" + UNQUOTED),
              "$1" + Matcher.quoteReplacement(REDACTED)),
          rule(
              Pattern.compile("\\b(Basic)\\s+[A-Za-z0-9+/]{8,}={0,2}"),
              "$1 " + Matcher.quoteReplacement(REDACTED)),
          FailureReason::redactWebTokens,
          // Well-known key formats: AWS access keys, Stripe (keys and webhook secrets), GitHub,
          // Slack, SendGrid, Google API keys, Mailgun.
          rule(Pattern.compile("\\b(?:AKIA|ASIA)[0-9A-Z]{16}\\b"), REDACTED),
          rule(Pattern.compile("\\b(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{8,}"), REDACTED),
          rule(Pattern.compile("\\bwhsec_[0-9A-Za-z]{8,}"), REDACTED),
          rule(Pattern.compile("\\bSG\\.[A-Za-z0-9_-]{16,}+\\.[A-Za-z0-9_-]{16,}+"), REDACTED),
          rule(Pattern.compile("\\bAIza[0-9A-Za-z_-]{30,}+"), REDACTED),
          rule(Pattern.compile("\\bkey-[0-9A-Za-z]{32}\\b"), REDACTED),
          rule(
              Pattern.compile("\\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
              REDACTED),
          rule(Pattern.compile("\\bxox[abprs]-[A-Za-z0-9-]{10,}"), REDACTED),
          FailureReason::redactSecretPairs);

  // Rules that look for a name inside a long run of characters are written as a loop, not one
  // regex: a regex started at every word boundary of the run ("a.a.a…", "eyJ-eyJ-…") scans the
  // rest of the run again from each, and 5,000 characters took seconds. The loops match a run from
  // its first character only (the lookbehind), without backtracking (++), and then look into it.

  // JSON Web Tokens: three base64url parts, the first a JSON header ("eyJ") from a word boundary.
  private static final Pattern DOTTED_PARTS =
      Pattern.compile("(?<![A-Za-z0-9_-])([A-Za-z0-9_-]++)\\.[A-Za-z0-9_-]{5,}+\\.[A-Za-z0-9_-]*+");
  private static final Pattern JSON_HEADER = Pattern.compile("(?:^|(?<=-))eyJ[A-Za-z0-9_-]{5}");

  // key=value and "key": "value" pairs whose key names a secret, found in the key's whole run.
  private static final Pattern KEY =
      Pattern.compile("(?i)(?<![a-z0-9_.-])([a-z0-9_.-]++)[\"']?\\s*+[:=]\\s*+[\"']?");
  private static final Pattern SECRET_NAME =
      Pattern.compile(
          "(?i)password|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key"
              + "|private[_-]?key|account[_-]?key|credential|session[_-]?id|cookie|signature"
              // Names that are a secret only alone: a Google "key=", an Azure SAS "sig=".
              + "|^(?:pass|key|sig|auth|x-auth)$");
  private static final Pattern SECRET_VALUE = Pattern.compile(VALUE);

  private FailureReason() {}

  public static String sanitize(String reason) {
    String text = stripControlCharacters(reason);
    for (UnaryOperator<String> rule : RULES) {
      text = rule.apply(text);
    }
    return truncate(text);
  }

  /** Each web token, from its header to the end of its signature, as [REDACTED]. */
  private static String redactWebTokens(String text) {
    Matcher parts = DOTTED_PARTS.matcher(text);
    StringBuilder redacted = new StringBuilder(text.length());
    int copied = 0;
    int from = 0;
    while (parts.find(from)) {
      // Not a token: its second part may start one, "v1.eyJ….….…".
      from = parts.end(1);
      Matcher header = JSON_HEADER.matcher(parts.group(1));
      if (header.find()) {
        redacted.append(text, copied, parts.start(1) + header.start()).append(REDACTED);
        copied = parts.end();
        from = parts.end();
      }
    }
    return redacted.append(text, copied, text.length()).toString();
  }

  /** Each value whose key names a secret, as [REDACTED]; the key and its quotes stay. */
  private static String redactSecretPairs(String text) {
    Matcher key = KEY.matcher(text);
    // Transparent bounds: a quoted value's lookbehind sees its opening quote, before the region.
    Matcher value = SECRET_VALUE.matcher(text).useTransparentBounds(true);
    StringBuilder redacted = new StringBuilder(text.length());
    int copied = 0;
    int from = 0;
    while (key.find(from)) {
      // A key that names no secret may be followed by one: "x=password=abc".
      from = key.end(1);
      if (SECRET_NAME.matcher(key.group(1)).find()
          && value.region(key.end(), text.length()).lookingAt()) {
        redacted.append(text, copied, key.end()).append(REDACTED);
        copied = value.end();
        from = value.end();
      }
    }
    return redacted.append(text, copied, text.length()).toString();
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
