package dev.claimq.api;

import dev.claimq.telemetry.LogText;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The entity tag of a queue policy's or an item's version, {@code "7"} for version 7, and the
 * If-Match that names it (RFC 9110, 8.8.3 and 13.1.1): a list of entity tags, or {@code *}. Tags
 * are compared strongly, so a weak one ({@code W/"7"}) or one that is no version of ours matches
 * nothing (an If-Match of weak tags alone is refused at once, with a 412 that says why: a proxy
 * that compresses answers makes them); one that is not an entity tag at all is refused with 400,
 * since guessing what it meant could overwrite a change. If-None-Match (13.1.2) is read the same
 * way.
 */
final class EntityTags {
  static final String IF_MATCH = "If-Match";
  static final String IF_NONE_MATCH = "If-None-Match";

  /** One list element: an entity tag (W/ marks it weak), then a comma or the end. */
  private static final Pattern ELEMENT =
      Pattern.compile("[ \\t]*(W/)?\"([\\x21\\x23-\\x7e\\x80-\\xff]*)\"[ \\t]*(,|$)");

  private static final Pattern VERSION = Pattern.compile("0|[1-9][0-9]{0,17}");

  private EntityTags() {}

  static String of(long version) {
    return "\"" + version + "\"";
  }

  /**
   * The versions the If-Match header lines name; null when there is none or it is {@code *} (a
   * policy always has a representation, defaults at least, and an item that does not exist is a 404
   * anyway), so that the request is unconditional.
   */
  static long[] versions(List<String> lines) {
    List<Tag> tags = tags(IF_MATCH, lines);
    if (tags == null) {
      return null;
    }
    if (tags.stream().allMatch(Tag::weak)) {
      // Not "it changed since the read": nothing was compared. A proxy that compresses answers
      // weakens the tags it passes on, and a client sends back what it was given.
      throw new Outcomes.RefusedException(
          new Outcomes.Status(412, "precondition-failed", "Precondition failed"),
          "If-Match names only weak entity tags ("
              + LogText.oneLine(LogText.shortened(String.join(", ", lines)))
              + "), and If-Match compares strongly, so a weak tag matches no version: nothing"
              + " was done. A proxy that compresses answers marks the ETags it passes on weak"
              + " (W/): claimq's tags are versions, so send the tag you read without W/, or have"
              + " the proxy leave claimq's answers uncompressed.");
    }
    return tags.stream()
        .filter(tag -> !tag.weak() && VERSION.matcher(tag.opaque()).matches())
        .mapToLong(tag -> Long.parseLong(tag.opaque()))
        .toArray();
  }

  /**
   * Whether an If-None-Match's header lines (not null) name this entity tag, as a GET compares
   * them: weakly, so W/"7" names "7" (RFC 9110, 13.1.2); * names any representation, and tags none
   * of an answer without an entity tag (null).
   */
  static boolean noneMatchNames(List<String> lines, String etag) {
    List<Tag> tags = tags(IF_NONE_MATCH, lines);
    return tags == null
        || (etag != null && tags.stream().anyMatch(tag -> etag.equals("\"" + tag.opaque() + "\"")));
  }

  /** One entity tag of a list: its opaque part, and whether W/ made it weak. */
  record Tag(boolean weak, String opaque) {}

  /**
   * The entity tags a precondition's header lines list; null when there is none or it is {@code *}.
   * A value that is not such a list is refused with 400 naming the header.
   */
  static List<Tag> tags(String header, List<String> lines) {
    if (lines == null || lines.isEmpty()) {
      return null;
    }
    String value = String.join(",", lines).strip();
    if (value.equals("*")) {
      return null;
    }
    List<Tag> tags = new ArrayList<>();
    int at = 0;
    while (at < value.length()) {
      // Empty elements (", ,") are allowed in a list; a recipient skips them.
      if (value.charAt(at) == ',' || value.charAt(at) == ' ' || value.charAt(at) == '\t') {
        at++;
        continue;
      }
      Matcher element = ELEMENT.matcher(value).region(at, value.length());
      if (!element.lookingAt()) {
        throw new BadRequestException(
            header,
            "'"
                + header
                + "' must be * or a list of entity tags, such as \"7\" (the ETag a read"
                + " answered): its value "
                + "'"
                + LogText.shortened(value)
                + "' is not.");
      }
      tags.add(new Tag(element.group(1) != null, element.group(2)));
      at = element.end();
    }
    if (tags.isEmpty()) {
      throw new BadRequestException(header, "'" + header + "' is empty: send * or an entity tag.");
    }
    return tags;
  }
}
