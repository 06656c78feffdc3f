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
