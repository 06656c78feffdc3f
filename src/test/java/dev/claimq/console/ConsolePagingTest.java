package dev.claimq.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.junit.QuarkusTest;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.interactions.Actions;

/** Paging on: the next page is asked for once, however the button is pressed. */
@QuarkusTest
class ConsolePagingTest extends ConsoleTest {

  @Test
  void a_double_click_on_load_more_adds_the_next_page_once() throws InterruptedException {
    String queue = Seed.gated("paging");
    for (int i = 0; i < 51; i++) {
      Seed.enqueue(queue, "p/" + i, "{\"n\": " + i + "}", 3);
    }
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    browser.visible(By.id("nav"));
    browser.open("/console/#/held?queue=" + queue);
    browser.text(By.id("held-count"), "50 held items shown, more to load.");

    new Actions(browser.driver()).doubleClick(browser.visible(By.id("held-more"))).perform();
    browser.text(By.id("held-count"), "51 held items shown.");
    Thread.sleep(1_000); // time for a second page, had one been asked for

    @SuppressWarnings("unchecked")
    List<String> rows =
        (List<String>)
            browser.script(
                "return [...document.querySelectorAll('#main tbody a[id^=held-]')].map((a) => a.id)");
    assertThat(rows).hasSize(51).doesNotHaveDuplicates();
    assertThat(browser.visible(By.id("held-count")).getText()).isEqualTo("51 held items shown.");
    // The button went with the last page: the focus went to the first row it added, not to the
    // top of the page, where the next Tab would start again.
    assertThat(browser.focused().getDomAttribute("id")).isEqualTo(rows.get(50));
  }
}
