package dev.claimq.console;

import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.junit.QuarkusTest;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.Keys;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.interactions.Actions;

/**
 * Bulk actions, pause and resume, and a policy save, as a hurried operator meets them: one request
 * per decision (counted at the relay and in the action tables), and an answer that never came said
 * to be unknown, with what is true now shown.
 */
@QuarkusTest
class ConsoleBulkAndQueueRacesTest extends ConsoleRacesTest {

  @Test
  void a_double_clicked_bulk_confirmation_retries_each_item_once_and_says_how_many()
      throws Exception {
    String queue = uniqueQueue("bulktwice");
    List<String> ids = failed(queue, 3);
    Browser browser = signedIn("bulk?queue=" + queue, "POST", "/v1/items:retry", Relay.Fate.HELD);
    browser.click(By.id("preview"));
    browser.text(By.id("bulk-result-title"), "3 items will be retried");
    int previews = relay.seen("POST", "/v1/items:retry");

    new Actions(browser.driver()).doubleClick(browser.visible(By.id("confirm"))).perform();

    browser.text(By.id("bulk-result-title"), "3 items retried.");
    Thread.sleep(1200); // a second confirmation would be held this long, then answer
    assertThat(relay.seen("POST", "/v1/items:retry") - previews).as("confirmations").isEqualTo(1);
    for (String id : ids) {
      assertThat(itemActions(id, "retry")).isEqualTo(1);
    }
    assertThat(browser.visible(By.id("bulk-result-title")).getText()).isEqualTo("3 items retried.");
    assertThat(message(browser)).isEqualTo("3 items retried.");
  }

  @Test
  void while_a_bulk_confirmation_is_held_the_action_choice_and_discard_cannot_be_used()
      throws Exception {
    String queue = uniqueQueue("bulkheld");
    List<String> ids = failed(queue, 2);
    Browser browser = signedIn("bulk?queue=" + queue, "POST", "/v1/items:retry", Relay.Fate.HELD);
    browser.click(By.id("preview"));
    browser.text(By.id("bulk-result-title"), "2 items will be retried");
    int previews = relay.seen("POST", "/v1/items:retry");

    browser.click(By.id("confirm"));

    // Read at once, while the relay still holds the confirmation.
    assertThat(browser.script(ENABLED_CONTROLS)).as("usable while it is in flight").isEqualTo("");
    // What a hurried operator tries meanwhile: another action, or discarding what is sent.
    browser.driver().findElement(By.id("bulk-cancel")).click();
    browser.driver().findElement(By.id("discard")).click();

    browser.text(By.id("bulk-result-title"), "2 items retried.");
    assertThat(relay.seen("POST", "/v1/items:retry") - previews).as("confirmations").isEqualTo(1);
    assertThat(relay.seen("POST", "/v1/items:cancel")).isZero();
    for (String id : ids) {
      assertThat(itemActions(id, "retry")).isEqualTo(1);
    }
    assertThat(browser.visible(By.id("bulk-retry")).isSelected()).as("retry still chosen").isTrue();
    assertThat(browser.visible(By.id("bulk-cancel")).isEnabled()).as("usable again").isTrue();
  }

  @Test
  void while_a_new_dry_run_is_held_the_earlier_previews_confirmation_cannot_be_used()
      throws Exception {
    String queue = uniqueQueue("bulkagain");
    List<String> ids = failed(queue, 2);
    Browser browser = signedIn("bulk?queue=" + queue, "POST", "/v1/items:retry", Relay.Fate.HELD);
    browser.click(By.id("preview"));
    browser.text(By.id("bulk-result-title"), "2 items will be retried");

    browser.click(By.id("preview"));

    // Read at once, while the relay still holds the second dry run.
    assertThat(browser.script(ENABLED_CONTROLS)).as("usable while it is in flight").isEqualTo("");
    browser.driver().findElement(By.id("confirm")).click();
    // The second preview replaces the first, and its confirmation can be used.
    browser.until(
        driver -> Optional.of(driver.findElement(By.id("confirm"))).filter(WebElement::isEnabled));
    assertThat(relay.seen("POST", "/v1/items:retry"))
        .as("two dry runs, no confirmation")
        .isEqualTo(2);
    for (String id : ids) {
      assertThat(itemActions(id, "retry")).isZero();
    }
  }

  @Test
  void a_bulk_cancel_answered_503_says_the_outcome_is_unknown_and_previews_again()
      throws Exception {
    String queue = uniqueQueue("bulklost");
    List<String> ids = failed(queue, 2);
    Browser browser = signedIn("bulk?action=cancel&queue=" + queue);
    browser.click(By.id("preview"));
    browser.text(By.id("bulk-result-title"), "2 items will be cancelled");
    relay.next("POST", "/v1/items:cancel", Relay.Fate.UNAVAILABLE);

    browser.click(By.id("confirm"));

    assertThat(saidUnknown(browser))
        .isEqualTo(
            "Bulk cancel: outcome unknown (503). Service Unavailable. Some or all of the items"
                + " may have been cancelled; the preview below is what matches now.");
    browser.text(By.id("bulk-result-title"), "No failed item matches: nothing to cancel.");
    for (String id : ids) {
      assertThat(itemActions(id, "cancel")).isEqualTo(1);
    }
  }

  @Test
  void a_double_clicked_pause_pauses_once_and_says_so() throws Exception {
    String queue = uniqueQueue("pausetwice");
    Browser browser =
        signedIn("queues/" + queue, "POST", "/v1/queues/" + queue + "/pause", Relay.Fate.HELD);

    new Actions(browser.driver()).doubleClick(browser.visible(By.id("pause"))).perform();

    browser.text(By.id("claims-state"), "Paused");
    sentOnce("POST", "/v1/queues/" + queue + "/pause");
    assertThat(queueActions(queue, "pause")).isEqualTo(1);
    assertThat(message(browser)).isEqualTo("Queue " + queue + " paused.");
  }

  @Test
  void the_second_click_of_a_slow_double_click_does_not_resume_what_the_first_paused()
      throws Exception {
    String queue = uniqueQueue("pausetoggle");
    Browser browser = signedIn("queues/" + queue);
    WebElement pause = browser.visible(By.id("pause"));

    // "Resume claims" takes the place of "Pause claims" as soon as the pause is answered.
    new Actions(browser.driver())
        .moveToElement(pause)
        .click()
        .pause(Duration.ofMillis(250))
        .click()
        .perform();

    browser.text(By.id("claims-state"), "Paused");
    Thread.sleep(500);
    assertThat(browser.visible(By.id("claims-state")).getText()).startsWith("Paused");
    assertThat(queueActions(queue, "pause")).isEqualTo(1);
    assertThat(queueActions(queue, "resume")).isZero();
  }

  @Test
  void enter_pressed_twice_saves_a_policy_once() throws Exception {
    String queue = uniqueQueue("policytwice");
    Browser browser =
        signedIn("queues/" + queue, "PUT", "/v1/queues/" + queue + "/policy", Relay.Fate.HELD);

    browser.visible(By.id("policy-maxAttempts")).sendKeys("7", Keys.ENTER, Keys.ENTER);

    browser.text(By.id("policy-maxAttempts-hint"), "In effect: 7");
    sentOnce("PUT", "/v1/queues/" + queue + "/policy");
    assertThat(queueActions(queue, "policy")).isEqualTo(1);
    assertThat(message(browser)).isEqualTo("Policy of " + queue + " saved.");
  }

  @Test
  void a_pause_whose_answer_was_lost_says_the_outcome_is_unknown_and_shows_it_paused()
      throws Exception {
    String queue = uniqueQueue("pauselost");
    Browser browser =
        signedIn("queues/" + queue, "POST", "/v1/queues/" + queue + "/pause", Relay.Fate.LOST);

    browser.click(By.id("pause"));

    assertThat(saidUnknown(browser))
        .isEqualTo(
            "Pause: outcome unknown. claimq did not answer (Failed to fetch). It may or may not"
                + " have been done; claims are now paused, and the policy below is as saved now."
                + " Check it before you act again.");
    browser.text(By.id("claims-state"), "Paused");
    assertThat(queueActions(queue, "pause")).isEqualTo(1);
  }

  /** The ids of the bulk form's choices and the result's buttons that can be used now. */
  private static final String ENABLED_CONTROLS =
      "return [...document.querySelectorAll('#bulk-form input[type=radio], #bulk-result"
          + " button')].filter((c) => !c.disabled).map((c) => c.id).join(' ');";

  private static List<String> failed(String queue, int n) {
    return IntStream.range(0, n)
        .mapToObj(i -> Seed.failed(queue, "r/" + i, "mailer-1", "HTTP 503 from provider"))
        .toList();
  }

  private long queueActions(String queue, String action) throws Exception {
    return count("SELECT count(*) FROM queue_action WHERE queue = ? AND action = ?", queue, action);
  }
}
