package dev.claimq.telemetry;

import static io.restassured.RestAssured.given;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** One scrape of /q/metrics, read as Prometheus reads it: a value per series. */
public final class MetricValues {
  private static final Pattern SAMPLE =
      Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)})?\\s+(\\S+)(?:\\s+\\d+)?$");

  record Series(String name, Map<String, String> labels, double value) {}

  private final List<Series> series = new ArrayList<>();

  private MetricValues(String text) {
    for (String line : text.split("\n")) {
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      Matcher sample = SAMPLE.matcher(line.trim());
      if (!sample.matches()) {
        throw new IllegalStateException("not a Prometheus sample line: " + line);
      }
      Map<String, String> labels = sample.group(2) == null ? Map.of() : labels(sample.group(2));
      series.add(new Series(sample.group(1), labels, Double.parseDouble(sample.group(3))));
    }
  }

  /** name="value",... read by hand: a regex over a long value overflows the stack. */
  private static Map<String, String> labels(String inside) {
    Map<String, String> labels = new TreeMap<>();
    int at = 0;
    while (at < inside.length()) {
      int equals = inside.indexOf('=', at);
      String name = inside.substring(at, equals).trim();
      StringBuilder value = new StringBuilder();
      int i = equals + 2; // past ="
      for (; inside.charAt(i) != '"'; i++) {
        char c = inside.charAt(i);
        value.append(c == '\\' ? inside.charAt(++i) : c);
      }
      labels.put(name, value.toString());
      at = i + 1;
      while (at < inside.length() && (inside.charAt(at) == ',' || inside.charAt(at) == ' ')) {
        at++;
      }
    }
    return labels;
  }

  public static MetricValues scrape() {
    return new MetricValues(
        given().accept("text/plain").get("/q/metrics").then().statusCode(200).extract().asString());
  }

  /** The series' value; 0 when it is not there yet (a counter not yet incremented). */
  public double value(String name, String... labels) {
    Map<String, String> wanted = new TreeMap<>();
    for (int i = 0; i < labels.length; i += 2) {
      wanted.put(labels[i], labels[i + 1]);
    }
    return series.stream()
        .filter(s -> s.name.equals(name) && s.labels.entrySet().containsAll(wanted.entrySet()))
        .mapToDouble(Series::value)
        .sum();
  }

  /** The values the label takes among the series of this name. */
  public java.util.Set<String> labelValues(String name, String label) {
    java.util.Set<String> values = new java.util.TreeSet<>();
    series.stream()
        .filter(s -> s.name.equals(name) && s.labels.containsKey(label))
        .forEach(s -> values.add(s.labels.get(label)));
    return values;
  }

  public boolean has(String name) {
    return series.stream().anyMatch(s -> s.name.equals(name));
  }

  public List<String> names() {
    return series.stream().map(Series::name).distinct().sorted().toList();
  }
}
