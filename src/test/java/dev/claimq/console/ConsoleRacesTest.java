package dev.claimq.console;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.openqa.selenium.By;

/**
 * A console test whose browser reaches the service through a relay, so that it can hold an action's
 * requests (to double-click while one is in flight) or lose their answers.
 */
abstract class ConsoleRacesTest extends ConsoleTest {
  Relay relay;

  @BeforeEach
  void startTheRelay() {
    relay = new Relay(base);
  }

  @AfterEach
  void stopTheRelay() {
    relay.close();
  }

  /** An operator signed in through the relay, on this page of the console (after "#/"). */
  Browser signedIn(String page) {
    Browser browser = browser(relay);
    signIn(browser, Seed.OPERATOR);
    browser.visible(By.id("nav"));
    browser.open("/console/#/" + page);
    return browser;
  }

  /** The same, with this fate for every request of this method and path. */
  Browser signedIn(String page, String method, String path, Relay.Fate fate) {
    relay.on(method, path, fate);
    return signedIn(page);
  }

  /** Waits until every such request is answered, then asserts the page sent exactly one. */
  void sentOnce(String method, String path) throws InterruptedException {
    assertThat(sent(method, path)).as("requests sent").isEqualTo(1);
  }

  /** Waits until every such request is answered, and answers how many the page sent. */
  int sent(String method, String path) throws InterruptedException {
    for (int i = 0; i < 100 && relay.finished(method, path) < relay.seen(method, path); i++) {
      Thread.sleep(50);
    }
    // An answer reaches the page a moment after the relay sends it; a second one would too.
    Thread.sleep(300);
    return relay.seen(method, path);
  }

  /** Which of these controls (by id) can be used now: none, while their action is in flight. */
  static String usable(Browser browser, String... ids) {
    return (String)
        browser.script(
            "return arguments[0].filter((id) => !document.getElementById(id).disabled).join(' ');",
            List.of(ids));
  }

  /** The item_action rows of this action on the item. */
  long itemActions(String id, String action) throws Exception {
    return count(
        "SELECT count(*) FROM item_action WHERE item_id = CAST(? AS bigint) AND action = ?",
        id,
        action);
  }

  /** What the page says once it says an action's outcome is unknown. */
  static String saidUnknown(Browser browser) {
    browser.text(By.id("messages"), "outcome unknown");
    return message(browser);
  }

  static String message(Browser browser) {
    return browser.until(d -> Optional.of(d.findElement(By.id("messages")).getText()));
  }
}
