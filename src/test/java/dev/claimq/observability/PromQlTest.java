package dev.claimq.observability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.claimq.observability.PromQl.Selector;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The name extraction MetricNamesTest relies on: it must find every metric an expression selects
 * and nothing else, and a scrape must count as missing every name Prometheus would not have.
 */
class PromQlTest {

  @Test
  void a_quantile_over_a_histogram_selects_only_the_bucket_series() {
    String expression =
        "histogram_quantile(0.99, sum by (queue, le)"
            + " (rate(claimq_queue_wait_seconds_bucket{queue=~\"$queue\"}[$__rate_interval])))";

    assertThat(PromQl.metricNames(expression)).containsExactly("claimq_queue_wait_seconds_bucket");
  }

  @Test
  void functions_aggregations_keywords_and_label_lists_are_not_names() {
    String expression =
        "sum without (instance) (rate(a_total[5m] offset 1h)) / on (queue) group_left (state)"
            + " max by (queue) (b) > bool 0 and c unless d or topk(3, e) atan2 f";

    assertThat(PromQl.metricNames(expression)).containsExactly("a_total", "b", "c", "d", "e", "f");
  }

  @Test
  void names_followed_by_a_paren_space_bracket_or_brace_all_count() {
    assertThat(PromQl.metricNames("abs(a) + b [5m] + c{x=\"1\"} + d\n+ e")).hasSize(5);
  }

  @Test
  void strings_label_values_numbers_durations_and_grafana_variables_are_not_names() {
    String expression =
        "label_replace(up{job=\"not_a_metric\"}, \"dst\", \"$1\", \"src\", \"(fake_metric)\")"
            + " * 1e3 + 0.5 + $__range_s + ${queue:regex} + vector(0) @ start()";

    assertThat(PromQl.metricNames(expression)).containsExactly("up");
  }

  @Test
  void a_selector_knows_the_labels_it_matches_on() {
    List<Selector> selectors =
        PromQl.selectors("timestamp(x{task=\"reaper\"}) - y{queue=~\"a,b\", state!=\"x=y\"} > z");

    assertThat(selectors)
        .containsExactly(
            new Selector("x", Set.of("task")),
            new Selector("y", Set.of("queue", "state")),
            new Selector("z", Set.of()));
  }

  @Test
  void a_scrape_misses_a_name_it_does_not_export() {
    Scrape scrape = Scrape.parse(SAMPLE_SCRAPE);

    assertThat(scrape.missing(Set.of("claimq_items", "claimq_itemz")))
        .containsOnlyKeys("claimq_itemz");
  }

  @Test
  void a_histograms_bucket_is_in_the_scrape_and_a_summarys_is_not() {
    Scrape scrape = Scrape.parse(SAMPLE_SCRAPE);

    assertThat(scrape.missing(Set.of("claimq_queue_wait_seconds_bucket"))).isEmpty();
    assertThat(scrape.family("claimq_queue_wait_seconds_bucket"))
        .isEqualTo("claimq_queue_wait_seconds");
    assertThat(
            scrape.missing(
                Set.of(
                    "http_server_requests_seconds_bucket", "http_server_requests_seconds_count")))
        .containsExactly(
            java.util.Map.entry(
                "http_server_requests_seconds_bucket",
                "http_server_requests_seconds is a summary without _bucket"));
  }

  @Test
  void a_counter_is_in_the_scrape_by_its_total_name_only() {
    // The TYPE line names the family without _total; Prometheus stores only the sample's name.
    Scrape scrape = Scrape.parse(SAMPLE_SCRAPE);

    assertThat(scrape.missing(Set.of("agroal_acquire_count_total"))).isEmpty();
    assertThat(scrape.missing(Set.of("agroal_acquire_count")))
        .containsOnlyKeys("agroal_acquire_count");
  }

  @Test
  void a_scrape_knows_each_samples_label_names() {
    Scrape scrape = Scrape.parse(SAMPLE_SCRAPE);

    assertThat(scrape.labels("claimq_items")).containsExactly("queue", "state");
    assertThat(scrape.labels("claimq_longpolls_parked")).isEmpty();
    assertThat(scrape.labels("http_server_requests_seconds_count"))
        .containsExactly("method", "outcome", "status", "uri");
  }

  private static final String SAMPLE_SCRAPE =
      """
      # TYPE claimq_items gauge
      claimq_items{queue="emails",state="pending"} 3.0
      claimq_items{queue="a,b=\\"c\\"",state="failed"} 1.0
      # TYPE claimq_longpolls_parked gauge
      claimq_longpolls_parked 0.0
      # TYPE claimq_queue_wait_seconds histogram
      claimq_queue_wait_seconds_bucket{queue="emails",le="0.1"} 2.0
      claimq_queue_wait_seconds_bucket{queue="emails",le="+Inf"} 2.0
      claimq_queue_wait_seconds_count{queue="emails"} 2.0
      claimq_queue_wait_seconds_sum{queue="emails"} 0.05
      # TYPE http_server_requests_seconds summary
      http_server_requests_seconds_count{method="POST",outcome="SUCCESS",status="201",uri="/v1/queues/{queue}/items"} 4.0
      http_server_requests_seconds_sum{method="POST",outcome="SUCCESS",status="201",uri="/v1/queues/{queue}/items"} 0.16
      # TYPE agroal_acquire_count counter
      agroal_acquire_count_total{datasource="default"} 63.0
      """;
}
