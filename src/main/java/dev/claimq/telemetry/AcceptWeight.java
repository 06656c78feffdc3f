package dev.claimq.telemetry;

import java.util.regex.Pattern;

/**
 * A media range's weight in an Accept header (q=0.5), as RFC 9110 (12.4.2) spells it: 0 to 1, up to
 * three decimals. Both readers of Accept, the API's and /q/metrics', refuse any other spelling in
 * these words: their parsers read q=abc or q=1.5 as some weight.
 */
public final class AcceptWeight {
  private static final Pattern WEIGHT = Pattern.compile("0(\\.[0-9]{0,3})?|1(\\.0{0,3})?");

  private AcceptWeight() {}

  public static boolean isOne(String value) {
    return value != null && WEIGHT.matcher(value).matches();
  }

  /** The 406's detail for an Accept header that gives this weight. */
  public static String notOne(String accept, String weight) {
    return "The Accept header '"
        + LogText.oneLine(LogText.shortened(accept))
        + "' gives the weight q="
        + LogText.oneLine(LogText.shortened(weight))
        + ", which is not one: a weight is 0 to 1 with up to three decimals, such as q=0.5.";
  }
}
