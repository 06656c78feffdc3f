package dev.claimq.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.junit.QuarkusTest;
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
}
