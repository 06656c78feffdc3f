package dev.claimq.observability;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.claimq.Api;
import dev.claimq.AsAdmin;
import dev.claimq.PlainHttp;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Every metric the dashboard's panels and the alert rules select is exported by the service, as a
 * real scrape of /q/metrics after real traffic shows, with the labels they match on. A renamed
 * metric or label, or a panel that selects a name nothing exports, fails here rather than as an
 * empty graph or an alert that can never fire.
 */
@QuarkusTest
class MetricNamesTest extends AsAdmin {
  // The queue gauges are sampled in the background (claimq.metrics.sample-interval, 5 s).
  private static final Duration SAMPLED_WITHIN = Duration.ofSeconds(12);
  private static final Path SCRAPE = Path.of("target", "metrics-scrape.txt");

  @TestHTTPResource("/")
  URI base;

  @Test
  void every_metric_and_label_the_dashboard_and_alerts_select_is_in_a_real_scrape()
      throws Exception {
    Traffic.run(Api.uniqueQueue("metrics"));
    Map<String, String> expressions = new LinkedHashMap<>(ObservabilityDocs.alertExpressions());
    expressions.putAll(ObservabilityDocs.dashboardExpressions());

    Instant deadline = Instant.now().plus(SAMPLED_WITHIN);
    List<String> problems;
    do {
      Scrape scrape = scrape();
      problems = scrape.problems(expressions);
      if (problems.isEmpty() || Instant.now().isAfter(deadline)) {
        Files.writeString(SCRAPE, scrape.text());
        break;
      }
      Thread.sleep(500);
    } while (true);

    assertThat(problems)
        .as(
            "names and labels in %s and %s that a scrape of /q/metrics after real traffic does"
                + " not have (the last scrape is in %s)",
            ObservabilityDocs.DASHBOARD, ObservabilityDocs.ALERTS, SCRAPE)
        .isEmpty();
  }

  @Test
  void every_claimq_metric_says_what_it_counts() throws Exception {
    Traffic.run(Api.uniqueQueue("metrics-help"));
    List<String> helps =
        scrape().text().lines().filter(line -> line.startsWith("# HELP claimq_")).toList();

    assertThat(helps).hasSizeGreaterThan(15);
    // "# HELP name text": a metric without a description has nothing after its name.
    assertThat(helps).allSatisfy(help -> assertThat(help.split(" ", 4)).hasSize(4));
    assertThat(helps).noneMatch(help -> help.split(" ", 4)[3].isBlank());
  }

  @Test
  void the_dashboards_queue_variable_finds_queues_in_a_real_scrape() throws Exception {
    JsonNode variable = ObservabilityDocs.variable(ObservabilityDocs.dashboard(), "queue").get();
    String[] metricAndLabel = ObservabilityDocs.labelValues(variable).get();
    String metric = metricAndLabel[0];
    String label = metricAndLabel[1];
    // Any queue will do: past claimq.metrics.max-queues, this one may report as "_other".
    Api.enqueued(Api.uniqueQueue("variable"), "k", 1);

    Instant deadline = Instant.now().plus(SAMPLED_WITHIN);
    Scrape scrape = scrape();
    while (!scrape.has(metric) && Instant.now().isBefore(deadline)) {
      Thread.sleep(500);
      scrape = scrape();
    }

    assertThat(scrape.has(metric)).as("%s in a scrape of /q/metrics", metric).isTrue();
    assertThat(scrape.labels(metric)).as("labels of %s", metric).contains(label);
    assertThat(scrape.text()).containsPattern(metric + "\\{[^}]*" + label + "=\"[^\"]+\"");
  }

  /** A scrape as Prometheus makes one: no API key. */
  private Scrape scrape() throws Exception {
    HttpResponse<String> response = new PlainHttp(base).send("GET", "/q/metrics", null, null);
    assertThat(response.statusCode()).as("/q/metrics without a key").isEqualTo(200);
    return Scrape.parse(response.body());
  }
}
