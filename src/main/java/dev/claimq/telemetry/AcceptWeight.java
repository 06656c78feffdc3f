package dev.claimq.telemetry;

import java.util.List;
import java.util.regex.Pattern;

/**
 * A media range's weight in an Accept header, as RFC 9110 (12.4.2) spells it: "q=" and 0 to 1 with
 * up to three decimals, with no space around the "=", once per range. Both readers of Accept, the
 * API's and /q/metrics', refuse any other spelling in these words: their parsers read q=abc or
 * q=1.5 as some weight, and "q =0" as no weight at all.
 */
public final class AcceptWeight {
  private static final Pattern WEIGHT = Pattern.compile("0(\\.[0-9]{0,3})?|1(\\.0{0,3})?");

  private AcceptWeight() {}

  /**
   * Null when the parameters of one media range (each as sent, after its ';') give at most one
   * weight, spelled as RFC 9110 spells it; else the 406's detail, quoting the Accept header.
   */
  public static String whyNot(String accept, List<String> parameters) {
    String weight = null;
    for (String parameter : parameters) {
      String sent = parameter.strip();
      int equals = sent.indexOf('=');
      String name = equals < 0 ? sent : sent.substring(0, equals);
      if (!name.strip().equalsIgnoreCase("q")) {
        continue;
      }
      if (weight != null) {
        return "The Accept header "
            + LogText.quoted(accept)
            + " gives one media range two weights ("
            + LogText.oneLine(LogText.shortened(weight))
            + " and "
            + LogText.oneLine(LogText.shortened(sent))
            + "): give each range at most one.";
      }
      weight = sent;
      if (equals < 0
          || !name.equals(name.strip())
          || !WEIGHT.matcher(sent.substring(equals + 1)).matches()) {
        return "The Accept header "
            + LogText.quoted(accept)
            + " gives the weight "
            + LogText.oneLine(LogText.shortened(sent))
            + ", which is not one: a weight is q= and 0 to 1 with up to three decimals, with no"
            + " space around the =, such as q=0.5.";
      }
    }
    return null;
  }

  /** The weight a range's parameters give it (1 when none), once {@link #whyNot} found none. */
  public static double of(List<String> parameters) {
    for (String parameter : parameters) {
      String sent = parameter.strip();
      if (sent.length() > 2 && sent.regionMatches(true, 0, "q=", 0, 2)) {
        return Double.parseDouble(sent.substring(2));
      }
    }
    return 1;
  }
}
