package dev.claimq.observability;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What one scrape of /q/metrics exports: each sample's name, the label names it carries, and each
 * family's declared type. A histogram's samples are named {@code _bucket}, {@code _count} and
 * {@code _sum} in the scrape itself, so a name taken from PromQL is checked as it is written: a
 * {@code _bucket} of a timer that has no buckets (a summary) is missing, as it is to Prometheus.
 */
final class Scrape {
  private static final Set<String> SUFFIXES = Set.of("_bucket", "_count", "_sum");

  // Labels that Prometheus attaches to every series itself.
  private static final Set<String> TARGET_LABELS = Set.of("job", "instance");

  private final String text;
  private final Map<String, Set<String>> labelsBySample = new LinkedHashMap<>();
  private final Map<String, String> typeByFamily = new HashMap<>();

  private Scrape(String text) {
    this.text = text;
  }

  static Scrape parse(String text) {
    Scrape scrape = new Scrape(text);
    for (String line : text.split("\n")) {
      line = line.strip();
      if (line.startsWith("# TYPE ")) {
        String[] parts = line.split("\\s+");
        if (parts.length >= 4) {
          scrape.typeByFamily.put(parts[2], parts[3]);
        }
      } else if (!line.isEmpty() && !line.startsWith("#")) {
        int brace = line.indexOf('{');
        int space = line.indexOf(' ');
        int end = brace >= 0 && (space < 0 || brace < space) ? brace : space;
        String name = end < 0 ? line : line.substring(0, end);
        Set<String> labels =
            scrape.labelsBySample.computeIfAbsent(name, n -> new LinkedHashSet<>());
        if (end == brace && brace >= 0) {
          labels.addAll(labelNames(line.substring(brace + 1, line.lastIndexOf('}'))));
        }
      }
    }
    return scrape;
  }

  String text() {
    return text;
  }

  boolean has(String sampleName) {
    return labelsBySample.containsKey(sampleName);
  }

  /** The label names this sample carries in the scrape (empty when it is not there). */
  Set<String> labels(String sampleName) {
    return labelsBySample.getOrDefault(sampleName, Set.of());
  }

  /** The family a sample belongs to: a histogram's {@code x_bucket} is {@code x}. */
  String family(String sampleName) {
    for (String suffix : SUFFIXES) {
      if (sampleName.endsWith(suffix)) {
        String base = sampleName.substring(0, sampleName.length() - suffix.length());
        if (typeByFamily.containsKey(base)) {
          return base;
        }
      }
    }
    return sampleName;
  }

  /** The family's type as the scrape declares it (counter, gauge, histogram, summary), or null. */
  String type(String family) {
    return typeByFamily.get(family);
  }

  /** Each of these names that the scrape does not export, with what it has instead if anything. */
  Map<String, String> missing(Set<String> sampleNames) {
    Map<String, String> missing = new LinkedHashMap<>();
    for (String name : new TreeSet<>(sampleNames)) {
      if (!has(name)) {
        String family = family(name);
        missing.put(
            name,
            family.equals(name) || type(family) == null
                ? "not in the scrape"
                : family + " is a " + type(family) + " without " + name.substring(family.length()));
      }
    }
    return missing;
  }

  /**
   * One line for each metric name or matched label that these PromQL expressions (keyed by where
   * they are) select and the scrape lacks, naming every expression that uses it.
   */
  List<String> problems(Map<String, String> expressions) {
    Map<String, Set<String>> usedBy = new TreeMap<>();
    Map<String, Map<String, Set<String>>> labelsUsedBy = new TreeMap<>();
    for (Map.Entry<String, String> expression : expressions.entrySet()) {
      for (PromQl.Selector selector : PromQl.selectors(expression.getValue())) {
        usedBy.computeIfAbsent(selector.metric(), n -> new TreeSet<>()).add(expression.getKey());
        for (String label : selector.labels()) {
          labelsUsedBy
              .computeIfAbsent(selector.metric(), n -> new TreeMap<>())
              .computeIfAbsent(label, n -> new TreeSet<>())
              .add(expression.getKey());
        }
      }
    }
    List<String> problems = new ArrayList<>();
    missing(usedBy.keySet())
        .forEach((name, why) -> problems.add(name + ": " + why + "; used by " + usedBy.get(name)));
    labelsUsedBy.forEach(
        (metric, byLabel) ->
            byLabel.forEach(
                (label, users) -> {
                  // A missing metric is reported once, above, not once more per label.
                  if (has(metric)
                      && !TARGET_LABELS.contains(label)
                      && !labels(metric).contains(label)) {
                    problems.add(
                        metric
                            + "{"
                            + label
                            + "}: the scrape's "
                            + metric
                            + " has labels "
                            + new TreeSet<>(labels(metric))
                            + "; used by "
                            + users);
                  }
                }));
    return problems;
  }

  private static Set<String> labelNames(String inside) {
    Set<String> names = new LinkedHashSet<>();
    int i = 0;
    while (i < inside.length()) {
      int equals = inside.indexOf('=', i);
      if (equals < 0) {
        break;
      }
      names.add(inside.substring(i, equals).strip());
      // Past the quoted value, honouring escapes.
      int j = inside.indexOf('"', equals) + 1;
      while (j < inside.length() && inside.charAt(j) != '"') {
        j += inside.charAt(j) == '\\' ? 2 : 1;
      }
      int comma = inside.indexOf(',', j);
      i = comma < 0 ? inside.length() : comma + 1;
    }
    return names;
  }
}
