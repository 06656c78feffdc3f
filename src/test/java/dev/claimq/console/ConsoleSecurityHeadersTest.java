package dev.claimq.console;

import static dev.claimq.Api.uniqueQueue;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import io.quarkus.test.junit.QuarkusTest;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.openqa.selenium.By;
import org.openqa.selenium.logging.LogEntry;

/** The console runs under a strict Content-Security-Policy, and breaks none of it. */
@QuarkusTest
class ConsoleSecurityHeadersTest extends ConsoleTest {
  static final String POLICY =
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
          + " connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

  @ParameterizedTest
  @ValueSource(
      strings = {
        "/console",
        "/console/",
        "/console/index.html",
        "/console/console.css",
        "/console/js/main.js"
      })
  void every_console_file_is_served_with_the_policy(String path) {
    given()
        .get(path)
        .then()
        .statusCode(200)
        .header("Content-Security-Policy", equalTo(POLICY))
        .header("X-Content-Type-Options", equalTo("nosniff"))
        .header("Referrer-Policy", equalTo("no-referrer"))
        .header("Cache-Control", equalTo("no-cache"));
  }

  @Test
  void the_console_without_its_slash_is_sent_to_the_directory() {
    given()
        .redirects()
        .follow(false)
        .get("/console")
        .then()
        .statusCode(301)
        .header("Location", equalTo("console/"));
  }

  @Test
  void the_console_needs_no_key_to_load_and_scripts_are_served_as_javascript() {
    given()
        .get("/console/js/main.js")
        .then()
        .statusCode(200)
        .contentType(org.hamcrest.Matchers.startsWith("text/javascript"));
  }

  @Test
  void the_browser_reports_no_policy_violation_or_error_on_any_screen() {
    String id = Seed.failed(uniqueQueue("csp"), "c/1", "mailer-1", "refused");
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    browser.text(By.id("fail-" + id), "refused");
    for (String screen :
        List.of("#/failed", "#/items/" + id, "#/bulk", "#/queues", "#/search", "#/")) {
      browser.open("/console/" + screen);
      browser.visible(By.cssSelector("main h1"));
    }
    browser.click(By.id("sign-out"));

    List<LogEntry> log = browser.log();
    assertThat(log)
        .as("the browser's console")
        .noneSatisfy(
            entry -> assertThat(entry.getMessage()).containsIgnoringCase("Content Security Policy"))
        .noneSatisfy(entry -> assertThat(entry.getLevel().getName()).isEqualTo("SEVERE"));
  }
}
