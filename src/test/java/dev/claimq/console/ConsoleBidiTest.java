package dev.claimq.console;

import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.junit.QuarkusTest;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;

/**
 * Bidirectional controls in data (U+202E reverses what follows it) would let an agent or a worker
 * reorder what an operator reads: "a", U+202E, "moc.live@ecila" reads as alice@evil.com. The
 * console shows each control as a visible, marked escape, and isolates each piece of data from the
 * text around it, so an approver approves the recipient shown.
 */
@QuarkusTest
class ConsoleBidiTest extends ConsoleTest {
  /** Whether any bidi control reached the page as a character. */
  private static final String CONTROLS_IN_PAGE =
      "return /[\\u202A-\\u202E\\u2066-\\u2069\\u200E\\u200F\\u061C]/"
          + ".test(document.body.textContent)";

  @Test
  void a_held_payloads_recipient_shows_its_override_as_a_marked_escape() {
    String queue = Seed.gated("bidi");
    String id = Seed.enqueue(queue, "bidi/1", "{\"to\": \"a\\u202emoc.live@ecila\"}", 3);
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    browser.visible(By.id("nav"));

    browser.open("/console/#/items/" + id);
    browser.text(By.id("state"), "held");
    assertThat(browser.visible(By.id("payload")).getDomProperty("textContent"))
        .isEqualTo("{\n  \"to\": \"a\\u202Emoc.live@ecila\"\n}");
    assertThat(browser.script(CONTROLS_IN_PAGE)).as("a bidi control in the page").isEqualTo(false);
    assertThat(marks(browser, "#payload")).containsExactly("\\u202E");
  }

  @Test
  void a_workers_name_and_a_reason_with_controls_are_marked_and_isolated_on_every_screen() {
    String queue = uniqueQueue("bidi");
    String worker = "mailer\u202e-1";
    String reason = "550 \u2067rejected\u2069 \u200f\u202edlrow olleh";
    String id = Seed.failed(queue, "bidi/2", worker, reason);
    String workerShown = "mailer\\u202E-1";
    String reasonShown = "550 \\u2067rejected\\u2069 \\u200F\\u202Edlrow olleh";
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);

    browser.visible(By.id("fail-" + id));
    assertThat(browser.script(CONTROLS_IN_PAGE)).as("overview: a bidi control").isEqualTo(false);
    assertThat(text(browser, By.id("fail-" + id))).isEqualTo(reasonShown);
    isolated(browser, "#fail-" + id);
    isolated(browser, "li:has(#fail-" + id + ") .meta bdi:nth-of-type(2)");
    assertThat(text(browser, By.cssSelector("li:has(#fail-" + id + ") .meta bdi:nth-of-type(2)")))
        .isEqualTo(workerShown);

    browser.open("/console/#/failed?queue=" + queue);
    browser.visible(By.id("row-" + id));
    assertThat(browser.script(CONTROLS_IN_PAGE)).as("failed list: a bidi control").isEqualTo(false);

    browser.open("/console/#/items/" + id);
    browser.text(By.id("state"), "failed");
    assertThat(browser.script(CONTROLS_IN_PAGE)).as("item: a bidi control").isEqualTo(false);
    assertThat(text(browser, By.id("reason"))).isEqualTo(reasonShown);
    assertThat(marks(browser, "#reason"))
        .containsExactly("\\u2067", "\\u2069", "\\u200F", "\\u202E");
    // The attempt's outcome stays after the worker's name: nothing reverses it.
    assertThat(text(browser, By.cssSelector("#attempts .attempt-head")))
        .isEqualTo("Attempt 1 by " + workerShown + ": failed");
    isolated(browser, "#attempts .attempt-head bdi");
    int nameRight =
        ((Number)
                browser.script(
                    "return document.querySelector('#attempts .attempt-head bdi')"
                        + ".getBoundingClientRect().right"))
            .intValue();
    int badgeLeft =
        browser.visible(By.cssSelector("#attempts .attempt-head .badge")).getRect().getX();
    assertThat(badgeLeft).as("the outcome, right of the worker").isGreaterThan(nameRight);
  }

  /** The texts of the marks (shown controls) in the element, in order. */
  @SuppressWarnings("unchecked")
  private static List<String> marks(Browser browser, String css) {
    return (List<String>)
        browser.script(
            "return [...document.querySelectorAll(arguments[0] + ' mark.control')]"
                + ".map((m) => m.textContent)",
            css);
  }

  /** The element (data) is isolated from the text around it. */
  private static void isolated(Browser browser, String css) {
    assertThat(
            browser.script(
                "return getComputedStyle(document.querySelector(arguments[0])).unicodeBidi", css))
        .as("unicode-bidi of %s", css)
        .isEqualTo("isolate");
  }

  private static String text(Browser browser, By by) {
    return browser.until(
        d -> java.util.Optional.ofNullable(d.findElement(by).getDomProperty("textContent")));
  }
}
