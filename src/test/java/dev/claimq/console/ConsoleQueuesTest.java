package dev.claimq.console;

import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;

/** An operator pauses and resumes a queue's claims and changes its policy from the console. */
@QuarkusTest
class ConsoleQueuesTest extends ConsoleTest {

  @Test
  void pause_and_resume_a_queue() {
    String queue = uniqueQueue("pause");
    Seed.enqueue(queue, "p/1", "{}", 3);
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    showQueue(browser, queue);
    browser.click(By.id("q-" + queue));
    browser.text(By.id("claims-state"), "Running");

    browser.click(By.id("pause"));
    browser.text(By.id("claims-state"), "Paused");
    assertThat(policy(queue).getBoolean("paused")).isTrue();
    // Claims answer 204 while paused: the API, not the page, says it is paused.
    Seed.as(Seed.WORKER)
        .contentType("application/json")
        .body("{}")
        .post("/v1/queues/{queue}/claim", queue)
        .then()
        .statusCode(204);

    browser.click(By.id("resume"));
    browser.text(By.id("claims-state"), "Running");
    assertThat(policy(queue).getBoolean("paused")).isFalse();
    browser.text(By.id("queue-log"), "resume by dev-operator");
    assertThat(browser.visible(By.id("queue-log")).getText()).contains("pause by dev-operator");
  }

  @Test
  void edit_a_policy_and_see_a_refused_value_named_not_rewritten() {
    String queue = uniqueQueue("policy");
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    browser.open("/console/#/queues/" + queue);

    browser.type(By.id("policy-maxAttempts"), "7");
    browser.type(By.id("policy-providerKeyTtl"), "PT24H");
    browser.click(By.id("save-policy"));
    browser.text(By.id("messages"), "saved");
    JsonPath saved = policy(queue);
    assertThat(saved.getInt("maxAttempts")).isEqualTo(7);
    assertThat(saved.getString("providerKeyTtl")).isEqualTo("PT24H");
    assertThat(saved.getInt("effective.maxAttempts")).isEqualTo(7);
    browser.text(By.id("policy-maxAttempts-hint"), "In effect: 7");

    // Typed wrong: sent as typed, and refused by the API; the page does not guess a number.
    browser.type(By.id("policy-leaseSeconds"), "sixty");
    browser.click(By.id("save-policy"));
    browser.text(By.id("messages"), "Policy refused (400): The value of 'leaseSeconds'");
    assertThat(policy(queue).getString("leaseSeconds")).isNull();

    // Out of range: the API names the field, and the page says it there and moves focus to it.
    browser.type(By.id("policy-leaseSeconds"), "");
    browser.type(By.id("policy-maxAttempts"), "0");
    browser.click(By.id("save-policy"));
    browser.text(By.id("messages"), "Policy refused (400)");
    assertThat(browser.visible(By.id("policy-maxAttempts-problem")).getText()).isNotBlank();
    assertThat(browser.focused().getAttribute("id")).isEqualTo("policy-maxAttempts");
    assertThat(policy(queue).getInt("maxAttempts")).isEqualTo(7);
  }

  @Test
  void a_number_is_sent_digit_for_digit_and_its_refusal_says_why_beside_the_field() {
    String queue = uniqueQueue("typed");
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    browser.open("/console/#/queues/" + queue);
    browser.visible(By.id("save-policy"));

    // 007 is not saved as 7: it is sent as typed, and JSON has no number 007.
    browser.type(By.id("policy-maxAttempts"), "007");
    browser.click(By.id("save-policy"));
    browser.text(By.id("messages"), "Policy refused (400): The body is not valid JSON");
    assertThat(browser.visible(By.id("messages")).getText())
        .contains("That is maxAttempts, sent as typed, 007: a JSON number does not start with 0");
    assertThat(browser.visible(By.id("policy-maxAttempts-problem")).getText())
        .contains("does not start with 0")
        .contains("(sent as typed: 007)");
    assertThat(browser.focused().getAttribute("id")).isEqualTo("policy-maxAttempts");
    assertThat(browser.visible(By.id("policy-maxAttempts")).getAttribute("value")).isEqualTo("007");
    assertThat(policy(queue).getString("maxAttempts")).isNull();

    // More digits than a double holds: sent as those digits, not as 1.2345678901234568e+22, so
    // the refusal is about what was typed: past the field's range, not a number of another type.
    browser.type(By.id("policy-maxAttempts"), "12345678901234567890123");
    browser.click(By.id("save-policy"));
    browser.text(By.id("messages"), "Policy refused (400): The value of 'maxAttempts'");
    assertThat(browser.visible(By.id("messages")).getText())
        .contains("must be a whole number from 1 to 100")
        .doesNotContain("e+22");
    assertThat(browser.visible(By.id("policy-maxAttempts-problem")).getText())
        .contains("(sent as typed: 12345678901234567890123)");
    assertThat(policy(queue).getString("maxAttempts")).isNull();

    // Digits typed right are saved as they are.
    browser.type(By.id("policy-maxAttempts"), "12");
    browser.click(By.id("save-policy"));
    browser.text(By.id("messages"), "Policy of " + queue + " saved.");
    assertThat(policy(queue).getInt("maxAttempts")).isEqualTo(12);
  }

  @Test
  void a_save_from_a_page_read_before_another_change_is_refused_and_shows_that_change() {
    String queue = uniqueQueue("stale");
    Browser browser = browser();
    signIn(browser, Seed.OPERATOR);
    browser.open("/console/#/queues/" + queue);
    browser.text(By.id("claims-state"), "Running");

    // Another operator changes the policy after this page read it.
    Seed.as(Seed.OPERATOR)
        .contentType("application/json")
        .body("{\"maxAttempts\": 9}")
        .put("/v1/queues/{queue}/policy", queue)
        .then()
        .statusCode(200);

    browser.type(By.id("policy-leaseSeconds"), "30");
    browser.click(By.id("save-policy"));
    browser.text(
        By.id("messages"), "Not saved: the policy of " + queue + " was changed by dev-operator at");
    assertThat(browser.visible(By.id("messages")).getText())
        .contains("Your settings were {\"leaseSeconds\":30}");
    JsonPath kept = policy(queue);
    assertThat(kept.getInt("maxAttempts")).isEqualTo(9);
    assertThat(kept.getString("leaseSeconds")).isNull();
    // The form now shows the other change, and a save from it is made.
    browser.text(By.id("policy-maxAttempts-hint"), "In effect: 9");
    browser.type(By.id("policy-leaseSeconds"), "30");
    browser.click(By.id("save-policy"));
    browser.text(By.id("messages"), "Policy of " + queue + " saved.");
    JsonPath saved = policy(queue);
    assertThat(saved.getInt("maxAttempts")).isEqualTo(9);
    assertThat(saved.getInt("leaseSeconds")).isEqualTo(30);
  }

  private static JsonPath policy(String queue) {
    return Seed.as(Seed.OPERATOR)
        .get("/v1/queues/{queue}/policy", queue)
        .then()
        .statusCode(200)
        .extract()
        .jsonPath();
  }
}
