package dev.claimq.console;

import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.Keys;
import org.openqa.selenium.interactions.Actions;

/**
 * An item's actions as a hurried operator meets them: a double-click or a second Enter, a page
 * another operator made stale, and an answer that never came. Exactly one action takes effect, as
 * the item_action rows show, and the page says what did happen, not what the second click met.
 */
@QuarkusTest
class ConsoleItemRacesTest extends ConsoleRacesTest {
  @Test
  void a_double_clicked_retry_retries_once_and_says_only_that_it_did() throws Exception {
    String id = Seed.failed(uniqueQueue("twice"), "t/1", "mailer-1", "mailbox full");
    Browser browser = slowly(id, "retry");

    new Actions(browser.driver()).doubleClick(browser.visible(By.id("retry"))).perform();

    actedOnce(
        browser,
        id,
        "retry",
        "pending",
        "Item " + id + " is pending again: a worker will claim it.");
  }

  @Test
  void a_double_click_on_cancel_still_asks_and_a_double_clicked_confirmation_cancels_once()
      throws Exception {
    String id = Seed.failed(uniqueQueue("twice"), "t/2", "mailer-1", "no such user");
    Browser browser = slowly(id, "cancel");

    // The confirmation takes the place of "Cancel…": the second click must not confirm.
    new Actions(browser.driver()).doubleClick(browser.visible(By.id("cancel"))).perform();
    browser.visible(By.id("cancel-confirm"));
    assertThat(relay.seen("POST", "/v1/items/" + id + "/cancel")).isZero();
    assertThat(Seed.state(id)).isEqualTo("failed");

    new Actions(browser.driver()).doubleClick(browser.visible(By.id("cancel-confirm"))).perform();
    actedOnce(
        browser,
        id,
        "cancel",
        "cancelled",
        "Item " + id + " is cancelled: no worker will claim it.");
  }

  @Test
  void enter_pressed_twice_on_approve_acts_once() throws Exception {
    String id = Seed.enqueue(Seed.gated("twice"), "t/3", "{}", 3);
    Browser browser = slowly(id, "approve");

    browser.visible(By.id("approve")).sendKeys(Keys.ENTER, Keys.ENTER);

    actedOnce(
        browser,
        id,
        "approve",
        "pending",
        "Item " + id + " is approved: pending, a worker will claim it.");
  }

  @Test
  void enter_pressed_twice_in_the_resolve_form_resolves_once() throws Exception {
    String id = Seed.failed(uniqueQueue("twice"), "t/4", "mailer-1", "outcome unknown");
    Browser browser = slowly(id, "resolve");
    browser.click(By.id("resolve-open"));

    browser.visible(By.id("resolve-ref")).sendKeys("msg_0193", Keys.ENTER, Keys.ENTER);

    actedOnce(browser, id, "resolve", "done", "Item " + id + " is done, resolved by hand.");
  }

  @Test
  void a_double_clicked_rejection_rejects_once_and_its_buttons_wait_for_the_answer()
      throws Exception {
    String id = Seed.enqueue(Seed.gated("twice"), "t/5", "{}", 3);
    Browser browser = slowly(id, "reject");
    browser.type(By.id("reject-reason"), "Unsubscribed customer");

    new Actions(browser.driver()).doubleClick(browser.visible(By.id("reject"))).perform();

    // Read at once, while the relay still holds the rejection.
    assertThat(usable(browser, "reject", "approve")).as("usable while it is in flight").isEmpty();
    actedOnce(
        browser,
        id,
        "reject",
        "cancelled",
        "Item " + id + " is rejected: cancelled, it will not be sent.");
  }

  @Test
  void enter_pressed_twice_on_a_forced_retry_retries_once_and_its_buttons_wait_for_the_answer()
      throws Exception {
    String id = Seed.pastTheHorizon("twice");
    String retry = "/v1/items/" + id + "/retry";
    Browser browser = signedIn("items/" + id);
    browser.click(By.id("retry"));
    browser.text(By.id("messages"), "Retry refused (409)");
    relay.on("POST", retry, Relay.Fate.HELD);

    browser.visible(By.id("retry-force")).sendKeys(Keys.ENTER, Keys.ENTER);

    assertThat(usable(browser, "retry-force", "retry", "cancel"))
        .as("usable while it is in flight")
        .isEmpty();
    browser.text(By.id("state"), "pending");
    assertThat(sent("POST", retry)).as("the refused retry, then one forced").isEqualTo(2);
    assertThat(itemActions(id, "retry")).isEqualTo(1);
    assertThat(message(browser))
        .isEqualTo(
            "Item "
                + id
                + " is pending again: a worker will claim it. Its provider may have forgotten the"
                + " idempotency key: the next send may be a new one.");
  }

  @Test
  void an_action_on_a_page_another_operator_made_stale_says_so_and_shows_the_item_as_it_is()
      throws Exception {
    String queue = uniqueQueue("stale");
    String retried = Seed.failed(queue, "s/1", "mailer-1", "mailbox full");
    String cancelled = Seed.failed(queue, "s/2", "mailer-1", "mailbox full");
    Browser browser = signedIn("items/" + retried);

    browser.visible(By.id("retry"));
    other("retry", retried);
    browser.click(By.id("retry"));
    // The retry names the item as the page read it (If-Match): changed since, it is a 412.
    browser.text(By.id("messages"), "Retry refused (412)");
    assertThat(message(browser))
        .isEqualTo(
            "Retry refused (412): nothing was done. It changed since this page showed it: it is"
                + " now pending, as shown below. Check it, and act again if it still applies.");
    browser.text(By.id("state"), "pending");
    assertThat(itemActions(retried, "retry")).isEqualTo(1);

    browser.open("/console/#/items/" + cancelled);
    browser.click(By.id("resolve-open"));
    other("cancel", cancelled);
    browser.submit(By.id("resolve-ref"), "msg_1");
    browser.text(By.id("messages"), "Resolve refused (412)");
    assertThat(message(browser))
        .isEqualTo(
            "Resolve refused (412): nothing was done. It changed since this page showed it: it"
                + " is now cancelled, as shown below. Check it, and act again if it still"
                + " applies.");
    browser.text(By.id("state"), "cancelled");
    browser.text(By.id("action-log"), "cancel by dev-operator");
    assertThat(itemActions(cancelled, "resolve")).isZero();
  }

  @Test
  void a_retry_whose_answer_was_lost_says_the_outcome_is_unknown_and_shows_it_retried()
      throws Exception {
    String id = Seed.failed(uniqueQueue("lost"), "l/1", "mailer-1", "mailbox full");
    retriedUnknowingly(
        id,
        Relay.Fate.LOST,
        "Retry: outcome unknown. claimq did not answer (Failed to fetch). It may or may not"
            + " have been done; it is now pending, as shown below. Check it before you act"
            + " again.");
  }

  @Test
  void a_cancel_answered_503_says_the_outcome_is_unknown_and_shows_it_cancelled() throws Exception {
    String id = Seed.failed(uniqueQueue("lost"), "l/2", "mailer-1", "mailbox full");
    Browser browser =
        signedIn("items/" + id, "POST", "/v1/items/" + id + "/cancel", Relay.Fate.UNAVAILABLE);

    browser.click(By.id("cancel"));
    browser.click(By.id("cancel-confirm"));

    assertThat(saidUnknown(browser))
        .isEqualTo(
            "Cancel: outcome unknown (503). Service Unavailable. It may or may not have been"
                + " done; it is now cancelled, as shown below. Check it before you act again.");
    browser.text(By.id("state"), "cancelled");
    assertThat(itemActions(id, "cancel")).isEqualTo(1);
  }

  @Test
  void a_retry_answered_with_a_proxys_html_page_says_its_status_not_its_markup() throws Exception {
    String id = Seed.failed(uniqueQueue("lost"), "l/3", "mailer-1", "mailbox full");
    // The page's markup was the message: "outcome unknown (502). <html><head><title>502…".
    Browser browser =
        retriedUnknowingly(
            id,
            Relay.Fate.BAD_GATEWAY,
            "Retry: outcome unknown (502). Bad Gateway. It may or may not have been done; it is"
                + " now pending, as shown below. Check it before you act again.");

    // A read answered so says the same, with none of the page's markup.
    relay.on("GET", "/v1/items/" + id, Relay.Fate.BAD_GATEWAY);
    browser.open("/console/#/failed");
    browser.text(By.cssSelector("main h1"), "Failed items");
    browser.open("/console/#/items/" + id);
    browser.text(
        By.cssSelector("main .problem"), "Item " + id + " could not be read: Bad Gateway (502)");
    assertThat(browser.visible(By.id("main")).getText()).doesNotContain("<");
  }

  @Test
  void behind_a_proxy_that_weakens_entity_tags_an_action_is_still_made() throws Exception {
    // nginx with gzip on passes ETag "8151" on as W/"8151"; If-Match compares strongly, and every
    // action the console sent back with the tag it was given was a 412 "it changed".
    String id = Seed.failed(uniqueQueue("weak"), "w/1", "mailer-1", "mailbox full");
    relay.weakenEntityTags();
    Browser browser = signedIn("items/" + id);
    browser.click(By.id("retry"));
    actedOnce(
        browser,
        id,
        "retry",
        "pending",
        "Item " + id + " is pending again: a worker will claim it.");
  }

  /**
   * Presses Retry on the item's page while its retry meets this fate: the page says so, and shows
   * the item as retried, exactly once, as it was.
   */
  private Browser retriedUnknowingly(String id, Relay.Fate fate, String said) throws Exception {
    Browser browser = signedIn("items/" + id, "POST", "/v1/items/" + id + "/retry", fate);
    browser.click(By.id("retry"));
    assertThat(saidUnknown(browser)).isEqualTo(said);
    browser.text(By.id("state"), "pending");
    assertThat(itemActions(id, "retry")).isEqualTo(1);
    return browser;
  }

  /** The item's page, signed in, with the action's requests held a while on their way. */
  private Browser slowly(String id, String action) {
    Browser browser =
        signedIn("items/" + id, "POST", "/v1/items/" + id + "/" + action, Relay.Fate.HELD);
    return browser;
  }

  /** After a repeated click or Enter: one request sent, one row, and only its own message. */
  private void actedOnce(Browser browser, String id, String action, String state, String said)
      throws Exception {
    browser.text(By.id("state"), state);
    sentOnce("POST", "/v1/items/" + id + "/" + action);
    assertThat(itemActions(id, action)).isEqualTo(1);
    assertThat(message(browser)).isEqualTo(said);
  }

  /** Another operator's action on the item, straight through the API. */
  private static void other(String action, String id) {
    Seed.as(Seed.OPERATOR).post("/v1/items/{id}/" + action, id).then().statusCode(200);
  }
}
