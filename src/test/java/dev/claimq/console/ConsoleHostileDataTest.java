package dev.claimq.console;

import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.chromium.HasCdp;

/**
 * Whatever agents, workers and operators send is data, never markup: every screen that shows a key,
 * a payload, a worker, a reason, a reference or a note shows it as the text it is, and no element
 * or script is made from it.
 */
@QuarkusTest
class ConsoleHostileDataTest extends ConsoleTest {
  // Each one runs script, or makes an element, wherever a page takes it as markup or as a link.
  static final String IMG = "<img src=x onerror=\"window.__pwned=1\">";
  static final String SCRIPT = "<script>window.__pwned=1</script>";
  static final String SVG = "\"><svg onload=window.__pwned=1>";
  static final String JS = "javascript:window.__pwned=1";

  static final String WORKER = "mailer " + SVG;
  static final String REASON = "HTTP 500 " + SCRIPT + " " + IMG;
  // Keys and values, nested, so that no part of the payload's text escapes being text.
  static final Map<String, Object> PAYLOAD =
      Map.of("to", JS, IMG, SCRIPT, "nested", Map.of(SVG, List.of(IMG, JS)));
  // As claimq stores it (jsonb: shorter keys first) and the page re-indents it.
  static final String PAYLOAD_TEXT =
      """
      {
        "to": "javascript:window.__pwned=1",
        "nested": {
          "\\"><svg onload=window.__pwned=1>": [
            "<img src=x onerror=\\"window.__pwned=1\\">",
            "javascript:window.__pwned=1"
          ]
        },
        "<img src=x onerror=\\"window.__pwned=1\\">": "<script>window.__pwned=1</script>"
      }""";

  /**
   * What a screen would show had it made markup from data: an element with an inline handler, an
   * img or svg element (the console has none of its own), a script other than the console's one
   * module, a javascript: link.
   */
  private static final String MARKUP_FROM_DATA =
      """
      const made = new Set(document.querySelectorAll('img, svg'));
      for (const e of document.querySelectorAll('*')) {
        if (Array.from(e.attributes).some((a) => a.name.startsWith('on'))) made.add(e);
      }
      for (const s of document.scripts) {
        if (s.getAttribute('src') !== 'js/main.js' || s.type !== 'module') made.add(s);
      }
      // Each by its opening tag: what was made, and the handler it carries.
      const found = Array.from(made, (e) => e.outerHTML.slice(0, e.outerHTML.indexOf('>') + 1));
      for (const e of document.querySelectorAll('[href]')) {
        if (/^\\s*javascript:/i.test(e.getAttribute('href')) || e.protocol === 'javascript:') {
          found.push(`<${e.localName}> linking to ${e.getAttribute('href')}`);
        }
      }
      return found;""";

  @Test
  void a_failed_items_key_payload_worker_reason_and_resolution_are_text_on_every_screen() {
    String queue = uniqueQueue("hostile");
    // The queue in the key, so that a search finds this item only.
    String dedupeKey = queue + "/" + IMG + SVG;
    String id = enqueue(queue, dedupeKey, PAYLOAD, 1);
    fail(id, claim(id, WORKER, 60), REASON);
    Browser browser = unguarded();
    signIn(browser, Seed.OPERATOR);

    // Overview: the latest failures, reason first, then where and who.
    browser.visible(By.id("fail-" + id));
    noMarkup(browser, "overview");
    assertThat(textOf(browser, By.id("fail-" + id))).isEqualTo(REASON);
    assertThat(textOf(browser, By.xpath("//li[a[@id='fail-" + id + "']]/span[@class='meta']")))
        .startsWith(queue + " · item " + id + " · attempt 1 of 1 · last worker " + WORKER + " · ");

    // Failed items, filtered by a part of the reason that is a tag: it matches as text.
    browser.click(By.linkText("Failed items"));
    browser.type(By.id("failed-queue"), queue);
    browser.type(By.id("failed-reason"), SCRIPT);
    browser.click(By.id("apply-filters"));
    browser.text(By.id("failed-count"), "1 failed item shown.");
    browser.visible(By.id("row-" + id));
    noMarkup(browser, "failed list");
    String row = "//tr[td/a[@id='row-" + id + "']]";
    assertThat(textOf(browser, By.id("row-" + id))).isEqualTo(REASON);
    assertThat(textOf(browser, By.xpath(row + "/td[@data-label='Last worker']"))).isEqualTo(WORKER);
    assertThat(browser.visible(By.id("failed-reason")).getDomProperty("value")).isEqualTo(SCRIPT);

    // Bulk, from the failed list's link with the same filter: the dry run lists the item.
    browser.click(By.linkText("Retry or cancel everything that matches, in bulk"));
    assertThat(browser.visible(By.id("bulk-reason")).getDomProperty("value")).isEqualTo(SCRIPT);
    browser.click(By.id("preview"));
    browser.text(By.id("bulk-result-title"), "1 item will be retried");
    browser.visible(By.id("fail-" + id));
    noMarkup(browser, "bulk preview");
    assertThat(textOf(browser, By.id("fail-" + id))).isEqualTo(REASON);
    assertThat(Seed.state(id)).as("a dry run changes nothing").isEqualTo("failed");

    // The item: reason, key, worker, the attempt and the payload as stored.
    browser.open("/console/#/items/" + id);
    browser.text(By.id("state"), "failed");
    noMarkup(browser, "item");
    assertThat(textOf(browser, By.id("reason"))).isEqualTo(REASON);
    assertThat(textOf(browser, fact("Dedupe key"))).isEqualTo(dedupeKey);
    assertThat(textOf(browser, fact("Last worker"))).isEqualTo(WORKER);
    assertThat(textOf(browser, By.cssSelector("#attempts .attempt-head")))
        .isEqualTo("Attempt 1 by " + WORKER + ": failed");
    assertThat(textOf(browser, By.cssSelector("#attempts li.reason"))).isEqualTo(REASON);
    assertThat(textOf(browser, By.id("payload"))).isEqualTo(PAYLOAD_TEXT);

    // Search by the key; the text searched for is echoed in the results' caption.
    browser.click(By.linkText("Search"));
    browser.submit(By.id("search-q"), dedupeKey);
    browser.visible(By.id("found-" + id));
    noMarkup(browser, "search by dedupe key");
    assertThat(textOf(browser, By.cssSelector("#search-results caption")))
        .isEqualTo("1 found for “" + dedupeKey + "”, newest first");
    String found = "//tr[td/a[@id='found-" + id + "']]";
    assertThat(textOf(browser, By.xpath(found + "/td[@data-label='Dedupe key']")))
        .isEqualTo(dedupeKey);
    assertThat(textOf(browser, By.xpath(found + "/td[@data-label='Reason']"))).isEqualTo(REASON);
    browser.submit(By.id("search-q"), SVG + IMG);
    browser.text(By.id("search-results"), "Nothing found");
    noMarkup(browser, "search that finds nothing");
    assertThat(textOf(browser, By.cssSelector("#search-results p")))
        .isEqualTo("Nothing found for “" + SVG + IMG + "”.");

    // Resolved by an operator who types a hostile reference and note: both stay text.
    String reference = JS + ";/*resolve " + queue + "*/";
    String note = IMG + " " + SCRIPT;
    browser.open("/console/#/items/" + id);
    resolve(browser, reference, note);
    browser.text(By.id("state"), "done");
    browser.visible(By.id("action-log"));
    noMarkup(browser, "item, resolved");
    assertThat(textOf(browser, fact("External reference"))).isEqualTo(reference);
    assertThat(textOf(browser, By.cssSelector("#action-log q"))).isEqualTo(note);
    browser.click(By.linkText("Search"));
    browser.submit(By.id("search-q"), reference);
    browser.visible(By.id("found-" + id));
    noMarkup(browser, "search by the resolution's reference");
    assertThat(textOf(browser, By.cssSelector("#search-results caption")))
        .isEqualTo("1 found for “" + reference + "”, newest first");
  }

  @Test
  void the_references_of_a_late_success_and_of_the_complete_are_text_and_found_by_search()
      throws Exception {
    String queue = uniqueQueue("hostile-ref");
    String id = enqueue(queue, queue + "/" + SCRIPT, PAYLOAD, 3);
    String stale = claim(id, WORKER, 1);
    for (int i = 0; i < 60 && !Seed.state(id).equals("pending"); i++) {
      Thread.sleep(100); // the reaper ends the 1 s lease
    }
    String current = claim(id, WORKER, 60);
    // The first attempt reports its send late: the item says so while the second one runs.
    String late = JS + ";/*late " + queue + "*/" + SVG;
    Seed.complete(id, stale, late).then().statusCode(409);
    Browser browser = unguarded();
    signIn(browser, Seed.OPERATOR);

    browser.open("/console/#/items/" + id);
    browser.text(By.id("state"), "sending");
    browser.visible(By.id("already-sent"));
    noMarkup(browser, "item, sending, already sent");
    assertThat(textOf(browser, By.id("already-sent")))
        .isEqualTo(
            "Already sent: attempt 1's late complete reported "
                + late
                + "; the current worker should complete, not send.");
    assertThat(textOf(browser, By.cssSelector("#attempts li.warning")))
        .startsWith("late success: reported " + late + " ");

    String reference = JS + ";/*complete " + queue + "*/" + IMG;
    Seed.complete(id, current, reference).then().statusCode(200);
    browser.click(By.linkText("Search"));
    browser.submit(By.id("search-q"), reference);
    browser.visible(By.id("found-" + id));
    noMarkup(browser, "search by externalRef");
    assertThat(textOf(browser, By.cssSelector("#search-results caption")))
        .isEqualTo("1 found for “" + reference + "”, newest first");

    browser.click(By.id("found-" + id));
    browser.text(By.id("state"), "done");
    noMarkup(browser, "item, done");
    assertThat(textOf(browser, fact("External reference"))).isEqualTo(reference);
    assertThat(textOf(browser, By.cssSelector("#attempts li.warning")))
        .startsWith("late success: reported " + late + " ");
  }

  @Test
  void a_held_items_key_and_its_rejection_are_text_in_the_held_list_bulk_and_item() {
    String queue = Seed.gated("hostile");
    String dedupeKey = queue + "/" + SVG + SCRIPT;
    String id = enqueue(queue, dedupeKey, PAYLOAD, 3);
    assertThat(Seed.state(id)).isEqualTo("held");
    Browser browser = unguarded();
    signIn(browser, Seed.OPERATOR);

    browser.open("/console/#/held?queue=" + queue);
    browser.text(By.id("held-count"), "1 held item shown.");
    browser.visible(By.id("held-" + id));
    noMarkup(browser, "held list");
    String row = "//tr[td/a[@id='held-" + id + "']]";
    assertThat(textOf(browser, By.xpath(row + "/td[@data-label='Dedupe key']")))
        .isEqualTo(dedupeKey);

    // A held item has no reason yet: the bulk preview names it by its key.
    browser.open("/console/#/bulk?action=approve&queue=" + queue);
    browser.click(By.id("preview"));
    browser.text(By.id("bulk-result-title"), "1 item will be approved");
    browser.visible(By.id("fail-" + id));
    noMarkup(browser, "bulk approval preview");
    assertThat(textOf(browser, By.id("fail-" + id)))
        .isEqualTo("proposed by dev-agent: " + dedupeKey);

    browser.open("/console/#/items/" + id);
    browser.text(By.id("state"), "held");
    noMarkup(browser, "item, held");
    assertThat(textOf(browser, fact("Dedupe key"))).isEqualTo(dedupeKey);
    assertThat(textOf(browser, By.id("payload"))).isEqualTo(PAYLOAD_TEXT);

    // The rejection's reason becomes the item's last error, which its proposer reads.
    String rejection = SVG + " " + IMG;
    browser.type(By.id("reject-reason"), rejection);
    browser.click(By.id("reject"));
    browser.text(By.id("state"), "cancelled");
    browser.visible(By.id("action-log"));
    noMarkup(browser, "item, rejected");
    assertThat(textOf(browser, By.id("reason"))).isEqualTo(rejection);
    assertThat(textOf(browser, By.cssSelector("#action-log q"))).isEqualTo(rejection);
  }

  @Test
  void hostile_text_in_the_address_is_shown_as_text_by_the_screens_that_echo_it() {
    Browser browser = unguarded();
    signIn(browser, Seed.OPERATOR);
    browser.visible(By.id("latest-title"));

    // A link can carry anything: screens that show part of their address show it as text.
    browser.open("/console/#/items/" + encoded(IMG));
    browser.visible(By.cssSelector("main .problem"));
    noMarkup(browser, "item from the address");
    assertThat(textOf(browser, By.cssSelector("main h1"))).isEqualTo("Item " + IMG);
    assertThat(textOf(browser, By.cssSelector("main .problem")))
        .startsWith("Item " + IMG + " could not be read: ");

    // Queue names are a-z0-9._- in the API, so the address is where a hostile one can come from.
    browser.open("/console/#/queues/" + encoded(SVG));
    browser.visible(By.cssSelector("main .problem"));
    noMarkup(browser, "queue from the address");
    assertThat(textOf(browser, By.cssSelector("main h1"))).isEqualTo("Queue " + SVG);
    assertThat(textOf(browser, By.cssSelector("main .problem")))
        .startsWith("The policy of " + SVG + " could not be read: ");

    browser.open("/console/#/failed?queue=" + encoded(SVG) + "&reason=" + encoded(IMG));
    browser.visible(By.cssSelector("main .problem"));
    noMarkup(browser, "failed list filtered from the address");
    assertThat(browser.visible(By.id("failed-queue")).getDomProperty("value")).isEqualTo(SVG);
    assertThat(browser.visible(By.id("failed-reason")).getDomProperty("value")).isEqualTo(IMG);

    browser.open("/console/#/held?queue=" + encoded(JS));
    browser.visible(By.cssSelector("main .problem"));
    noMarkup(browser, "held list filtered from the address");
    assertThat(browser.visible(By.id("held-queue")).getDomProperty("value")).isEqualTo(JS);

    browser.open("/console/#/bulk?queue=" + encoded(JS) + "&reason=" + encoded(SCRIPT));
    browser.click(By.id("preview"));
    browser.visible(By.cssSelector("#bulk-result .problem"));
    noMarkup(browser, "bulk preview filtered from the address");
    assertThat(browser.visible(By.id("bulk-queue")).getDomProperty("value")).isEqualTo(JS);
    assertThat(browser.visible(By.id("bulk-reason")).getDomProperty("value")).isEqualTo(SCRIPT);
  }

  /**
   * A browser whose pages ignore the Content-Security-Policy: the policy alone would stop an inline
   * handler, so with it window.__pwned could never prove anything. Without it, what is tested is
   * the console's own code; the policy is tested in ConsoleSecurityHeadersTest.
   */
  private Browser unguarded() {
    Browser browser = browser();
    ((HasCdp) browser.driver()).executeCdpCommand("Page.setBypassCSP", Map.of("enabled", true));
    return browser;
  }

  /** The screen holds no element, handler, script or link made from data, and no script ran. */
  private static void noMarkup(Browser browser, String screen) {
    assertThat((List<?>) browser.script(MARKUP_FROM_DATA))
        .as("%s: elements made from data", screen)
        .isEmpty();
    assertThat(browser.script("return typeof window.__pwned"))
        .as("%s: window.__pwned (set only by script from data)", screen)
        .isEqualTo("undefined");
  }

  /** The element's text exactly as the page holds it (textContent: nothing trimmed). */
  private static String textOf(Browser browser, By by) {
    // The overview redraws itself: an element found just before may be gone, so look again.
    return browser.until(d -> Optional.ofNullable(d.findElement(by).getDomProperty("textContent")));
  }

  /** The value of one of the item screen's facts, by its term. */
  private static By fact(String term) {
    return By.xpath("//dt[.='" + term + "']/following-sibling::dd");
  }

  /** As a screen's address carries it, every character outside a-z0-9 percent-encoded. */
  private static String encoded(String text) {
    return URLEncoder.encode(text, StandardCharsets.UTF_8).replace("+", "%20");
  }

  /** Enqueued as JSON built from values, so that quotes in them are data, not syntax. */
  private static String enqueue(String queue, String dedupeKey, Object payload, int maxAttempts) {
    return Seed.as(Seed.AGENT)
        .contentType(ContentType.JSON)
        .body(Map.of("dedupeKey", dedupeKey, "payload", payload, "maxAttempts", maxAttempts))
        .post("/v1/queues/{queue}/items", queue)
        .then()
        .statusCode(201)
        .extract()
        .path("id");
  }

  private static String claim(String id, String worker, int leaseSeconds) {
    return Seed.as(Seed.WORKER)
        .contentType(ContentType.JSON)
        .body(Map.of("worker", worker, "leaseSeconds", leaseSeconds))
        .post("/v1/items/{id}/claim", id)
        .then()
        .statusCode(200)
        .extract()
        .path("claimToken");
  }

  private static void fail(String id, String token, String reason) {
    Seed.as(Seed.WORKER)
        .contentType(ContentType.JSON)
        .body(Map.of("claimToken", token, "error", reason, "retryable", false))
        .post("/v1/items/{id}/fail", id)
        .then()
        .statusCode(200);
  }
}
