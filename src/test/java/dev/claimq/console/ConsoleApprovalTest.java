package dev.claimq.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.junit.QuarkusTest;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;

/** Work held for approval: found from the overview, approved or rejected, one by one or many. */
@QuarkusTest
class ConsoleApprovalTest extends ConsoleTest {

  @Test
  void an_operator_finds_a_held_item_from_the_overview_and_approves_it() {
    String queue = Seed.gated("approve");
    String id = Seed.enqueue(queue, "proposal/1", "{\"to\": \"ada@example.com\"}", 3);
    assertThat(Seed.state(id)).isEqualTo("held");
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);

    showQueue(browser, queue);
    browser.text(By.id("qh-" + queue), "1 held");
    browser.click(By.id("qh-" + queue));
    browser.text(By.id("held-" + id), "Item " + id);
    browser.click(By.id("held-" + id));
    browser.text(By.id("state"), "held");
    browser.text(By.cssSelector(".facts"), "Proposed by");
    browser.click(By.id("approve"));

    browser.text(By.id("state"), "pending");
    browser.text(By.id("messages"), "approved");
    browser.text(By.id("action-log"), "approve by dev-operator");
    assertThat(Seed.state(id)).isEqualTo("pending");
  }

  @Test
  void a_rejection_asks_for_a_reason_and_shows_it_as_the_items_last_error() {
    String id = Seed.enqueue(Seed.gated("reject"), "proposal/2", "{\"n\": 1}", 3);
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    browser.open("/console/#/items/" + id);

    browser.type(By.id("reject-reason"), "Unsubscribed customer");
    browser.click(By.id("reject"));

    browser.text(By.id("state"), "cancelled");
    browser.text(By.id("reason"), "Unsubscribed customer");
    assertThat(Seed.state(id)).isEqualTo("cancelled");

    browser.click(By.id("retry"));
    browser.text(By.id("state"), "held");
    browser.text(By.id("messages"), "held again: it waits for an operator's approval");
    assertThat(Seed.state(id)).isEqualTo("held");
  }

  @Test
  void a_bulk_approval_previews_the_held_items_then_approves_exactly_those() {
    String queue = Seed.gated("bulk");
    List<String> ids =
        IntStream.range(0, 3)
            .mapToObj(i -> Seed.enqueue(queue, "p/" + i, "{\"n\": " + i + "}", 3))
            .toList();
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    browser.open("/console/#/bulk?action=approve&queue=" + queue);

    browser.click(By.id("preview"));
    browser.text(By.id("bulk-result-title"), "3 items will be approved");
    for (String id : ids) {
      assertThat(Seed.state(id)).as("a dry run changes nothing").isEqualTo("held");
    }
    browser.click(By.id("confirm"));
    browser.text(By.id("bulk-result-title"), "3 items approved");
    for (String id : ids) {
      assertThat(Seed.state(id)).isEqualTo("pending");
    }
  }

  @Test
  void a_read_only_key_sees_held_items_and_no_approval() {
    String id = Seed.enqueue(Seed.gated("readonly"), "p/1", "{\"n\": 1}", 3);
    Browser browser = browser();
    signIn(browser, Seed.WORKER);
    browser.click(By.linkText("Held"));
    browser.click(By.id("held-" + id));
    browser.text(By.id("state"), "held");
    assertThat(browser.driver().findElement(By.id("approve")).isDisplayed()).isFalse();
    assertThat(browser.driver().findElement(By.id("reject")).isDisplayed()).isFalse();
  }
}
