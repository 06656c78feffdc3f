package dev.claimq.api;

import dev.claimq.telemetry.AcceptWeight;
import dev.claimq.telemetry.LogText;
import jakarta.ws.rs.NotAcceptableException;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ResourceInfo;
import jakarta.ws.rs.core.MediaType;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;

/**
 * Refuses a request whose Accept header excludes every type its endpoint answers with, by a weight
 * of 0: "application/json;q=0" says "anything but JSON", and RESTEasy, which answers a 406 when no
 * listed type matches, takes a listed type at any weight. The weight of a type is that of the most
 * specific range that matches it (RFC 9110, 12.5.1): a wildcard beside application/json;q=0 does
 * not take JSON back, and application/json beside a wildcard of weight 0 does take it. Parameters
 * of a range other than q are not compared: application/json has none (RFC 8259), and RESTEasy does
 * not compare them either.
 *
 * <p>The 406 itself is sent as problem+json, whatever the Accept header says of that: RFC 9110
 * allows an answer the client did not ask for, and a problem it can read is the usual practice. The
 * check runs before the resource does, so a write refused this way changes nothing.
 */
public class AcceptableAnswers {
  private final Map<Method, List<MediaType>> produced = new ConcurrentHashMap<>();

  @ServerRequestFilter
  public void refuse(ContainerRequestContext request, ResourceInfo resource) {
    String accept = request.getHeaderString("Accept");
    // Without a parameter there is no weight: every listed range has weight 1, and RESTEasy has
    // matched one already.
    if (accept == null || accept.indexOf(';') < 0) {
      return;
    }
    Method method = resource == null ? null : resource.getResourceMethod();
    if (method == null) {
      return;
    }
    List<MediaType> types = produced.computeIfAbsent(method, AcceptableAnswers::produces);
    List<Range> ranges = ranges(accept);
    if (ranges == null && badWeight(accept) != null) {
      // RESTEasy reads q=abc or q=1.5 as some weight, and q =0 as none: which types the client
      // takes is not known.
      throw new NotAcceptableException();
    }
    if (types.isEmpty() || ranges == null) {
      return; // any type, or a header RESTEasy has judged already
    }
    for (MediaType type : types) {
      if (weight(type, ranges) > 0) {
        return;
      }
    }
    throw new NotAcceptableException();
  }

  private static List<MediaType> produces(Method method) {
    Produces produces = method.getAnnotation(Produces.class);
    if (produces == null) {
      produces = method.getDeclaringClass().getAnnotation(Produces.class);
    }
    List<MediaType> types = new ArrayList<>();
    if (produces != null) {
      for (String value : produces.value()) {
        for (String type : value.split(",")) {
          types.add(MediaType.valueOf(type.strip()));
        }
      }
    }
    return types;
  }

  /**
   * True when this Accept header lists the type as a range of its own (not only as a wildcard) and
   * gives it a weight above 0; also when it is not a header this reads for another reason than a
   * weight (which the REST filter above refuses), as the filter leaves such a header to RESTEasy.
   * For /mcp, whose Streamable HTTP transport asks the client to list each of the types it answers
   * with.
   */
  public static boolean lists(String accept, MediaType type) {
    List<Range> ranges = ranges(accept);
    if (ranges == null) {
      return badWeight(accept) == null;
    }
    boolean named =
        ranges.stream()
            .anyMatch(
                range ->
                    range.type.equalsIgnoreCase(type.getType())
                        && range.subtype.equalsIgnoreCase(type.getSubtype()));
    return named && weight(type, ranges) > 0;
  }

  /**
   * Null when every weight in this Accept header is one RFC 9110 spells; else a 406's detail naming
   * the first that is not.
   */
  public static String badWeight(String accept) {
    for (String element : BodyEncoding.split(accept, ',')) {
      String why = AcceptWeight.whyNot(accept, BodyEncoding.parameters(element));
      if (why != null) {
        return why;
      }
    }
    return null;
  }

  /** The Accept header as a 406's detail quotes it: on one line, and cut short if long. */
  public static String quoted(String accept) {
    return LogText.quoted(accept);
  }

  /** The weight the Accept header gives this type: that of the most specific range matching it. */
  static double weight(MediaType type, List<Range> ranges) {
    int specificity = -1;
    double weight = 0;
    for (Range range : ranges) {
      boolean anyType = range.type.equals("*");
      boolean anySubtype = range.subtype.equals("*");
      if ((anyType || range.type.equalsIgnoreCase(type.getType()))
          && (anySubtype || range.subtype.equalsIgnoreCase(type.getSubtype()))
          && !(anyType && !anySubtype)) {
        int rank = (anyType ? 0 : 1) + (anySubtype ? 0 : 1);
        if (rank > specificity) {
          specificity = rank;
          weight = range.weight;
        } else if (rank == specificity) {
          weight = Math.max(weight, range.weight); // the same range twice: the kinder reading
        }
      }
    }
    return weight;
  }

  /** The ranges of an Accept header, or null when it is not one this reads. */
  static List<Range> ranges(String accept) {
    List<Range> ranges = new ArrayList<>();
    for (String element : BodyEncoding.split(accept, ',')) {
      if (element.isBlank()) {
        continue; // an empty list element says nothing (RFC 9110, 5.6.1)
      }
      int semicolon = element.indexOf(';');
      String mediaRange = (semicolon < 0 ? element : element.substring(0, semicolon)).strip();
      int slash = mediaRange.indexOf('/');
      if (slash <= 0 || slash == mediaRange.length() - 1) {
        return null;
      }
      List<String> parameters = BodyEncoding.parameters(element);
      if (AcceptWeight.whyNot(accept, parameters) != null) {
        return null;
      }
      double weight = AcceptWeight.of(parameters);
      ranges.add(
          new Range(
              mediaRange.substring(0, slash).strip().toLowerCase(Locale.ROOT),
              mediaRange.substring(slash + 1).strip().toLowerCase(Locale.ROOT),
              weight));
    }
    return ranges;
  }

  record Range(String type, String subtype, double weight) {}
}
