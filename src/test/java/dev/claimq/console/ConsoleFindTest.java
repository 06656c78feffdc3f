package dev.claimq.console;

import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;

/** Finding items: the failed list's filters and pages, and search by any of an item's keys. */
@QuarkusTest
class ConsoleFindTest extends ConsoleTest {

  @Test
  void the_failed_list_pages_through_every_match_fifty_at_a_time() {
    String queue = uniqueQueue("many");
    List<String> ids =
        IntStream.range(0, 53)
            .mapToObj(i -> Seed.failed(queue, "m/" + i, "mailer-" + i, "rate limited #" + i))
            .toList();
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    browser.open("/console/#/failed?queue=" + queue);

    browser.text(By.id("failed-count"), "50 failed items shown, more to load");
    browser.visible(By.id("row-" + ids.get(52)));
    assertThat(browser.driver().findElements(By.id("row-" + ids.get(0)))).isEmpty();
    browser.click(By.id("load-more"));
    browser.text(By.id("failed-count"), "53 failed items shown.");
    String oldest = browser.visible(By.id("row-" + ids.get(0))).getText();
    assertThat(oldest).isEqualTo("rate limited #0");
    assertThat(browser.driver().findElements(By.id("load-more"))).isEmpty();
    // Each row: reason first, then queue, attempts, last worker, age.
    String row = browser.visible(By.xpath("//tr[td/a[@id='row-" + ids.get(0) + "']]")).getText();
    assertThat(row).startsWith("rate limited #0").contains(queue, "1 of 1", "mailer-0", "ago");
  }

  @Test
  void the_failed_list_filters_by_queue_reason_and_time() {
    String queue = uniqueQueue("filters");
    String timeout = Seed.failed(queue, "f/1", "mailer-1", "Connection TIMEOUT after 30 s");
    String refused = Seed.failed(queue, "f/2", "mailer-1", "connection refused");
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    browser.click(By.linkText("Failed items"));

    browser.type(By.id("failed-queue"), queue);
    browser.type(By.id("failed-reason"), "timeout");
    browser.click(By.id("apply-filters"));
    browser.text(By.id("failed-count"), "1 failed item shown.");
    browser.visible(By.id("row-" + timeout));
    assertThat(browser.driver().findElements(By.id("row-" + refused))).isEmpty();

    // A time window that ends before both items: none of them.
    String before =
        Instant.now().minus(1, ChronoUnit.HOURS).truncatedTo(ChronoUnit.SECONDS).toString();
    browser.open("/console/#/failed?queue=" + queue + "&updatedBefore=" + before);
    browser.text(By.id("failed-count"), "No failed item matches.");
    assertThat(browser.visible(By.id("failed-updatedBefore")).getAttribute("value")).isNotEmpty();
    String after =
        Instant.now().minus(1, ChronoUnit.HOURS).truncatedTo(ChronoUnit.SECONDS).toString();
    browser.open("/console/#/failed?queue=" + queue + "&updatedAfter=" + after);
    browser.text(By.id("failed-count"), "2 failed items shown.");
  }

  @Test
  void search_finds_an_item_by_its_dedupe_key_or_its_external_reference() {
    String queue = uniqueQueue("search");
    String id = Seed.failed(queue, "order/" + queue, "mailer-1", "declined");
    Seed.as(Seed.OPERATOR)
        .contentType(ContentType.JSON)
        .body(Map.of("externalRef", "ref-" + queue, "note", "provider confirms"))
        .post("/v1/items/{id}/resolve", id)
        .then()
        .statusCode(200);
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    browser.click(By.linkText("Search"));

    browser.submit(By.id("search-q"), "order/" + queue);
    browser.text(By.id("search-results"), "1 found");
    browser.visible(By.id("found-" + id));
    browser.submit(By.id("search-q"), "ref-" + queue);
    browser.text(By.id("found-" + id), "Item " + id);
    assertThat(browser.driver().getCurrentUrl()).doesNotContain(queue);

    browser.click(By.id("found-" + id));
    browser.text(By.id("state"), "done");
    browser.text(By.id("action-log"), "resolve by dev-operator");
    browser.text(By.id("action-log"), "provider confirms");
  }
}
