package dev.claimq.console;

import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.junit.QuarkusTest;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.Keys;

/**
 * What a keyboard or screen-reader user meets beyond what axe checks: each screen named in the
 * title, the focus kept where the next Tab makes sense, and an overview that can be stopped.
 */
@QuarkusTest
class ConsoleKeyboardTest extends ConsoleTest {

  @Test
  void each_screen_has_a_title_of_its_own() {
    String failed = Seed.failed(uniqueQueue("titles"), "t/1", "mailer-1", "bounced");
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    List<String> titles = new ArrayList<>();
    String previous = "";
    for (String screen :
        List.of("#/", "#/failed", "#/held", "#/bulk", "#/queues", "#/items/" + failed)) {
      browser.open("/console/" + screen);
      // Only the hash changes: wait for this screen's heading, not the last one's.
      String before = previous;
      String heading =
          browser.until(
              d ->
                  java.util.Optional.of(browser.visible(By.cssSelector("#main h1")).getText())
                      .filter(text -> !text.equals(before)));
      previous = heading;
      browser.until(
          d ->
              java.util.Optional.of(browser.script("return document.title"))
                  .filter(title -> title.equals(heading + " – claimq console")));
      titles.add((String) browser.script("return document.title"));
    }
    assertThat(titles).doesNotHaveDuplicates();
  }

  @Test
  void escape_backs_out_of_a_cancel_and_a_search_is_told_in_one_line() {
    String queue = uniqueQueue("escape");
    String failed = Seed.failed(queue, "e/1", "mailer-1", "bounced");
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    browser.open("/console/#/items/" + failed);
    browser.visible(By.id("cancel")).sendKeys(Keys.ENTER);
    assertThat(browser.focused().getDomAttribute("id")).isEqualTo("cancel-confirm");
    browser.press(Keys.ESCAPE);
    browser.visible(By.id("cancel"));
    assertThat(browser.focused().getDomAttribute("id")).isEqualTo("cancel");
    assertThat(browser.driver().findElement(By.id("cancel-confirm")).isDisplayed()).isFalse();
    assertThat(Seed.state(failed)).isEqualTo("failed");
    assertThat(browser.visible(By.id("payload")).getDomAttribute("aria-label"))
        .isEqualTo("Payload");

    browser.open("/console/#/search");
    browser.submit(By.id("search-q"), "e/1");
    browser.visible(By.id("found-" + failed));
    assertThat(browser.script("return document.getElementById('search-said').textContent"))
        .isEqualTo("1 found for “e/1”.");
    assertThat(browser.driver().findElement(By.id("search-results")).getDomAttribute("aria-live"))
        .isNull();
  }

  @Test
  void a_refused_bulk_reject_marks_the_field_it_names_not_a_hidden_one() {
    String queue = Seed.gated("reject-why");
    Seed.enqueue(queue, "r/1", "{}", 3);
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    browser.open("/console/#/bulk?action=reject&queue=" + queue);
    browser.click(By.id("preview"));
    browser.text(By.id("bulk-result"), "The dry run was refused");

    // The API names 'reason': for a reject that is what "Why reject" holds.
    assertThat(browser.focused().getDomAttribute("id")).isEqualTo("bulk-rejection");
    assertThat(browser.visible(By.id("bulk-rejection")).getDomAttribute("aria-invalid"))
        .isEqualTo("true");
    assertThat(browser.visible(By.id("bulk-rejection-problem")).getText()).isNotBlank();
  }

  @Test
  void discarding_a_preview_gives_the_focus_back_to_the_preview_button() {
    String queue = uniqueQueue("discard");
    Seed.failed(queue, "d/1", "mailer-1", "bounced");
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    browser.open("/console/#/bulk");
    browser.type(By.id("bulk-queue"), queue);
    browser.click(By.id("preview"));
    browser.text(By.id("bulk-result-title"), "1 item will be retried");
    browser.visible(By.id("discard")).sendKeys(Keys.ENTER);

    browser.until(
        d ->
            d.findElements(By.id("discard")).isEmpty()
                ? java.util.Optional.of(1)
                : java.util.Optional.empty());
    assertThat(browser.focused().getDomAttribute("id")).isEqualTo("preview");
  }

  @Test
  void an_actions_outcome_is_said_in_sight_of_a_page_scrolled_down_to_it() {
    String queue = uniqueQueue("in-sight");
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    browser.resize(1280, 500);
    browser.open("/console/#/queues/" + queue);
    browser.type(By.id("policy-maxAttempts"), "7");
    browser.visible(By.id("save-policy")).sendKeys(Keys.ENTER);
    browser.text(By.id("messages"), "saved");

    // The save button is far down; the message above the screen is scrolled into sight.
    browser.until(
        d ->
            java.util.Optional.of(
                    ((Number)
                            browser.script(
                                "return document.getElementById('messages')"
                                    + ".getBoundingClientRect().top"))
                        .doubleValue())
                .filter(top -> top > -2)); // scrolled to, give or take a fraction of a pixel
  }

  @Test
  void the_overview_can_be_paused_and_an_unchanged_table_keeps_its_nodes()
      throws InterruptedException {
    String queue = uniqueQueue("paused-overview");
    Seed.enqueue(queue, "p/1", "{}", 3);
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    // With a hundred queues of other tests, this one may be past the first page.
    showQueue(browser, queue);
    By pending = By.xpath("//tr[td/a[@id='q-" + queue + "']]/td[3]");
    browser.text(pending, "1");

    // After a refresh the same row is still there, not a copy of it: only what changed (the
    // oldest item's age) is written again.
    browser.script("window.kept = document.getElementById('q-" + queue + "')");
    String stamp = browser.visible(By.cssSelector(".summary + .hint span")).getText();
    browser.until(
        d ->
            java.util.Optional.of(
                    browser.visible(By.cssSelector(".summary + .hint span")).getText())
                .filter(text -> !text.equals(stamp))); // a refresh has run since
    assertThat(browser.script("return window.kept === document.getElementById('q-" + queue + "')"))
        .isEqualTo(true);

    browser.click(By.id("pause-updates"));
    assertThat(browser.visible(By.id("pause-updates")).getDomAttribute("aria-pressed"))
        .isEqualTo("true");
    browser.text(By.cssSelector(".summary + .hint"), "updates paused");
    Seed.enqueue(queue, "p/2", "{}", 3);
    Thread.sleep(9_000); // two refreshes, had they not been paused
    assertThat(browser.visible(pending).getText()).isEqualTo("1");

    browser.click(By.id("pause-updates"));
    browser.text(pending, "2");
  }
}
