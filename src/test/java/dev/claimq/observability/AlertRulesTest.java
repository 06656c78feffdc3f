package dev.claimq.observability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.claimq.Processes;
import dev.claimq.Processes.Result;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * docs/prometheus-alerts.yml is valid for Prometheus and its alerts do what their unit tests
 * (docs/prometheus-alerts.test.yml) say: each fires on its trouble and not on a healthy series.
 * Both checks are promtool's own. PrometheusTest loads the same rules into a running Prometheus;
 * MetricNamesTest checks their metric names against the service's scrape.
 */
class AlertRulesTest {

  @Test
  void promtool_finds_the_rules_valid() throws Exception {
    Result check = promtool("check", "rules", ObservabilityDocs.ALERTS);
    assertThat(check.exit()).as(check.output()).isZero();
    assertThat(check.output()).contains("SUCCESS");
  }

  @Test
  void every_alert_passes_its_unit_tests() throws Exception {
    Result test = promtool("test", "rules", ObservabilityDocs.ALERT_TESTS);
    assertThat(test.exit()).as(test.output()).isZero();
    assertThat(test.output()).contains("SUCCESS").doesNotContain("FAILED");
  }

  @Test
  void every_alert_has_a_unit_test_and_says_what_to_do() throws Exception {
    String tests = java.nio.file.Files.readString(ObservabilityDocs.ALERT_TESTS);
    for (var group : ObservabilityDocs.alerts().path("groups")) {
      for (var rule : group.path("rules")) {
        String alert = rule.path("alert").asText();
        assertThat(tests).as("a unit test of " + alert).contains("alertname: " + alert + "\n");
        assertThat(rule.path("labels").path("severity").asText())
            .as(alert + " severity")
            .isIn("warning", "critical");
        assertThat(rule.path("annotations").path("summary").asText()).as(alert).isNotBlank();
        assertThat(rule.path("annotations").path("description").asText())
            .as(alert + " description")
            .contains("See the README, section Observability.");
        assertThat(rule.path("annotations").path("runbook_url").asText())
            .as(alert)
            .isEqualTo("README.md#observability");
      }
    }
  }

  private static Result promtool(String command, String subcommand, Path file) throws Exception {
    return Processes.run(
        List.of(PrometheusTools.require("promtool"), command, subcommand, file.toString()),
        Path.of("."),
        Map.of(),
        60);
  }
}
