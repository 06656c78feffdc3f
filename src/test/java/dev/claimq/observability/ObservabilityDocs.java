package dev.claimq.observability;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The operator-facing documents under docs/, and the PromQL in them, for the tests to check. */
final class ObservabilityDocs {
  static final Path ALERTS = Path.of("docs", "prometheus-alerts.yml");
  static final Path ALERT_TESTS = Path.of("docs", "prometheus-alerts.test.yml");
  static final Path DASHBOARD = Path.of("docs", "grafana-dashboard.json");

  private static final Pattern LABEL_VALUES =
      Pattern.compile("label_values\\(\\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\\s*,\\s*(\\w+)\\s*\\)");

  private ObservabilityDocs() {}

  static JsonNode dashboard() {
    try {
      return new ObjectMapper().readTree(DASHBOARD.toFile());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static JsonNode alerts() {
    try {
      return new YAMLMapper().readTree(Files.readString(ALERTS));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Every panel but the rows, the panels of collapsed rows included. */
  static List<JsonNode> panels(JsonNode dashboard) {
    List<JsonNode> panels = new ArrayList<>();
    for (JsonNode panel : dashboard.path("panels")) {
      if ("row".equals(panel.path("type").asText())) {
        panel.path("panels").forEach(panels::add);
      } else {
        panels.add(panel);
      }
    }
    return panels;
  }

  /** Each panel query's PromQL, keyed by where it is: {@code panel "Items by state" A}. */
  static Map<String, String> dashboardExpressions() {
    Map<String, String> expressions = new LinkedHashMap<>();
    for (JsonNode panel : panels(dashboard())) {
      for (JsonNode target : panel.path("targets")) {
        expressions.put(
            "panel \"" + panel.path("title").asText() + "\" " + target.path("refId").asText(),
            target.path("expr").asText());
      }
    }
    return expressions;
  }

  /** Each alert's expression, keyed by {@code alert Name}. */
  static Map<String, String> alertExpressions() {
    Map<String, String> expressions = new LinkedHashMap<>();
    for (JsonNode group : alerts().path("groups")) {
      for (JsonNode rule : group.path("rules")) {
        String name =
            rule.has("alert") ? rule.path("alert").asText() : rule.path("record").asText();
        expressions.put("alert " + name, rule.path("expr").asText());
      }
    }
    return expressions;
  }

  /** The dashboard variable's {@code label_values(metric, label)} query: metric and label. */
  static Optional<String[]> labelValues(JsonNode variable) {
    JsonNode query = variable.path("query");
    String text = query.isTextual() ? query.asText() : query.path("query").asText();
    Matcher matcher = LABEL_VALUES.matcher(text);
    return matcher.matches()
        ? Optional.of(new String[] {matcher.group(1), matcher.group(2)})
        : Optional.empty();
  }

  /** The template variable of this name. */
  static Optional<JsonNode> variable(JsonNode dashboard, String name) {
    for (JsonNode variable : dashboard.path("templating").path("list")) {
      if (name.equals(variable.path("name").asText())) {
        return Optional.of(variable);
      }
    }
    return Optional.empty();
  }
}
