package dev.claimq.console;

import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.Keys;
import org.openqa.selenium.WebElement;

/** The console's reason to exist: from signing in to a failed item retried, in a few steps. */
@QuarkusTest
class ConsoleJourneyTest extends ConsoleTest {

  @Test
  void an_operator_sees_why_an_item_failed_and_retries_it_within_five_interactions() {
    String queue = uniqueQueue("journey");
    String reason = "smtp 554 mailbox unavailable " + queue;
    String id = Seed.failed(queue, "welcome/1", "mailer-7", reason);
    Browser browser = browser();

    signIn(browser, Seed.OPERATOR);
    // The first screen already names the failure, by its reason.
    browser.text(By.id("fail-" + id), reason);
    browser.text(By.cssSelector("#fail-" + id + " + .meta"), queue);
    browser.screenshot("overview-1280");

    browser.click(By.id("fail-" + id));
    browser.text(By.id("reason"), reason);
    WebElement attempts = browser.text(By.id("attempts"), "Attempt 1 by mailer-7");
    assertThat(attempts.getText()).contains("failed").contains(reason);
    browser.text(By.id("state"), "failed");
    browser.screenshot("item-1280");

    browser.click(By.id("retry"));
    browser.text(By.id("state"), "pending");
    browser.text(By.id("messages"), "pending again");
    assertThat(Seed.state(id)).isEqualTo("pending");
    assertThat(browser.interactions()).isLessThanOrEqualTo(5);
  }

  @Test
  void the_payload_is_shown_exactly_as_stored_not_as_a_double_would_round_it() {
    String queue = uniqueQueue("payload");
    String id =
        Seed.enqueue(
            queue, "exact", "{\"amount\": 0.30000000000000000001, \"fee\": 1.50, \"n\": [1e3]}", 3);
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    browser.open("/console/#/items/" + id);

    // In jsonb's key order (shorter keys first), each number exactly as sent.
    String shown = browser.text(By.id("payload"), "amount").getText();
    assertThat(shown)
        .isEqualTo(
            "{\n  \"n\": [\n    1000\n  ],\n  \"fee\": 1.50,\n  \"amount\": 0.30000000000000000001\n}");
  }

  @Test
  void the_journey_works_from_the_keyboard_alone_with_focus_always_visible() {
    String queue = uniqueQueue("keys");
    String reason = "provider timeout " + queue;
    String id = Seed.failed(queue, "k/1", "mailer-9", reason);
    Browser browser = browser();
    browser.open("/console/");

    // The key field has focus on arrival; Enter submits.
    assertThat(browser.focused().getAttribute("id")).isEqualTo("api-key");
    browser.press(Seed.OPERATOR, Keys.ENTER);
    browser.text(By.id("fail-" + id), reason);

    tabTo(browser, "fail-" + id);
    browser.press(Keys.ENTER);
    browser.text(By.id("state"), "failed");

    tabTo(browser, "retry");
    browser.press(Keys.ENTER);
    browser.text(By.id("state"), "pending");
    assertThat(Seed.state(id)).isEqualTo("pending");
  }

  /** Presses Tab until the element has focus, checking on the way that focus can be seen. */
  private static void tabTo(Browser browser, String id) {
    for (int i = 0; i < 80; i++) {
      browser.press(Keys.TAB);
      WebElement focused = browser.focused();
      String outline =
          (String)
              browser.script(
                  "const s = getComputedStyle(arguments[0]);"
                      + " return s.outlineStyle + ' ' + s.outlineWidth;",
                  focused);
      assertThat(outline)
          .as("focus outline of %s", focused.getAttribute("outerHTML"))
          .doesNotStartWith("none")
          .doesNotEndWith(" 0px");
      if (id.equals(focused.getAttribute("id"))) {
        return;
      }
    }
    throw new AssertionError("Tab never reached #" + id);
  }
}
