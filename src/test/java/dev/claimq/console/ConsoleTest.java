package dev.claimq.console;

import io.quarkus.test.common.http.TestHTTPResource;
import jakarta.inject.Inject;
import java.net.URI;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Optional;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;

/** What every console test does: open a browser on the test service and sign in. */
abstract class ConsoleTest {
  @TestHTTPResource("/")
  URI base;

  @Inject DataSource dataSource;

  private Browser browser;

  Browser browser() {
    return browser(1280, 900);
  }

  Browser browser(int width, int height) {
    browser = new Browser(base, width, height);
    return browser;
  }

  /** A browser that reaches the service only through the relay, which decides requests' fates. */
  Browser browser(Relay relay) {
    browser = new Browser(relay.uri(), 1280, 900);
    return browser;
  }

  @AfterEach
  void closeTheBrowser() {
    if (browser != null) {
      browser.close();
    }
  }

  /**
   * Waits for a queue's row on the overview, asking for more of the listing until it is shown: the
   * queues other tests leave can fill its first page.
   */
  static void showQueue(Browser browser, String queue) {
    showMore(browser, By.id("q-" + queue), "more-queues");
  }

  /** Waits for the element, pressing the button that loads more (moreId) until it is shown. */
  static void showMore(Browser browser, By wanted, String moreId) {
    browser.until(
        d -> {
          if (d.findElements(wanted).stream().anyMatch(WebElement::isDisplayed)) {
            return Optional.of(true);
          }
          d.findElements(By.id(moreId)).stream()
              .filter(WebElement::isDisplayed)
              .findFirst()
              .ifPresent(WebElement::click);
          return Optional.empty();
        });
  }

  /** A count read from the database, e.g. of the item_action rows an action made. */
  long count(String sql, String... params) throws SQLException {
    try (Connection connection = dataSource.getConnection();
        PreparedStatement statement = connection.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        statement.setString(i + 1, params[i]);
      }
      try (ResultSet row = statement.executeQuery()) {
        row.next();
        return row.getLong(1);
      }
    }
  }

  /** On an item's page: opens Resolve, types the reference and the note, and presses Resolve. */
  static void resolve(Browser browser, String reference, String note) {
    browser.click(By.id("resolve-open"));
    browser.type(By.id("resolve-ref"), reference);
    browser.type(By.id("resolve-note"), note);
    browser.click(By.id("resolve"));
  }

  /** Opens the console and signs in with the key: one interaction (typing it and Enter). */
  static void signIn(Browser browser, String key) {
    browser.open("/console/");
    browser.submit(By.id("api-key"), key);
  }
}
