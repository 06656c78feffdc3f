package dev.claimq.observability;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The dashboard and the alert rules select only what the metric contract promises, with the labels
 * it promises (src/test/resources/observability/metric-contract.txt): so MetricNamesTest passes
 * once the service exports that contract, and the same check finds what it does not.
 */
class MetricContractTest {

  static Scrape contract() throws IOException {
    try (InputStream in =
        MetricContractTest.class.getResourceAsStream("/observability/metric-contract.txt")) {
      return Scrape.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
    }
  }

  @Test
  void the_dashboard_and_the_alerts_select_only_names_and_labels_of_the_contract()
      throws IOException {
    Map<String, String> expressions = new LinkedHashMap<>(ObservabilityDocs.alertExpressions());
    expressions.putAll(ObservabilityDocs.dashboardExpressions());

    assertThat(contract().problems(expressions)).isEmpty();
  }

  @Test
  void a_name_the_contract_lacks_is_reported_with_where_it_is_used() throws IOException {
    Map<String, String> expressions =
        Map.of("panel \"Claims\" A", "sum by (queue) (rate(claimq_claim_total[5m]))");

    assertThat(contract().problems(expressions))
        .containsExactly("claimq_claim_total: not in the scrape; used by [panel \"Claims\" A]");
  }

  @Test
  void a_label_the_metric_lacks_is_reported_and_the_scrape_job_is_always_there()
      throws IOException {
    Map<String, String> expressions =
        Map.of(
            "alert A", "claimq_items{status=\"failed\"} > 0",
            "alert B", "claimq_maintenance_rows_total{task=\"reaper\", job=\"claimq\"}");

    assertThat(contract().problems(expressions))
        .containsExactly(
            "claimq_items{status}: the scrape's claimq_items has labels [queue, state];"
                + " used by [alert A]");
  }

  @Test
  void a_bucket_of_a_timer_without_buckets_is_reported() throws IOException {
    Map<String, String> expressions =
        Map.of("panel \"Runs\" A", "rate(claimq_maintenance_run_seconds_bucket[5m])");

    assertThat(contract().problems(expressions))
        .containsExactly(
            "claimq_maintenance_run_seconds_bucket: claimq_maintenance_run_seconds is a summary"
                + " without _bucket; used by [panel \"Runs\" A]");
  }
}
