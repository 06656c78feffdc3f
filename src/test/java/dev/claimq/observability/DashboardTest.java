package dev.claimq.observability;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * docs/grafana-dashboard.json imports into any Grafana with any Prometheus data source: every query
 * goes to the data source chosen in its DS_PROMETHEUS variable, panels do not overlap, and every
 * panel of a per-queue metric follows the queue variable. PrometheusTest has Prometheus parse each
 * query; MetricNamesTest checks their names against a real scrape.
 */
class DashboardTest {
  private static final String DATA_SOURCE = "${DS_PROMETHEUS}";
  private final JsonNode dashboard = ObservabilityDocs.dashboard();

  @Test
  void every_panel_and_query_uses_the_chosen_prometheus_data_source() {
    JsonNode variable = ObservabilityDocs.variable(dashboard, "DS_PROMETHEUS").orElseThrow();
    assertThat(variable.path("type").asText()).isEqualTo("datasource");
    assertThat(variable.path("query").asText()).isEqualTo("prometheus");

    List<JsonNode> panels = ObservabilityDocs.panels(dashboard);
    assertThat(panels).isNotEmpty();
    for (JsonNode panel : panels) {
      String title = panel.path("title").asText();
      assertThat(panel.path("datasource").path("uid").asText()).as(title).isEqualTo(DATA_SOURCE);
      assertThat(panel.path("targets")).as(title).isNotEmpty();
      Set<String> refIds = new HashSet<>();
      for (JsonNode target : panel.path("targets")) {
        assertThat(target.path("datasource").path("uid").asText()).as(title).isEqualTo(DATA_SOURCE);
        assertThat(target.path("expr").asText()).as(title).isNotBlank();
        assertThat(refIds.add(target.path("refId").asText())).as(title + " refIds").isTrue();
      }
    }
  }

  @Test
  void the_queue_variable_lists_the_queues_of_claimq_items_with_all_of_them_by_default() {
    JsonNode queue = ObservabilityDocs.variable(dashboard, "queue").orElseThrow();

    assertThat(ObservabilityDocs.labelValues(queue))
        .hasValueSatisfying(q -> assertThat(q).containsExactly("claimq_items", "queue"));
    assertThat(queue.path("datasource").path("uid").asText()).isEqualTo(DATA_SOURCE);
    assertThat(queue.path("multi").asBoolean()).isTrue();
    assertThat(queue.path("includeAll").asBoolean()).isTrue();
    assertThat(queue.path("allValue").asText()).isEqualTo(".*");
  }

  @Test
  void every_selector_of_a_per_queue_metric_follows_the_queue_variable() throws Exception {
    Scrape contract = MetricContractTest.contract();
    List<String> unfiltered = new ArrayList<>();
    for (var expression : ObservabilityDocs.dashboardExpressions().entrySet()) {
      for (PromQl.Selector selector : PromQl.selectors(expression.getValue())) {
        if (contract.labels(selector.metric()).contains("queue")
            && !expression.getValue().contains(selector.metric() + "{queue=~\"$queue\"")) {
          unfiltered.add(expression.getKey() + ": " + selector.metric());
        }
      }
    }
    assertThat(unfiltered).isEmpty();
  }

  @Test
  void panel_ids_are_unique_and_panels_fit_the_grid_without_overlapping() {
    List<JsonNode> all = new ArrayList<>();
    dashboard.path("panels").forEach(all::add);
    Set<Integer> ids = new HashSet<>();
    for (JsonNode panel : all) {
      String title = panel.path("title").asText();
      assertThat(ids.add(panel.path("id").asInt())).as(title + " id").isTrue();
      JsonNode at = panel.path("gridPos");
      assertThat(at.path("x").asInt() + at.path("w").asInt()).as(title).isBetween(1, 24);
      assertThat(at.path("h").asInt()).as(title).isPositive();
    }
    for (int i = 0; i < all.size(); i++) {
      for (int j = i + 1; j < all.size(); j++) {
        assertThat(overlap(all.get(i).path("gridPos"), all.get(j).path("gridPos")))
            .as(all.get(i).path("title").asText() + " and " + all.get(j).path("title").asText())
            .isFalse();
      }
    }
  }

  private static boolean overlap(JsonNode a, JsonNode b) {
    return a.path("x").asInt() < b.path("x").asInt() + b.path("w").asInt()
        && b.path("x").asInt() < a.path("x").asInt() + a.path("w").asInt()
        && a.path("y").asInt() < b.path("y").asInt() + b.path("h").asInt()
        && b.path("y").asInt() < a.path("y").asInt() + a.path("h").asInt();
  }
}
