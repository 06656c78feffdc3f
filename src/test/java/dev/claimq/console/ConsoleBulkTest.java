package dev.claimq.console;

import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.junit.QuarkusTest;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;

/** Many items at once: a dry run says how many and which, and only the confirmation acts. */
@QuarkusTest
class ConsoleBulkTest extends ConsoleTest {

  @Test
  void a_bulk_retry_previews_the_matching_items_then_retries_exactly_those() {
    String queue = uniqueQueue("bulk");
    List<String> matching =
        IntStream.range(0, 3)
            .mapToObj(i -> Seed.failed(queue, "b/" + i, "mailer-1", "HTTP 503 from provider"))
            .toList();
    String other = Seed.failed(queue, "b/other", "mailer-1", "invalid address");
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    browser.click(By.linkText("Bulk"));

    browser.type(By.id("bulk-queue"), queue);
    browser.type(By.id("bulk-reason"), "http 503");
    browser.click(By.id("preview"));
    browser.text(By.id("bulk-result-title"), "3 items will be retried");
    String listed = browser.visible(By.id("bulk-items")).getText();
    assertThat(listed).contains("HTTP 503 from provider").doesNotContain("invalid address");
    for (String id : matching) {
      browser.visible(By.id("fail-" + id));
      assertThat(Seed.state(id)).as("a dry run changes nothing").isEqualTo("failed");
    }
    browser.screenshot("bulk-preview-1280");

    browser.click(By.id("confirm"));
    browser.text(By.id("bulk-result-title"), "3 items retried");
    browser.text(By.id("messages"), "3 items retried");
    for (String id : matching) {
      assertThat(Seed.state(id)).isEqualTo("pending");
      Seed.as(Seed.OPERATOR)
          .get("/v1/items/{id}/actions", id)
          .then()
          .body("actions[0].action", org.hamcrest.Matchers.equalTo("retry"))
          .body("actions[0].actor", org.hamcrest.Matchers.equalTo("dev-operator"));
    }
    assertThat(Seed.state(other)).isEqualTo("failed");
  }

  @Test
  void a_bulk_cancel_says_when_more_match_than_its_limit_and_acts_on_the_previewed_ones_only()
      throws Exception {
    String queue = uniqueQueue("bulkcancel");
    List<String> items =
        IntStream.range(0, 3)
            .mapToObj(i -> Seed.failed(queue, "c/" + i, "mailer-1", "gone for good"))
            .toList();
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    browser.open("/console/#/bulk?queue=" + queue + "&action=cancel");

    browser.type(By.id("bulk-limit"), "2");
    browser.click(By.id("preview"));
    browser.text(By.id("bulk-result-title"), "2+ items will be cancelled");
    browser.text(By.id("bulk-result-title"), "more match beyond the limit");
    // Newest first: the two last made.
    browser.visible(By.id("fail-" + items.get(2)));
    browser.visible(By.id("fail-" + items.get(1)));

    // A new failure after the preview is not part of what was confirmed.
    Thread.sleep(5);
    String late = Seed.failed(queue, "c/late", "mailer-1", "gone for good");
    browser.click(By.id("confirm"));
    browser.text(By.id("bulk-result-title"), "2 items cancelled; more match");
    assertThat(Seed.state(items.get(2))).isEqualTo("cancelled");
    assertThat(Seed.state(items.get(1))).isEqualTo("cancelled");
    assertThat(Seed.state(items.get(0))).isEqualTo("failed");
    assertThat(Seed.state(late)).isEqualTo("failed");
  }

  @Test
  void a_limit_is_sent_digit_for_digit_and_its_refusal_names_it() {
    String queue = uniqueQueue("bulklimit");
    String id = Seed.failed(queue, "l/1", "mailer-1", "gone for good");
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    browser.open("/console/#/bulk?queue=" + queue);

    // 007 is not previewed as a limit of 7: it is sent as typed, and JSON has no number 007.
    browser.type(By.id("bulk-limit"), "007");
    browser.click(By.id("preview"));
    browser.text(By.id("bulk-result"), "The dry run was refused: The body is not valid JSON");
    assertThat(browser.visible(By.id("bulk-result")).getText())
        .contains("That is limit, sent as typed, 007: a JSON number does not start with 0");
    assertThat(browser.driver().findElements(By.id("confirm"))).isEmpty();

    // More digits than a double holds: refused by name, as typed, not as 1.2345678901234568e+22.
    browser.type(By.id("bulk-limit"), "12345678901234567890123");
    browser.click(By.id("preview"));
    browser.text(By.id("bulk-result"), "The dry run was refused: The value of 'limit'");
    assertThat(browser.visible(By.id("bulk-result")).getText())
        .contains("must be a whole number from 1 to 500")
        .doesNotContain("e+22");
    assertThat(browser.driver().findElements(By.id("confirm"))).isEmpty();
    assertThat(Seed.state(id)).isEqualTo("failed");
  }

  @Test
  void
      a_confirmation_after_another_operator_changed_a_previewed_item_does_nothing_and_previews_again() {
    String queue = uniqueQueue("bulkstale");
    List<String> items =
        IntStream.range(0, 3)
            .mapToObj(i -> Seed.failed(queue, "p/" + i, "mailer-1", "HTTP 503 from provider"))
            .toList();
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    browser.open("/console/#/bulk?queue=" + queue);
    browser.click(By.id("preview"));
    browser.text(By.id("bulk-result-title"), "3 items will be retried");

    // Meanwhile another operator cancels one of them: it was previewed as failed, to be retried.
    Seed.as(Seed.OPERATOR).post("/v1/items/{id}/cancel", items.get(1)).then().statusCode(200);
    browser.click(By.id("confirm"));
    browser.text(By.id("messages"), "Bulk retry refused (409): nothing was done.");
    browser.text(By.id("bulk-result-title"), "2 items will be retried");
    assertThat(Seed.state(items.get(0))).isEqualTo("failed");
    assertThat(Seed.state(items.get(2))).isEqualTo("failed");

    // The new preview is what matches now, and its confirmation goes ahead.
    browser.click(By.id("confirm"));
    browser.text(By.id("bulk-result-title"), "2 items retried");
    assertThat(Seed.state(items.get(0))).isEqualTo("pending");
    assertThat(Seed.state(items.get(1))).isEqualTo("cancelled");
    assertThat(Seed.state(items.get(2))).isEqualTo("pending");
  }

  @Test
  void an_action_in_the_address_that_bulk_does_not_have_is_taken_as_retry() {
    String queue = uniqueQueue("bulkaction");
    Seed.failed(queue, "a/1", "mailer-1", "mailbox full");
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    browser.visible(By.id("nav"));
    browser.log(); // what the browser said so far

    // The names of Object's own members were found in the actions: no action was checked, no
    // state listed, and Preview threw "Cannot read properties of undefined (reading 'states')".
    for (String action : List.of("constructor", "toString", "__proto__", "nonsense")) {
      browser.open("/console/#/failed");
      browser.text(By.cssSelector("main h1"), "Failed items");
      browser.open("/console/#/bulk?action=" + action + "&queue=" + queue);
      browser.text(By.cssSelector("main h1"), "Bulk actions");
      assertThat(browser.visible(By.id("bulk-retry")).isSelected()).as(action).isTrue();
      assertThat(browser.visible(By.id("bulk-state")).getText())
          .as(action)
          .isEqualTo("failed\ncancelled");
      browser.click(By.id("preview"));
      browser.text(By.id("bulk-result-title"), "1 item will be retried");
    }
    assertThat(browser.log())
        .as("the browser's console: no uncaught error")
        .noneSatisfy(entry -> assertThat(entry.getLevel().getName()).isEqualTo("SEVERE"));
  }
}
