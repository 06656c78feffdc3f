package dev.claimq.console;

import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;

/** A form the API refuses keeps what the operator typed, and names the field that was wrong. */
@QuarkusTest
class ConsoleRefusedFormTest extends ConsoleTest {

  @Test
  void a_resolve_refused_for_a_too_long_reference_keeps_the_form_and_marks_the_field() {
    String id = Seed.failed(uniqueQueue("refused"), "r/1", "mailer-1", "outcome unknown");
    String reference = "msg_" + "x".repeat(596);
    String note = "Provider confirms delivery.";
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    browser.open("/console/#/items/" + id);
    resolve(browser, reference, note);

    browser.text(By.id("messages"), "Resolve refused (400)");
    WebElement field = browser.visible(By.id("resolve-ref"));
    assertThat(field.getDomProperty("value")).isEqualTo(reference);
    assertThat(browser.visible(By.id("resolve-note")).getDomProperty("value")).isEqualTo(note);
    assertThat(browser.visible(By.cssSelector("details.resolve")).getDomProperty("open"))
        .isEqualTo("true");
    assertThat(field.getDomAttribute("aria-invalid")).isEqualTo("true");
    // Focused, the field is read with why it was refused.
    assertThat(field.getDomAttribute("aria-describedby")).contains("resolve-ref-problem");
    assertThat(browser.visible(By.id("resolve-ref-problem")).getText()).contains("500");
    assertThat(browser.focused().getDomAttribute("id")).isEqualTo("resolve-ref");
    assertThat(Seed.state(id)).isEqualTo("failed");

    // Corrected, it is sent again from the same form, and the mark goes with the refusal.
    browser.type(By.id("resolve-ref"), "msg_0193");
    browser.click(By.id("resolve"));
    browser.text(By.id("state"), "done");
    assertThat(Seed.state(id)).isEqualTo("done");
  }
}
