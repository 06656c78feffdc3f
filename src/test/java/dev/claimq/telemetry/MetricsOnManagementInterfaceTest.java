package dev.claimq.telemetry;

import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * With Quarkus's management interface enabled, as the README suggests for keeping the metrics off
 * the public port, the scrape moves there with its negotiation, and the main port no longer has it.
 */
@QuarkusTest
@TestProfile(MetricsOnManagementInterfaceTest.ManagementInterface.class)
class MetricsOnManagementInterfaceTest {

  public static class ManagementInterface implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      return Map.of("quarkus.management.enabled", "true", "quarkus.management.test-port", "0");
    }
  }

  private final HttpClient http = HttpClient.newHttpClient();

  // Under the management interface's root path, /q.
  @TestHTTPResource(value = "/metrics", management = true)
  URI managementScrape;

  @TestHTTPResource("/q/metrics")
  URI mainScrape;

  @Test
  void the_management_port_serves_prometheus_openmetrics_and_the_main_port_no_metrics()
      throws Exception {
    HttpResponse<String> management =
        get(managementScrape, "application/openmetrics-text;version=1.0.0,text/plain;q=0.5");
    assertThat(management.statusCode()).isEqualTo(200);
    assertThat(management.headers().firstValue("Content-Type"))
        .hasValue("application/openmetrics-text; version=1.0.0; charset=utf-8");
    assertThat(management.body()).contains("# TYPE jvm_gc_memory_allocated_bytes counter");

    assertThat(mainScrape.getPort()).isNotEqualTo(managementScrape.getPort());
    assertThat(get(mainScrape, "application/openmetrics-text").statusCode()).isEqualTo(404);
  }

  private HttpResponse<String> get(URI uri, String accept) throws Exception {
    return http.send(
        HttpRequest.newBuilder(uri).header("Accept", accept).build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
