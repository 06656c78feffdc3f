package dev.claimq.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.junit.QuarkusTest;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.Keys;

/** The address decides the screen, and nothing but an address changes it. */
@QuarkusTest
class ConsoleRoutesTest extends ConsoleTest {

  @Test
  void the_skip_link_moves_the_focus_to_the_screen_and_leaves_the_address_as_it_was() {
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    browser.visible(By.id("nav"));
    browser.open("/console/#/failed");
    browser.text(By.cssSelector("main h1"), "Failed items");

    browser.script("document.querySelector('.skip').focus()");
    browser.press(Keys.ENTER);

    assertThat(browser.script("return location.hash")).isEqualTo("#/failed");
    browser.text(By.cssSelector("main h1"), "Failed items");
    assertThat(browser.focused().getDomAttribute("id")).isEqualTo("main");
    assertThat(browser.driver().findElements(By.id("latest-title"))).as("the overview").isEmpty();
  }

  @Test
  void a_screen_name_the_console_does_not_have_shows_no_such_page_not_the_overview() {
    Browser browser = signedIn();

    // The names of Object's own members were looked up in a plain object: a blank page and
    // "screen.render is not a function".
    for (String name : List.of("constructor", "__proto__", "toString", "valueOf", "nonsense")) {
      browser.script("location.hash = '#/" + name + "'");
      browser.text(By.cssSelector("main .problem"), "#/" + name + " ");
      browser.text(By.cssSelector("main h1"), "No such page");
      assertThat(browser.driver().findElements(By.id("latest-title"))).as(name).isEmpty();
    }
    threwNothing(browser);

    // The empty route is the Overview, with or without its slash.
    for (String overview : List.of("#/", "")) {
      browser.script("location.hash = '#/nonsense'");
      browser.text(By.cssSelector("main h1"), "No such page");
      browser.script("location.hash = '" + overview + "'");
      browser.text(By.cssSelector("main h1"), "Overview");
    }
  }

  @Test
  void items_with_no_id_is_no_such_page_not_an_item_of_undefined() {
    Browser browser = signedIn();

    // GET /v1/items/ answers the item list, which was shown as "Item" in state "undefined".
    for (String address : List.of("#/items", "#/items/")) {
      browser.script("location.hash = '#/failed'");
      browser.text(By.cssSelector("main h1"), "Failed items");
      browser.script("location.hash = '" + address + "'");
      browser.text(By.cssSelector("main .problem"), address + " ");
      browser.text(By.cssSelector("main h1"), "No such page");
      assertThat(browser.driver().findElement(By.id("main")).getText())
          .as(address)
          .doesNotContain("undefined");
      assertThat(browser.driver().findElements(By.id("state"))).as(address).isEmpty();
    }
    threwNothing(browser);
  }

  /** An operator's browser on the Overview, with what its console said so far read. */
  private Browser signedIn() {
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    browser.visible(By.id("nav"));
    browser.log();
    return browser;
  }

  /** Nothing thrown uncaught in the page since its console was last read. */
  private static void threwNothing(Browser browser) {
    assertThat(browser.log())
        .as("the browser's console: no uncaught error")
        .noneSatisfy(entry -> assertThat(entry.getLevel().getName()).isEqualTo("SEVERE"));
  }
}
