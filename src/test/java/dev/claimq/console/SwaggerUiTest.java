package dev.claimq.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;

/**
 * The Swagger UI as an operator uses it to recover work (README): signed in with a key, "Try it
 * out" calls the service the page came from, and an action sent as the page offers it is made. The
 * document named one server, http://localhost:8080, so every call went there (here, nowhere), and
 * it pre-filled If-Match with "7", so every action was refused with 412.
 */
@QuarkusTest
class SwaggerUiTest extends ConsoleTest {

  @Test
  void an_operator_signs_in_and_retries_a_failed_item_from_the_swagger_ui() {
    String queue = dev.claimq.Api.uniqueQueue("swagger");
    String failed = Seed.failed(queue, "swagger-1", "w", "SMTP 550: mailbox unavailable");
    Browser browser = browser();
    browser.open("/q/swagger-ui/");
    browser.click(By.cssSelector(".auth-wrapper button.authorize"));
    browser.type(By.cssSelector(".auth-container input"), Seed.OPERATOR);
    browser.click(By.cssSelector(".auth-btn-wrapper button.authorize"));
    browser.click(By.cssSelector(".auth-btn-wrapper button.btn-done"));

    // Who am I: the answer comes from this service, under the key's name.
    WebElement me = tryItOut(browser, "operations-operators-me");
    execute(browser, me);
    assertThat(answer(browser, me, "200")).contains("dev-operator");

    // Retry the failed item, sending only its id, as the page offers the call.
    WebElement retry = tryItOut(browser, "operations-operators-retry");
    browser.type(
        By.cssSelector("#operations-operators-retry tr[data-param-name='id'] input"), failed);
    execute(browser, retry);
    assertThat(answer(browser, retry, "200")).contains("\"state\": \"pending\"");
    assertThat(Seed.state(failed)).isEqualTo("pending");
  }

  @Test
  void no_other_site_may_frame_the_swagger_ui() {
    for (String path :
        java.util.List.of("/q/swagger-ui", "/q/swagger-ui/", "/q/swagger-ui/index.html")) {
      io.restassured.RestAssured.given()
          .redirects()
          .follow(false)
          .get(path)
          .then()
          .header("Content-Security-Policy", "frame-ancestors 'none'")
          .header("X-Frame-Options", "DENY")
          .header("Referrer-Policy", "no-referrer");
    }
  }

  private static WebElement tryItOut(Browser browser, String id) {
    browser.click(By.cssSelector("#" + id + " .opblock-summary-control"));
    browser.click(By.cssSelector("#" + id + " button.try-out__btn"));
    return browser.visible(By.id(id));
  }

  private static void execute(Browser browser, WebElement operation) {
    browser.click(By.cssSelector("#" + operation.getAttribute("id") + " button.execute"));
  }

  /** The live answer's body, once its status is shown; the test fails on another status. */
  private static String answer(Browser browser, WebElement operation, String status) {
    String id = operation.getAttribute("id");
    String shown =
        browser.until(
            d ->
                d
                    .findElements(
                        By.cssSelector(
                            "#" + id + " .live-responses-table tbody .response-col_status"))
                    .stream()
                    .map(WebElement::getText)
                    .filter(text -> !text.isBlank())
                    .findFirst());
    assertThat(shown).as(browser.screenshot("swagger-" + id).toString()).startsWith(status);
    return browser
        .visible(
            By.cssSelector("#" + id + " .live-responses-table tbody .response-col_description pre"))
        .getText();
  }
}
