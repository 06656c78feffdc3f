package dev.claimq.console;

import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;

/**
 * A payload is the agent's to shape, and an approver must read it: however deep or long it is, its
 * item's page comes at once, no longer than a bounded multiple of what was stored, and exact.
 */
@QuarkusTest
class ConsolePayloadSizeTest extends ConsoleTest {

  @Test
  void a_payload_nested_too_deep_to_indent_is_shown_as_stored_at_once_with_a_note() {
    String queue = uniqueQueue("deep");
    // 998 arrays in the payload, 999 levels with the body's object: as deep as the API takes.
    String deep = "[".repeat(998) + "0.30000000000000000001" + "]".repeat(998);
    // 250 KB: indented two spaces a level, its 125,000 numbers made 250 M characters.
    String wide = "[".repeat(998) + "1,".repeat(124_999) + "1" + "]".repeat(998);
    String deepId = enqueue(queue, "deep/1", deep);
    String wideId = enqueue(queue, "deep/2", wide);
    Browser browser = operator();

    String shown = payloadOf(browser, deepId);
    assertThat(shown.length()).as("characters shown for 2 KB").isLessThan(2 * deep.length());
    assertThat(shown.replaceAll("\\s", "")).isEqualTo(deep);
    browser.text(By.id("payload-note"), "nests deeper than 32 levels");

    // The bound is on what is built, not on time (a loaded machine is slow either way).
    shown = payloadOf(browser, wideId);
    assertThat(shown.length()).as("characters shown for 250 KB").isLessThan(2 * wide.length());
    assertThat(shown.replaceAll("\\s", "")).isEqualTo(wide);
    browser.text(By.id("payload-note"), "nests deeper than 32 levels");
  }

  @Test
  void a_payload_whose_indentation_would_run_past_a_million_characters_is_shown_as_stored() {
    String queue = uniqueQueue("long");
    // 20 levels: within the depth indented, but 30,000 lines of 40 spaces each is 1.2 M.
    String long_ = "[".repeat(20) + "1,".repeat(29_999) + "1" + "]".repeat(20);
    String shallow = "{\"amount\": 0.30000000000000000001, \"lines\": [1.50, {\"a\": []}]}";
    String longId = enqueue(queue, "long/1", long_);
    String shallowId = enqueue(queue, "long/2", shallow);
    Browser browser = operator();

    String shown = payloadOf(browser, longId);
    assertThat(shown.replaceAll("\\s", "")).isEqualTo(long_);
    assertThat(shown.length()).isLessThan(2 * long_.length());
    browser.text(By.id("payload-note"), "more than 1,000,000 characters");

    // Anything smaller is indented as before, its numbers exactly as stored, and has no note.
    assertThat(payloadOf(browser, shallowId))
        .isEqualTo(
            """
            {
              "lines": [
                1.50,
                {
                  "a": []
                }
              ],
              "amount": 0.30000000000000000001
            }""");
    assertThat(browser.driver().findElements(By.id("payload-note"))).isEmpty();
  }

  /**
   * Enqueued with this payload's JSON text; the id read from the answer's text, as a JSON reader
   * would recurse through every level of the payload it echoes.
   */
  private static String enqueue(String queue, String dedupeKey, String payload) {
    String answer =
        Seed.as(Seed.AGENT)
            .contentType(ContentType.JSON)
            .body("{\"dedupeKey\": \"" + dedupeKey + "\", \"payload\": " + payload + "}")
            .post("/v1/queues/{queue}/items", queue)
            .then()
            .statusCode(201)
            .extract()
            .asString();
    Matcher id = Pattern.compile("^\\{\"id\":\"([^\"]+)\"").matcher(answer);
    assertThat(id.find()).as("an id in %s", answer.substring(0, 80)).isTrue();
    return id.group(1);
  }

  private Browser operator() {
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    browser.visible(By.id("nav"));
    return browser;
  }

  /** Opens the (pending) item's page and answers its payload as the page shows it. */
  private static String payloadOf(Browser browser, String id) {
    browser.open("/console/#/items/" + id);
    browser.text(By.id("state"), "pending");
    return (String) browser.script("return document.getElementById('payload').textContent");
  }
}
