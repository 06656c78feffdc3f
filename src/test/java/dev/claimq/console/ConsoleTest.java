package dev.claimq.console;

import io.quarkus.test.common.http.TestHTTPResource;
import java.net.URI;
import org.junit.jupiter.api.AfterEach;
import org.openqa.selenium.By;

/** What every console test does: open a browser on the test service and sign in. */
abstract class ConsoleTest {
  @TestHTTPResource("/")
  URI base;

  private Browser browser;

  Browser browser() {
    return browser(1280, 900);
  }

  Browser browser(int width, int height) {
    browser = new Browser(base, width, height);
    return browser;
  }

  @AfterEach
  void closeTheBrowser() {
    if (browser != null) {
      browser.close();
    }
  }

  /** Opens the console and signs in with the key: one interaction (typing it and Enter). */
  static void signIn(Browser browser, String key) {
    browser.open("/console/");
    browser.submit(By.id("api-key"), key);
  }
}
