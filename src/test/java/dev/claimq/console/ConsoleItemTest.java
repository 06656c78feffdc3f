package dev.claimq.console;

import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;

/** The item screen's other answers: cancel, resolve, a forced retry, and sends that went twice. */
@QuarkusTest
class ConsoleItemTest extends ConsoleTest {

  @Test
  void cancel_asks_for_a_confirmation_and_resolve_keeps_the_reference_and_the_note() {
    String queue = uniqueQueue("item");
    String toCancel = Seed.failed(queue, "i/1", "mailer-1", "no such user");
    String toResolve = Seed.failed(queue, "i/2", "mailer-1", "outcome unknown");
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);

    browser.open("/console/#/items/" + toCancel);
    browser.click(By.id("cancel"));
    assertThat(Seed.state(toCancel)).as("not before the confirmation").isEqualTo("failed");
    browser.click(By.id("cancel-confirm"));
    browser.text(By.id("state"), "cancelled");
    browser.text(By.id("action-log"), "cancel by dev-operator");
    assertThat(Seed.state(toCancel)).isEqualTo("cancelled");

    browser.open("/console/#/items/" + toResolve);
    resolve(browser, "msg_0193", "Provider confirms delivery of msg_0193.");
    browser.text(By.id("state"), "done");
    browser.text(By.id("action-log"), "Provider confirms delivery of msg_0193.");
    Seed.as(Seed.OPERATOR)
        .get("/v1/items/{id}", toResolve)
        .then()
        .body("externalRef", org.hamcrest.Matchers.equalTo("msg_0193"));
  }

  @Test
  void an_address_that_is_not_valid_percent_encoding_names_no_item_and_leaves_no_actions() {
    String id = Seed.failed(uniqueQueue("address"), "a/1", "mailer-1", "mailbox full");
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    browser.open("/console/#/items/" + id);
    browser.text(By.id("state"), "failed");
    browser.visible(By.id("retry"));
    browser.log(); // what the browser said so far

    // %E0%A4 is the start of a three-byte UTF-8 sequence, cut short: decodeURIComponent throws.
    browser.script("location.hash = '#/items/%E0%A4'");
    browser.text(By.cssSelector("main h1"), "No such page");
    browser.text(
        By.cssSelector("main .problem"), "#/items/%E0%A4 is not correctly percent-encoded");
    // Nothing of the item shown before stays under the new address, least of all its actions.
    for (String gone : List.of("retry", "cancel", "actions", "state", "reason", "payload")) {
      assertThat(browser.driver().findElements(By.id(gone))).as("#%s", gone).isEmpty();
    }
    assertThat(browser.driver().findElement(By.id("main")).getText()).doesNotContain(id);
    assertThat(browser.log())
        .as("the browser's console: no uncaught URIError")
        .noneSatisfy(entry -> assertThat(entry.getLevel().getName()).isEqualTo("SEVERE"));

    // A good address after it opens its item again.
    browser.script("location.hash = '#/items/" + id + "'");
    browser.text(By.id("state"), "failed");
    browser.visible(By.id("retry"));

    // '.' and '..', sent, would be steps up the API's path (/v1/items/.. asks for /v1/): the
    // page said "There is no such resource". Written encoded too, they name nothing.
    for (String step : List.of("..", ".", "%2E%2E")) {
      browser.script("location.hash = '#/items/" + step + "'");
      browser.text(By.cssSelector("main h1"), "No such page");
      browser.text(
          By.cssSelector("main .problem"),
          "#/items/" + step + " has '.' or '..' where a name goes");
      assertThat(browser.driver().findElements(By.id("retry"))).as(step).isEmpty();
      browser.script("location.hash = '#/queues/" + step + "'");
      browser.text(By.cssSelector("main .problem"), "#/queues/" + step + " has '.' or '..'");
    }
  }

  @Test
  void a_retry_past_the_providers_idempotency_horizon_is_refused_then_can_be_forced()
      throws Exception {
    String id = Seed.pastTheHorizon("horizon");
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    browser.open("/console/#/items/" + id);

    browser.click(By.id("retry"));
    browser.text(By.id("messages"), "Retry refused (409)");
    assertThat(Seed.state(id)).isEqualTo("failed");
    browser.click(By.id("retry-force"));
    browser.text(By.id("state"), "pending");
    browser.text(By.id("messages"), "the next send may be a new one");
  }

  @Test
  void a_retry_from_a_page_shown_before_the_item_was_retried_and_failed_again_sends_nothing() {
    String queue = uniqueQueue("stale");
    String id = Seed.failed(queue, "s/1", "mailer-1", "mailbox full");
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    browser.open("/console/#/items/" + id);
    browser.text(By.id("state"), "failed");

    // Meanwhile another operator retries it, and it fails again.
    Seed.as(Seed.OPERATOR).post("/v1/items/{id}/retry", id).then().statusCode(200);
    String token = Seed.claim(id, 30);
    Seed.as(Seed.WORKER)
        .contentType(ContentType.JSON)
        .body(Map.of("claimToken", token, "error", "mailbox full again", "retryable", false))
        .post("/v1/items/{id}/fail", id)
        .then()
        .statusCode(200);

    // This page still shows the first failure: its retry would be a third send.
    browser.click(By.id("retry"));
    browser.text(By.id("messages"), "Retry refused (412)");
    assertThat(browser.visible(By.id("messages")).getText())
        .contains("It changed since this page showed it: it is now failed, as shown below.");
    assertThat(Seed.state(id)).isEqualTo("failed");
    java.util.List<Object> actions =
        Seed.as(Seed.OPERATOR)
            .get("/v1/items/{id}/actions", id)
            .then()
            .statusCode(200)
            .extract()
            .path("actions");
    assertThat(actions).hasSize(1);
    // The page now shows the second failure, and a retry from it goes ahead.
    browser.text(By.id("action-log"), "retry by dev-operator");
    browser.click(By.id("retry"));
    browser.text(By.id("state"), "pending");
  }

  @Test
  void a_cancel_from_a_page_shown_before_the_item_was_retried_leaves_the_retry_standing() {
    String id = Seed.failed(uniqueQueue("stale"), "s/2", "mailer-1", "mailbox full");
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    browser.open("/console/#/items/" + id);
    browser.text(By.id("state"), "failed");

    // Meanwhile another operator decides it should go again.
    Seed.as(Seed.OPERATOR).post("/v1/items/{id}/retry", id).then().statusCode(200);

    // This page still shows it failed: cancelling from it would undo that retry unseen.
    browser.click(By.id("cancel"));
    browser.click(By.id("cancel-confirm"));
    browser.text(By.id("messages"), "Cancel refused (412)");
    assertThat(browser.visible(By.id("messages")).getText())
        .contains("It changed since this page showed it: it is now pending, as shown below.");
    assertThat(Seed.state(id)).isEqualTo("pending");
    // The page shows the retry now; a cancel decided on it goes ahead.
    browser.text(By.id("action-log"), "retry by dev-operator");
    browser.click(By.id("cancel"));
    browser.click(By.id("cancel-confirm"));
    browser.text(By.id("state"), "cancelled");
  }

  @Test
  void a_late_success_and_the_duplicate_send_it_makes_are_shown() throws Exception {
    String queue = uniqueQueue("late");
    String id = Seed.enqueue(queue, "l/1", "{}", 3);
    String stale = Seed.claim(id, 1);
    for (int i = 0; i < 60 && !Seed.state(id).equals("pending"); i++) {
      Thread.sleep(100); // the reaper ends the 1 s lease
    }
    String current = Seed.claim(id, 60);
    Seed.complete(id, current, "msg_new").then().statusCode(200);
    Seed.complete(id, stale, "msg_old").then().statusCode(409);

    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    browser.open("/console/#/items/" + id);
    browser.text(By.id("duplicates"), "Sent twice: 1 duplicate send:");
    String attempts = browser.text(By.id("attempts"), "late success").getText();
    assertThat(attempts).contains("lease_expired", "late success: reported msg_old", "done");
  }
}
