package dev.claimq.console;

import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.junit.QuarkusTest;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;

/** Who may do what in the console is what the API says: the console only shows it. */
@QuarkusTest
class ConsoleAccessTest extends ConsoleTest {

  @Test
  void a_wrong_key_gets_a_clear_screen_and_no_console() {
    Browser browser = browser();
    signIn(browser, "not-a-key");

    browser.text(By.id("sign-in-reason"), "That key was refused (401)");
    assertThat(browser.visible(By.id("api-key")).isDisplayed()).isTrue();
    assertThat(browser.driver().findElement(By.id("nav")).isDisplayed()).isFalse();
    assertThat(browser.script("return sessionStorage.length")).isEqualTo(0L);
  }

  @Test
  void a_key_without_the_operator_role_reads_every_screen_without_actions() {
    String queue = uniqueQueue("readonly");
    String id = Seed.failed(queue, "r/1", "mailer-1", "quota exceeded");
    Browser browser = browser();
    signIn(browser, Seed.WORKER);
    browser.text(By.id("read-only"), "Read-only");
    browser.text(By.id("who-name"), "Signed in as dev-worker (worker)");
    // Every screen that reads; Bulk only acts, so it is not offered.
    assertThat(
            browser.driver().findElements(By.cssSelector("#nav a")).stream()
                .filter(a -> a.isDisplayed())
                .map(a -> a.getText()))
        .containsExactly("Overview", "Failed items", "Held", "Queues", "Search");

    // The first screen shows the failure with its reason, as it does to an operator.
    browser.text(By.id("fail-" + id), "quota exceeded");
    browser.click(By.id("fail-" + id));
    browser.text(By.id("reason"), "quota exceeded");
    browser.text(By.id("attempts"), "mailer-1");
    assertThat(browser.driver().findElement(By.id("retry")).isDisplayed()).isFalse();
    assertThat(browser.driver().findElement(By.id("cancel")).isDisplayed()).isFalse();

    // Forced: the hidden buttons shown by hand, as anyone could in the browser's tools.
    browser.script("document.getElementById('actions').hidden = false");
    browser.click(By.id("retry"));
    browser.text(By.id("messages"), "Retry refused (403)");
    assertThat(Seed.state(id)).isEqualTo("failed");

    // A queue's policy is shown, and there is nothing to change it with.
    browser.click(By.linkText("Queues"));
    showMore(browser, By.linkText(queue), "more-queue-pages"); // others' queues come first
    browser.click(By.linkText(queue));
    browser.text(By.id("claims-state"), "Running");
    assertThat(browser.driver().findElements(By.id("pause"))).isEmpty();
    assertThat(browser.driver().findElements(By.id("save-policy"))).isEmpty();
    assertThat(browser.visible(By.id("policy-maxAttempts")).getAttribute("readonly")).isNotNull();

    browser.click(By.linkText("Search"));
    browser.submit(By.id("search-q"), "r/1");
    browser.text(By.id("found-" + id), "Item " + id);
  }

  @Test
  void the_failed_and_held_lists_show_no_stray_text_where_an_operator_sees_the_bulk_link() {
    String queue = uniqueQueue("nobulk");
    String id = Seed.failed(queue, "x/1", "mailer-1", "quota exceeded");
    Browser browser = browser();
    for (String key : List.of(Seed.WORKER, Seed.AGENT)) {
      signIn(browser, key);
      browser.text(By.id("read-only"), "Read-only");

      browser.open("/console/#/failed?queue=" + queue);
      browser.text(By.id("failed-count"), "1 failed item shown");
      browser.visible(By.id("row-" + id));
      // No bulk link for this key, and nothing in its place: once the text "null" stood there.
      assertThat(browser.driver().findElements(By.partialLinkText("in bulk"))).isEmpty();
      assertThat(browser.script("return document.getElementById('main').textContent"))
          .as("the failed list's text, for %s", key)
          .asString()
          .doesNotContainIgnoringCase("null");

      browser.open("/console/#/held?queue=" + queue);
      browser.text(By.id("held-count"), "Nothing waits for approval.");
      assertThat(browser.driver().findElements(By.partialLinkText("in bulk"))).isEmpty();
      assertThat(browser.script("return document.getElementById('main').textContent"))
          .as("the held list's text, for %s", key)
          .asString()
          .doesNotContainIgnoringCase("null");

      browser.click(By.id("sign-out"));
      browser.visible(By.id("api-key"));
    }
  }

  @Test
  void the_key_is_in_no_url_history_entry_cookie_or_local_storage_after_signing_in() {
    String id = Seed.failed(uniqueQueue("nokey"), "n/1", "mailer-1", "bounced");
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    browser.text(By.id("fail-" + id), "bounced");
    browser.click(By.id("fail-" + id));
    browser.text(By.id("state"), "failed");
    browser.click(By.linkText("Failed items"));
    browser.visible(By.id("failed-filters"));

    @SuppressWarnings("unchecked")
    List<Map<String, Object>> history =
        (List<Map<String, Object>>) browser.cdp("Page.getNavigationHistory").get("entries");
    assertThat(history).hasSizeGreaterThanOrEqualTo(3);
    assertThat(history)
        .allSatisfy(entry -> assertThat(entry.get("url").toString()).doesNotContain(Seed.OPERATOR));
    assertThat(browser.driver().getCurrentUrl()).doesNotContain(Seed.OPERATOR);
    assertThat(browser.driver().manage().getCookies()).isEmpty();
    assertThat(browser.script("return document.cookie")).isEqualTo("");
    assertThat(browser.script("return localStorage.length")).isEqualTo(0L);
    assertThat(
            browser.script(
                "return performance.getEntriesByType('resource').map(e => e.name).join(' ')"))
        .asString()
        .contains("/v1/items")
        .doesNotContain(Seed.OPERATOR);
    // Where it is kept: this tab's session storage, and only there.
    assertThat(browser.script("return sessionStorage.getItem('claimq.key')"))
        .isEqualTo(Seed.OPERATOR);

    browser.click(By.id("sign-out"));
    browser.visible(By.id("api-key"));
    assertThat(browser.script("return sessionStorage.length")).isEqualTo(0L);
  }
}
