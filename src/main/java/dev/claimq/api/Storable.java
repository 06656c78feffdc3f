package dev.claimq.api;

import java.math.BigDecimal;
import java.util.Locale;

/**
 * What PostgreSQL stores exactly as sent. Its text and jsonb cannot hold U+0000, and the driver
 * would turn a lone surrogate into '?', so two distinct keys could become one; numbers are stored
 * as numeric, exactly, but a huge exponent would overflow it or expand into a huge text. Each check
 * answers why a value cannot be stored, or null when it can.
 */
public final class Storable {
  /** Digits a payload number may have before, and after, its decimal point. */
  static final int MAX_NUMBER_DIGITS = 1000;

  /**
   * Digits a number may be written with in all, its exponent's included: those of the longest
   * number that can be stored, as the service answers it (1,000 before the point and 1,000 after),
   * and an exponent of up to 10 (a scale is an int). A longer one is refused before it is read as a
   * number, so no number costs more to read than one that can be stored.
   */
  static final int MAX_NUMBER_WRITTEN = 2 * MAX_NUMBER_DIGITS + 10;

  static final String TOO_MANY_DIGITS =
      "is a number with more than "
          + MAX_NUMBER_DIGITS
          + " digits before or after the decimal point";

  static final String WRITTEN_TOO_LONG =
      "is a number written with more than "
          + MAX_NUMBER_WRITTEN
          + " digits (a number may have "
          + MAX_NUMBER_DIGITS
          + " digits before the decimal point and "
          + MAX_NUMBER_DIGITS
          + " after it, and an exponent)";

  private Storable() {}

  /** Why this text cannot be stored as sent; null when it can. */
  public static String whyNotText(String text, boolean nulAllowed) {
    // The position counts characters (code points), as the limits do: an emoji before it is one.
    int at = 0;
    for (int i = 0; i < text.length(); at++) {
      int c = text.codePointAt(i);
      if (c == 0 && !nulAllowed) {
        return "contains U+0000 (NUL) at character " + at + ", which cannot be stored";
      }
      // codePointAt answers a surrogate itself only when it is not half of a pair.
      if (c >= Character.MIN_SURROGATE && c <= Character.MAX_SURROGATE) {
        return loneSurrogate((char) c, at);
      }
      i += Character.charCount(c);
    }
    return null;
  }

  /** Why this number cannot be stored exactly within the bounds; null when it can. */
  static String whyNotNumber(BigDecimal number) {
    long before = (long) number.precision() - number.scale();
    if (before > MAX_NUMBER_DIGITS || number.scale() > MAX_NUMBER_DIGITS) {
      return TOO_MANY_DIGITS;
    }
    return null;
  }

  private static String loneSurrogate(char c, int at) {
    return String.format(
        Locale.ROOT,
        "is not valid Unicode: a lone surrogate U+%04X at character %d (send the character"
            + " itself, or its escaped surrogate pair)",
        (int) c,
        at);
  }
}
