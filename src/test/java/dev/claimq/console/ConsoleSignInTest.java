package dev.claimq.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;

/** Only a 401 ends a key's session: a service that cannot answer for a while does not. */
@QuarkusTest
class ConsoleSignInTest extends ConsoleRacesTest {

  @Test
  void a_sign_in_answered_503_keeps_the_key_and_a_reload_signs_in_with_it() {
    Browser browser = signedIn("");
    browser.visible(By.id("latest-title"));

    // (A connection closed with no answer is no test here: Chromium sends such a GET again.)
    relay.next("GET", "/v1/me", Relay.Fate.UNAVAILABLE);
    browser.driver().navigate().refresh();
    browser.text(By.id("sign-in-reason"), "Could not sign in (503)");
    assertThat(browser.script("return sessionStorage.getItem('claimq.key')"))
        .as("the key after a sign-in answered 503")
        .isEqualTo(Seed.OPERATOR);

    browser.driver().navigate().refresh();
    browser.visible(By.id("latest-title"));
    browser.text(By.id("who-name"), "Signed in as dev-operator");

    // A 401 is the one answer that says the key is no good: then it is forgotten.
    browser.script("sessionStorage.setItem('claimq.key', 'not-a-key')");
    browser.driver().navigate().refresh();
    browser.text(By.id("sign-in-reason"), "(401)");
    assertThat(browser.script("return sessionStorage.getItem('claimq.key')")).isNull();
  }
}
