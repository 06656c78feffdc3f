package dev.claimq.console;

import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;

/** A desktop and a phone: no sideways scrolling, and the controls that matter in view. */
@QuarkusTest
class ConsoleLayoutTest extends ConsoleTest {

  @ParameterizedTest(name = "{0} px wide")
  @ValueSource(ints = {1280, 390})
  void every_screen_fits_the_width_and_shows_its_key_controls(int width) {
    String queue = uniqueQueue("layout");
    String reason =
        "a long reason without spaces to wrap: smtp://relay.example.com/rejected/"
            + "x".repeat(1900);
    // Names, references and notes without a space in 200 or 2,000 characters wrap anywhere.
    String worker = "mailer-" + "w".repeat(193);
    String id = Seed.failed(queue, "l/1", worker, reason);
    String resolved = Seed.failed(queue, "l/2", worker, reason);
    Seed.as(Seed.OPERATOR)
        .contentType(ContentType.JSON)
        .body(Map.of("externalRef", "r".repeat(500), "note", "n".repeat(2_000)))
        .post("/v1/items/{id}/resolve", resolved)
        .then()
        .statusCode(200);
    Browser browser = browser(width, 844);
    signIn(browser, Seed.OPERATOR);

    browser.text(By.id("fail-" + id), "a long reason");
    fits(browser, width, "overview");
    inView(browser, width, By.id("fail-" + id));
    // A 2,000-character reason is cut to a few lines on the overview: its item shows all of it.
    assertThat(browser.visible(By.id("fail-" + id)).getRect().getHeight())
        .as("the overview's reason, in px")
        .isLessThanOrEqualTo(100);
    inView(browser, width, By.id("sign-out"));

    browser.open("/console/#/failed?queue=" + queue);
    browser.text(By.id("row-" + id), "a long reason");
    fits(browser, width, "failed");
    inView(browser, width, By.id("apply-filters"));

    browser.open("/console/#/items/" + id);
    browser.text(By.id("state"), "failed");
    fits(browser, width, "item");
    inView(browser, width, By.id("retry"));
    inView(browser, width, By.id("cancel"));

    browser.open("/console/#/items/" + resolved);
    browser.text(By.id("state"), "done");
    browser.visible(By.id("action-log"));
    fits(browser, width, "item-resolved");

    browser.open("/console/#/bulk?queue=" + queue);
    browser.visible(By.id("preview"));
    fits(browser, width, "bulk");
    inView(browser, width, By.id("preview"));

    browser.open("/console/#/queues/" + queue);
    browser.visible(By.id("save-policy"));
    fits(browser, width, "queue");
    inView(browser, width, By.id("pause"));
    inView(browser, width, By.id("save-policy"));
  }

  /** No part of the page is wider than the viewport; and a screenshot of it. */
  private static void fits(Browser browser, int width, String screen) {
    browser.screenshot("layout-" + screen + "-" + width);
    Object scrollWidth = browser.script("return document.documentElement.scrollWidth");
    Object viewport = browser.script("return document.documentElement.clientWidth");
    assertThat(((Number) scrollWidth).intValue())
        .as("%s at %d px: page width", screen, width)
        .isLessThanOrEqualTo(((Number) viewport).intValue());
  }

  /** Shown, and within the viewport's width (reachable without sideways scrolling). */
  private static void inView(Browser browser, int width, By by) {
    WebElement element = browser.visible(by);
    int left = element.getRect().getX();
    int right = left + element.getRect().getWidth();
    assertThat(left).as("%s left edge", by).isGreaterThanOrEqualTo(0);
    assertThat(right).as("%s right edge", by).isLessThanOrEqualTo(width);
  }
}
