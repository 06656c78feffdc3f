package dev.claimq.telemetry;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import dev.claimq.PlainHttp;
import dev.claimq.api.AcceptableAnswers;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import java.net.URI;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * /q/metrics answers in the format its scraper prefers: OpenMetrics (which carries exemplars) to
 * Prometheus, whose Accept names the text format too, as a fallback; the text format to a client
 * that prefers it.
 */
@QuarkusTest
class MetricsScrapeTest {
  private static final String OPENMETRICS =
      "application/openmetrics-text; version=1.0.0; charset=utf-8";
  private static final String TEXT = "text/plain; version=0.0.4; charset=utf-8";

  // What Prometheus 2 sends (scrape/scrape.go, acceptHeader, up to 2.48).
  private static final String PROMETHEUS_2 =
      "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
          + "text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

  // What Prometheus 3 sends by default (its scrape_protocols, with UTF-8 name escaping allowed).
  private static final String PROMETHEUS_3 =
      "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,"
          + "application/openmetrics-text;version=0.0.1;q=0.4,"
          + "text/plain;version=1.0.0;escaping=allow-utf-8;q=0.3,text/plain;version=0.0.4;q=0.2,"
          + "*/*;q=0.1";

  @TestHTTPResource("/")
  URI base;

  @Test
  void prometheus_gets_openmetrics_though_it_names_the_text_format_too() {
    assertOpenMetrics(scrape(PROMETHEUS_2));
    assertOpenMetrics(scrape(PROMETHEUS_3));
  }

  @Test
  void openmetrics_without_a_charset_is_served() {
    assertOpenMetrics(scrape("application/openmetrics-text; version=1.0.0"));
    assertOpenMetrics(scrape("application/openmetrics-text"));
  }

  @Test
  void a_client_that_prefers_the_text_format_gets_it() {
    assertText(scrape("text/plain"));
    assertText(scrape("text/plain;version=0.0.4"));
    assertText(scrape("text/plain, application/openmetrics-text;q=0.5"));
    assertText(scrape("application/openmetrics-text;q=0, text/plain;q=0.1"));
    // A browser: the text format shows as a page.
    assertText(scrape("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"));
  }

  @Test
  void a_media_range_takes_the_format_it_matches() {
    // text/* took OpenMetrics, which is no text/ type.
    assertText(scrape("text/*"));
    assertText(scrape("text/*, application/*;q=0.5"));
    assertOpenMetrics(scrape("application/*"));
    assertOpenMetrics(scrape("application/*, text/*;q=0.5"));
    // The more specific range decides for its type (RFC 9110, 12.5.1).
    assertText(scrape("*/*, application/openmetrics-text;q=0"));
    assertOpenMetrics(scrape("text/*;q=0.9, text/plain;q=0.1, application/openmetrics-text;q=0.5"));
  }

  @Test
  void an_accept_that_takes_neither_format_is_a_406_problem() {
    // q=0 excludes: OpenMetrics was sent to a client that said it would not take it.
    for (String accept :
        List.of(
            "application/openmetrics-text;q=0",
            "application/json",
            "text/*, text/plain;q=0",
            "*/*;q=0",
            "image/png, application/openmetrics-text;version=1.0.0;q=0")) {
      Response response = scrape(accept);
      assertThat(response.statusCode()).as(accept).isEqualTo(406);
      assertThat(response.contentType()).as(accept).startsWith("application/problem+json");
      assertThat(response.<Integer>path("status")).isEqualTo(406);
      assertThat(response.<String>path("title")).isEqualTo("Not Acceptable");
      assertThat(response.<String>path("detail"))
          .contains("application/openmetrics-text")
          .contains("text/plain")
          .contains("'" + accept + "'");
    }
  }

  @Test
  void a_weight_that_is_not_one_is_a_406_naming_it_as_the_api_does() {
    // Vert.x read each as some weight (q =0 as none) and answered a format.
    for (String weight : List.of("q=abc", "q=1.5", "q=0.1234", "q =0", "q= 0")) {
      String accept = "text/plain;" + weight + ", application/openmetrics-text;q=0.5";
      Response response = scrape(accept);
      assertThat(response.statusCode()).as(accept).isEqualTo(406);
      assertThat(response.<String>path("detail"))
          .isEqualTo(
              "The Accept header '"
                  + accept
                  + "' gives the weight "
                  + weight
                  + ", which is not one: a weight is q= and 0 to 1 with up to three decimals,"
                  + " with no space around the =, such as q=0.5.");
    }
  }

  @Test
  void a_long_accept_is_quoted_as_the_api_quotes_it() {
    // Cut after 80 characters, on one line: as the API's own 406 says it.
    String accept = "application/json, image/" + "x".repeat(300);
    Response response = scrape(accept);
    assertThat(response.statusCode()).isEqualTo(406);
    assertThat(response.<String>path("detail"))
        .contains("Accept header " + AcceptableAnswers.quoted(accept) + " takes neither")
        .doesNotContain("x".repeat(100));
  }

  @Test
  void a_client_without_a_preference_gets_openmetrics_as_before() throws Exception {
    assertOpenMetrics(scrape("*/*"));
    HttpResponse<String> noAccept = new PlainHttp(base).send("GET", "/q/metrics", null, null);
    assertThat(noAccept.statusCode()).isEqualTo(200);
    assertThat(noAccept.headers().firstValue("Content-Type")).hasValue(OPENMETRICS);
    assertThat(noAccept.body()).endsWith("# EOF\n");
  }

  private static Response scrape(String accept) {
    return given().header("Accept", accept).get("/q/metrics");
  }

  private static void assertOpenMetrics(Response response) {
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.contentType()).isEqualTo(OPENMETRICS);
    // OpenMetrics names a counter's family without _total, and ends with # EOF.
    assertThat(response.asString())
        .contains("# TYPE jvm_gc_memory_allocated_bytes counter")
        .endsWith("# EOF\n");
  }

  private static void assertText(Response response) {
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.contentType()).isEqualTo(TEXT);
    assertThat(response.asString())
        .contains("# TYPE jvm_gc_memory_allocated_bytes_total counter")
        .doesNotContain("# EOF");
  }
}
