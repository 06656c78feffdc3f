package dev.claimq.console;

import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;

/** The first screen: each queue's live counts and last minute, kept fresh without a click. */
@QuarkusTest
class ConsoleOverviewTest extends ConsoleTest {

  @Test
  void a_queue_row_shows_its_counts_throughput_and_pause_and_refreshes_by_itself() {
    String queue = uniqueQueue("overview");
    Seed.failed(queue, "o/failed", "mailer-1", "bounced");
    String done = Seed.enqueue(queue, "o/done", "{}", 3);
    Seed.complete(done, Seed.claim(done, 60), "msg_1").then().statusCode(200);
    Seed.enqueue(queue, "o/pending", "{}", 3);
    Seed.as(Seed.OPERATOR).post("/v1/queues/{queue}/pause", queue).then().statusCode(200);

    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    showQueue(browser, queue);
    By row = By.xpath("//tr[td/a[@id='q-" + queue + "']]");
    browser.text(row, "paused");
    assertThat(cells(browser, row))
        .isEqualTo(new String[] {queue, "0", "1", "0", "1 failed", "", "1", "1", "paused"});

    // Nobody clicks: within the refresh interval the new pending item is counted.
    int before = browser.interactions();
    Seed.enqueue(queue, "o/pending-2", "{}", 3);
    browser.until(d -> java.util.Optional.of(cells(browser, row)).filter(c -> c[2].equals("2")));
    assertThat(browser.interactions()).isEqualTo(before);

    browser.click(By.id("qf-" + queue));
    browser.text(By.id("failed-count"), "1 failed item shown.");
  }

  @Test
  void past_a_page_of_queues_more_are_shown_when_asked_and_the_summary_counts_them_all() {
    // 101 queues of this test: with whatever others left, the listing is more than a page.
    String prefix = uniqueQueue("many");
    for (int i = 0; i < 101; i++) {
      Seed.enqueue(prefix + "-" + i, "m/1", "{}", 3);
    }
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    By rows = By.cssSelector("section[aria-labelledby='queues-title'] tbody tr");
    browser.text(By.cssSelector("section[aria-labelledby='queues-title']"), "100 of ");
    assertThat(browser.driver().findElements(rows)).hasSize(100);
    String summary = browser.visible(By.cssSelector(".summary")).getText();
    assertThat(Integer.parseInt(summary.substring(0, summary.indexOf(' '))))
        .isGreaterThanOrEqualTo(101);

    browser.click(By.id("more-queues"));
    browser.until(d -> java.util.Optional.of(d.findElements(rows).size()).filter(n -> n > 100));
    assertThat(browser.driver().findElements(rows).size()).isBetween(101, 200);

    // The queues screen pages too, 50 at a time.
    browser.open("/console/#/queues");
    browser.text(By.id("queues-count"), "50 queues shown, more to load.");
    browser.click(By.id("more-queue-pages"));
    browser.text(By.id("queues-count"), "100 queues shown");
  }

  /** A row's cells, with the oldest-due age blanked (it depends on the clock). */
  private static String[] cells(Browser browser, By row) {
    String[] cells =
        browser.visible(row).findElements(By.tagName("td")).stream()
            .map(td -> td.getText())
            .toArray(String[]::new);
    cells[5] = "";
    return cells;
  }
}
