package dev.claimq.console;

import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;

/** When an item comes due is said forward ("in 2 h"), and only where it still means something. */
@QuarkusTest
class ConsoleDueTest extends ConsoleTest {

  @Test
  void a_pending_item_due_later_says_in_how_long_and_a_failed_one_says_no_due_time() {
    String queue = uniqueQueue("due");
    String later =
        Seed.as(Seed.AGENT)
            .contentType(ContentType.JSON)
            .body(
                Map.of(
                    "dedupeKey",
                    "due/1",
                    "payload",
                    Map.of("to", "ada@example.com"),
                    "runAt",
                    Instant.now()
                        .plusSeconds(2 * 3600 + 300)
                        .truncatedTo(ChronoUnit.SECONDS)
                        .toString()))
            .post("/v1/queues/{queue}/items", queue)
            .then()
            .statusCode(201)
            .extract()
            .path("id");
    String failed = Seed.failed(queue, "due/2", "mailer-1", "mailbox full");
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);

    browser.open("/console/#/items/" + later);
    browser.text(By.id("state"), "pending");
    assertThat(browser.visible(fact("Due")).getText()).isEqualTo("in 2 h");

    browser.open("/console/#/items/" + failed);
    browser.text(By.id("state"), "failed");
    assertThat(browser.driver().findElements(fact("Due"))).as("a failed item's due time").isEmpty();
  }

  private static By fact(String term) {
    return By.xpath("//dt[.='" + term + "']/following-sibling::dd");
  }
}
