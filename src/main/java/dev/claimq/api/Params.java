package dev.claimq.api;

import dev.claimq.queue.Outcome;
import dev.claimq.store.ItemState;
import dev.claimq.telemetry.LogText;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.chrono.IsoChronology;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.DateTimeParseException;
import java.time.format.ResolverStyle;
import java.time.temporal.ChronoField;
import java.util.Arrays;
import java.util.Base64;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/** Parsing of path and query parameters, with answers a client can act on. */
final class Params {
  static final String QUEUE_NAME = "^[a-z0-9][a-z0-9._-]{0,63}$";
  static final String QUEUE_NAME_RULE =
      "must be 1-64 characters of a-z, 0-9, '.', '_' or '-', starting with a letter or digit";
  private static final Pattern QUEUE = Pattern.compile(QUEUE_NAME);
  private static final Pattern ID = Pattern.compile("^[1-9][0-9]{0,17}$");
  private static final Pattern DIGITS = Pattern.compile("^[0-9]{1,9}$");
  private static final String CURSOR_PREFIX = "before:";
  private static final String NAME_CURSOR_PREFIX = "after:";
  static final Instant EARLIEST = Instant.parse("1970-01-01T00:00:00Z");
  static final Instant LATEST = Instant.parse("9999-12-31T23:59:59.999999Z");

  /**
   * RFC 3339's date-time (section 5.6): a year of four digits, seconds always, a fraction when
   * wanted, an offset of hours and minutes or Z; T and Z in either case. OffsetDateTime.parse takes
   * more (no seconds, an offset of hours alone or with seconds), which a client would see accepted
   * here and refused by any other RFC 3339 reader.
   */
  private static final DateTimeFormatter RFC_3339 =
      new DateTimeFormatterBuilder()
          .parseCaseInsensitive()
          // Four digits, no sign: ISO_LOCAL_DATE's year takes +02026 as 2026, a rewrite.
          .appendValue(ChronoField.YEAR, 4)
          .appendLiteral('-')
          .appendValue(ChronoField.MONTH_OF_YEAR, 2)
          .appendLiteral('-')
          .appendValue(ChronoField.DAY_OF_MONTH, 2)
          .appendLiteral('T')
          .appendValue(ChronoField.HOUR_OF_DAY, 2)
          .appendLiteral(':')
          .appendValue(ChronoField.MINUTE_OF_HOUR, 2)
          .appendLiteral(':')
          .appendValue(ChronoField.SECOND_OF_MINUTE, 2)
          .optionalStart()
          .appendFraction(ChronoField.NANO_OF_SECOND, 1, 9, true)
          .optionalEnd()
          .appendOffset("+HH:MM", "Z")
          .toFormatter(Locale.ROOT)
          .withResolverStyle(ResolverStyle.STRICT)
          .withChronology(IsoChronology.INSTANCE);

  private Params() {}

  /** A time's fraction of more than nine digits (group 1), which Java's time does not read. */
  private static final Pattern MORE_THAN_NANOSECONDS =
      Pattern.compile(
          "\\d{4}-\\d{2}-\\d{2}[Tt]\\d{2}:\\d{2}:\\d{2}\\.(\\d{10,})([Zz]|[+-]\\d{2}:\\d{2})");

  /** A date and a time separated by a space, which RFC 3339's grammar does not have. */
  private static final Pattern SPACED = Pattern.compile("\\d{4}-\\d{2}-\\d{2} \\d{2}:");

  /**
   * Whether the value is RFC 3339's date-time but for its second being 60, a leap second: the
   * syntax allows it, and Java's time (so the stored one) has none. Only the refusal's words depend
   * on it.
   */
  /**
   * Why a time that is RFC 3339 but for a fraction of more than nine digits (RFC 3339 allows any
   * number) is not taken; null when it is not such a time. Only the refusal's words depend on it.
   */
  private static String tooManyFractionDigits(String field, String value) {
    Matcher written = MORE_THAN_NANOSECONDS.matcher(value);
    if (!written.matches()) {
      return null;
    }
    String digits = written.group(1);
    try {
      // The rest of it must be a time, for the fraction to be what is wrong.
      OffsetDateTime.parse(
          value.substring(0, written.start(1) + 9) + value.substring(written.end(1)), RFC_3339);
    } catch (DateTimeParseException e) {
      return null;
    }
    return digits.substring(6).chars().allMatch(digit -> digit == '0')
        ? field
            + " has more than nine fraction digits, which are not read here: send six at most"
            + " (microseconds are what is stored); got '"
            + LogText.shortened(value)
            + "'."
        : tooPrecise(field, value);
  }

  private static String tooPrecise(String field, String value) {
    return field
        + " has more precision than the microseconds that are stored; got '"
        + LogText.shortened(value)
        + "'.";
  }

  private static boolean isLeapSecond(String value) {
    // Seconds at 17 and 18: a four-digit year, then -MM-DDTHH:MM: (the only years stored).
    if (value.length() < 20 || !value.startsWith("60", 17)) {
      return false;
    }
    try {
      OffsetDateTime.parse(value.substring(0, 17) + "59" + value.substring(19), RFC_3339);
      return true;
    } catch (DateTimeParseException e) {
      return false;
    }
  }

  /**
   * True when the value is RFC 3339 but for an offset past ±18:00, which RFC 3339 allows (up to
   * ±23:59) and Java's time, as PostgreSQL's, does not.
   */
  private static boolean isOffsetPast18Hours(String value) {
    int sign = value.length() - 6;
    if (sign < 0 || (value.charAt(sign) != '+' && value.charAt(sign) != '-')) {
      return false;
    }
    try {
      OffsetDateTime.parse(value.substring(0, sign) + "Z", RFC_3339);
      int hours = Integer.parseInt(value.substring(sign + 1, sign + 3));
      int minutes = Integer.parseInt(value.substring(sign + 4));
      return value.charAt(sign + 3) == ':'
          && hours <= 23
          && minutes <= 59
          && hours * 60 + minutes > 18 * 60;
    } catch (DateTimeParseException | NumberFormatException e) {
      return false;
    }
  }

  static String queue(String name) {
    if (name == null || !QUEUE.matcher(name).matches()) {
      throw new BadRequestException(
          "queue", "Queue name '" + LogText.shortened(name) + "' " + QUEUE_NAME_RULE + ".");
    }
    return name;
  }

  /** Item ids are opaque to clients: anything that is not one of ours names no item. */
  static long itemId(String id) {
    if (id == null || !ID.matcher(id).matches()) {
      throw new Outcomes.RefusedException(Outcome.NOT_FOUND, LogText.shortened(id), null);
    }
    return Long.parseLong(id);
  }

  /** In a batch, an id that is not one of ours names no item: 0, which answers 404 per entry. */
  static long itemIdOrZero(String id) {
    return id != null && ID.matcher(id).matches() ? Long.parseLong(id) : 0;
  }

  static ItemState state(String name) {
    if (name == null) {
      return null;
    }
    ItemState state = ItemState.fromWireName(name);
    if (state == null) {
      String valid =
          Arrays.stream(ItemState.values())
              .map(ItemState::wireName)
              .collect(Collectors.joining(", "));
      throw new BadRequestException(
          "state", "State '" + LogText.shortened(name) + "' is not one of: " + valid + ".");
    }
    return state;
  }

  /**
   * A boolean query parameter: absent is false; anything but true or false is a 400, an empty value
   * too (it says nothing, and guessing would be rewriting it).
   */
  static boolean bool(String field, String value) {
    if (value == null || value.equals("false")) {
      return false;
    }
    if (value.equals("true")) {
      return true;
    }
    throw new BadRequestException(
        field, "'" + field + "' must be true or false, not '" + LogText.shortened(value) + "'.");
  }

  /**
   * The longest providerKeyTtl: 3,650 days, longer than any provider keeps a key. The statements
   * add it to timestamps as an interval; a value near Long.MAX_VALUE seconds overflowed that
   * interval, and every fail, retry and lease reap that read it failed.
   */
  static final java.time.Duration MAX_PROVIDER_KEY_TTL = java.time.Duration.ofDays(3_650);

  /**
   * An ISO 8601 duration of whole seconds, e.g. PT24H, at most max, in the one spelling Duration
   * writes; null when absent.
   */
  static Long durationSeconds(String field, String value, java.time.Duration max) {
    if (value == null) {
      return null;
    }
    java.time.Duration duration;
    try {
      duration = java.time.Duration.parse(value);
    } catch (java.time.format.DateTimeParseException e) {
      throw new BadRequestException(
          field,
          "'"
              + field
              + "' must be an ISO 8601 duration such as PT24H, not '"
              + LogText.shortened(value)
              + "'.");
    }
    if (duration.isNegative() || duration.isZero() || duration.getNano() != 0) {
      throw new BadRequestException(
          field, "'" + field + "' must be a positive number of whole seconds, e.g. PT24H.");
    }
    if (duration.compareTo(max) > 0) {
      throw new BadRequestException(
          field,
          "'" + field + "' must be at most " + max + ", not '" + LogText.shortened(value) + "'.");
    }
    // One spelling per value, the one it is answered in: Duration.parse also reads pt24h, P1D,
    // PT86400S or -PT-24H, which, stored as seconds, would come back as PT24H, not as sent.
    if (!duration.toString().equals(value)) {
      throw new BadRequestException(
          field,
          "'"
              + field
              + "' must be written as "
              + duration
              + ", not '"
              + LogText.shortened(value)
              + "': hours, minutes and seconds (PTnHnMnS), minutes and seconds under 60, without"
              + " the parts that are 0.");
    }
    return duration.getSeconds();
  }

  static int limit(String value, int defaultLimit, int maxLimit) {
    if (value == null) {
      return defaultLimit;
    }
    // ASCII digits only: Integer.parseInt also reads "+5" and other scripts' digits ("٥", "５").
    if (DIGITS.matcher(value).matches()) {
      int limit = Integer.parseInt(value);
      if (limit >= 1 && limit <= maxLimit) {
        return limit;
      }
    }
    throw new BadRequestException(
        "limit",
        "limit must be a whole number from 1 to "
            + maxLimit
            + ", got '"
            + LogText.shortened(value)
            + "'.");
  }

  /**
   * An RFC 3339 timestamp with an offset (Z or +01:00), within what PostgreSQL's timestamptz stores
   * exactly: years 1970 to 9999, to the microsecond. Null for none.
   */
  static Instant timestamp(String field, String value) {
    if (value == null) {
      return null;
    }
    Instant instant;
    try {
      instant = OffsetDateTime.parse(value, RFC_3339).toInstant();
    } catch (DateTimeParseException e) {
      if (isLeapSecond(value)) {
        throw new BadRequestException(
            field,
            field
                + " names a leap second (second 60): RFC 3339 allows one, but times here are kept"
                + " without leap seconds, so it is not accepted; send a second from 00 to 59; got '"
                + LogText.shortened(value)
                + "'.");
      }
      if (isOffsetPast18Hours(value)) {
        throw new BadRequestException(
            field,
            field
                + " has an offset past 18 hours: RFC 3339 allows one up to 23:59, but times here"
                + " take offsets from -18:00 to +18:00, so it is not accepted; send the time in"
                + " UTC (Z) or with a smaller offset; got '"
                + LogText.shortened(value)
                + "'.");
      }
      String tooManyDigits = tooManyFractionDigits(field, value);
      if (tooManyDigits != null) {
        throw new BadRequestException(field, tooManyDigits);
      }
      throw new BadRequestException(
          field,
          field
              + " must be an RFC 3339 timestamp with an offset, such as 2026-11-30T09:00:00Z"
              + (SPACED.matcher(value).lookingAt()
                  ? " ('T' between the date and the time, as RFC 3339's grammar has it, not a"
                      + " space)"
                  : "")
              + "; got '"
              + LogText.shortened(value)
              + "'.");
    }
    if (instant.isBefore(EARLIEST) || instant.isAfter(LATEST)) {
      throw new BadRequestException(
          field,
          field
              + " must be from "
              + EARLIEST
              + " to "
              + LATEST
              + "; got '"
              + LogText.shortened(value)
              + "'.");
    }
    if (instant.getNano() % 1000 != 0) {
      throw new BadRequestException(field, tooPrecise(field, value));
    }
    return instant;
  }

  /** A reason filter from a body: 1 to 500 characters, matched as written; null for none. */
  static String reason(String value) {
    return text("reason", value);
  }

  /**
   * Free text to look for (a reason, a key), 1 to 500 characters, as written; null for none. A
   * query parameter comes here still percent-encoded (@Encoded) and is decoded strictly: bytes that
   * are not UTF-8 are refused, not turned into U+FFFD and looked for.
   */
  static String encodedText(String field, String encoded) {
    if (encoded == null) {
      return null;
    }
    java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
    for (int i = 0; i < encoded.length(); i++) {
      char c = encoded.charAt(i);
      if (c == '%' && i + 2 < encoded.length()) {
        int high = Character.digit(encoded.charAt(i + 1), 16);
        int low = Character.digit(encoded.charAt(i + 2), 16);
        if (high < 0 || low < 0) {
          throw new BadRequestException(field, field + " has a broken percent-encoding.");
        }
        bytes.write(high * 16 + low);
        i += 2;
      } else if (c == '%') {
        throw new BadRequestException(field, field + " has a broken percent-encoding.");
      } else if (c == '+') {
        bytes.write(' ');
      } else {
        byte[] plain = String.valueOf(c).getBytes(java.nio.charset.StandardCharsets.UTF_8);
        bytes.write(plain, 0, plain.length);
      }
    }
    String decoded;
    try {
      decoded =
          java.nio.charset.StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
              .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPORT)
              .decode(java.nio.ByteBuffer.wrap(bytes.toByteArray()))
              .toString();
    } catch (java.nio.charset.CharacterCodingException e) {
      throw new BadRequestException(field, field + " is not UTF-8 text.");
    }
    return text(field, decoded);
  }

  /**
   * A query parameter's value as it was sent, still percent-encoded; null when absent. Its name is
   * compared decoded, as JAX-RS compares it: "re%61son" is reason, not a parameter to ignore.
   * (Repeats, in any spelling, are refused before a resource runs, by AmbiguousRequests.)
   */
  static String rawQuery(jakarta.ws.rs.core.UriInfo uri, String name) {
    String query = uri.getRequestUri().getRawQuery();
    if (query == null) {
      return null;
    }
    for (String pair : query.split("&")) {
      int equals = pair.indexOf('=');
      String key = equals < 0 ? pair : pair.substring(0, equals);
      if (queryName(key).equals(name)) {
        return equals < 0 ? "" : pair.substring(equals + 1);
      }
    }
    return null;
  }

  /**
   * A query parameter's name as JAX-RS reads it: percent-decoded ("re%61son" is reason). A name
   * whose encoding is broken is kept as sent.
   */
  static String queryName(String raw) {
    try {
      return java.net.URLDecoder.decode(raw, StandardCharsets.UTF_8);
    } catch (IllegalArgumentException brokenEncoding) {
      return raw;
    }
  }

  private static String text(String field, String value) {
    if (value == null) {
      return null;
    }
    // Characters, as the document's maxLength counts them: an emoji is one, not two UTF-16 units.
    int characters = value.codePointCount(0, value.length());
    if (characters < 1 || characters > 500) {
      throw new BadRequestException(
          field, field + " must be 1 to 500 characters; got " + characters + ".");
    }
    if (value.indexOf('\u0000') >= 0) {
      throw new BadRequestException(field, field + " must not contain U+0000.");
    }
    return value;
  }

  /**
   * The cursor of a page that ends above beforeId, in a listing (its filters, and whose items it
   * lists, as {@code listing} says them): a cursor names the listing it was issued for by a
   * fingerprint, so that one sent with other filters is refused, not read as a place in a listing
   * it was never in (which skipped every newer match, silently).
   */
  static String cursor(long beforeId, String listing) {
    return encoded(CURSOR_PREFIX + beforeId + "." + fingerprint(listing));
  }

  /** The id a cursor of this listing points below; null for no cursor. */
  static Long beforeId(String cursor, String listing) {
    if (cursor == null) {
      return null;
    }
    String decoded = issuedText(cursor);
    if (decoded != null) {
      java.util.regex.Matcher issued = ISSUED_CURSOR.matcher(decoded);
      if (issued.matches() && issued.group(2).equals(fingerprint(listing))) {
        return Long.parseLong(issued.group(1));
      }
      if (issued.matches() || NAME_CURSOR.matcher(decoded).matches()) {
        throw anotherListing("other filters, or another key's items");
      }
      if (EARLIER_CURSOR.matcher(decoded).matches()) {
        throw new BadRequestException(
            "cursor",
            "cursor was issued by an earlier version of claimq, whose cursors did not say which"
                + " listing they belong to: start again from the first page (no cursor).");
      }
    }
    throw notIssued();
  }

  /**
   * The cursor of a page of a listing by name (queues) that ends at lastName; like an id cursor, it
   * names its listing by a fingerprint.
   */
  static String cursorAfter(String lastName, String listing) {
    return encoded(NAME_CURSOR_PREFIX + lastName + "/" + fingerprint(listing));
  }

  /** The name a cursor of this listing by name points after; null for no cursor. */
  static String afterName(String cursor, String listing) {
    if (cursor == null) {
      return null;
    }
    String decoded = issuedText(cursor);
    if (decoded != null) {
      java.util.regex.Matcher issued = NAME_CURSOR.matcher(decoded);
      if (issued.matches() && issued.group(2).equals(fingerprint(listing))) {
        return issued.group(1);
      }
      if (issued.matches()
          || ISSUED_CURSOR.matcher(decoded).matches()
          || EARLIER_CURSOR.matcher(decoded).matches()) {
        throw anotherListing("the queues of a key that sees other queues, or items");
      }
    }
    throw notIssued();
  }

  /** A cursor's text, if it is exactly as this service encodes (no padding, say); else null. */
  private static String issuedText(String cursor) {
    try {
      String decoded = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8);
      return encoded(decoded).equals(cursor) ? decoded : null;
    } catch (IllegalArgumentException notBase64) {
      return null;
    }
  }

  /** which: what makes a listing another, as its callers' listings are told apart. */
  private static BadRequestException anotherListing(String which) {
    return new BadRequestException(
        "cursor",
        "cursor was issued for another listing ("
            + which
            + "): pass nextCursor from the previous page of this same listing, or no cursor for"
            + " its first page.");
  }

  private static BadRequestException notIssued() {
    return new BadRequestException(
        "cursor", "cursor is not one this service issued: pass nextCursor from a previous page.");
  }

  /** What a cursor says, decoded: the id its page ended above, and its listing's fingerprint. */
  private static final Pattern ISSUED_CURSOR =
      Pattern.compile("^" + CURSOR_PREFIX + "([1-9][0-9]{0,17})\\.([0-9a-f]{8})$");

  /** What a cursor of a listing by name says: the name its page ended at, and the fingerprint. */
  private static final Pattern NAME_CURSOR =
      Pattern.compile("^" + NAME_CURSOR_PREFIX + "([a-z0-9][a-z0-9._-]{0,63})/([0-9a-f]{8})$");

  /** A cursor as claimq issued it before cursors named their listing. */
  private static final Pattern EARLIER_CURSOR =
      Pattern.compile("^" + CURSOR_PREFIX + "[1-9][0-9]{0,17}$");

  private static String encoded(String text) {
    return Base64.getUrlEncoder()
        .withoutPadding()
        .encodeToString(text.getBytes(StandardCharsets.UTF_8));
  }

  /** Eight hex digits of the listing's SHA-256: enough to tell listings apart by mistake. */
  private static String fingerprint(String listing) {
    try {
      byte[] digest =
          java.security.MessageDigest.getInstance("SHA-256")
              .digest(listing.getBytes(StandardCharsets.UTF_8));
      return java.util.HexFormat.of().formatHex(digest, 0, 4);
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }
}
