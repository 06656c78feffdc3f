package dev.claimq.queue;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class FailureReasonTest {

  /** Each reason carries one secret; none may survive sanitizing. */
  private static final Map<String, String> SECRETS =
      Map.ofEntries(
          Map.entry("password in a pair", "login failed: user=ada password=hunter2!"),
          Map.entry("passwd in JSON", "{\"user\": \"ada\", \"passwd\": \"hunter2!\"}"),
          Map.entry("secret pair", "client_secret=hunter2! rejected"),
          Map.entry("token pair", "refresh token=hunter2! expired"),
          Map.entry("api key pair", "api_key: hunter2! is not valid"),
          Map.entry("apikey header", "X-ApiKey=hunter2!"),
          Map.entry("bearer token", "401 for Bearer hunter2!hunter2!"),
          Map.entry("authorization header", "Authorization: Basic aHVudGVyMiE6aHVudGVyMiE="),
          Map.entry(
              "authorization header quoted", "{\"Authorization\": \"Token hunter2!hunter2!\"}"),
          Map.entry(
              "credentials in a URL",
              "connect to smtp://mailer:hunter2!@smtp.example.com:587 failed"),
          Map.entry(
              "JWT",
              "rejected eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZGEifQ.hunter2hunter2hunter2hunter2hunter"),
          Map.entry("AWS access key", "InvalidAccessKeyId: AKIAHUNTER2HUNTER2AB does not exist"),
          Map.entry("Stripe live key", "Invalid API Key provided: sk_live_hunter2hunter2hunter2"),
          Map.entry("GitHub token", "Bad credentials for ghp_hunter2hunter2hunter2hunter2hunt"),
          Map.entry(
              "private key block",
              "bad key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEhunter2hunter2\n-----END RSA PRIVATE KEY-----\nend"));

  @Test
  void every_secret_in_the_corpus_is_redacted() {
    SECRETS.forEach(
        (kind, reason) -> {
          String sanitized = FailureReason.sanitize(reason);
          assertThat(sanitized).as(kind).doesNotContain("hunter2").contains("[REDACTED]");
        });
  }

  @Test
  void the_context_around_a_secret_is_kept() {
    assertThat(FailureReason.sanitize("SMTP 535 for user=ada password=hunter2 at 10:00"))
        .isEqualTo("SMTP 535 for user=ada password=[REDACTED] at 10:00");
    assertThat(FailureReason.sanitize("GET https://ada:hunter2@api.example.com/v1 timed out"))
        .isEqualTo("GET https://[REDACTED]@api.example.com/v1 timed out");
  }

  @Test
  void an_ordinary_reason_is_unchanged() {
    String reason = "SMTP 451 4.7.1: try again later (queue full)\n\tat attempt 3";
    assertThat(FailureReason.sanitize(reason)).isEqualTo(reason);
  }

  @Test
  void control_characters_are_dropped_but_newlines_and_tabs_kept() {
    assertThat(FailureReason.sanitize("a\u0000b\u0007c\u001b[31md\r\ne\tf"))
        .isEqualTo("abc[31md\ne\tf");
  }

  @Test
  void long_reasons_are_cut_to_the_limit_without_splitting_a_character() {
    String emoji = "\uD83D\uDCE7"; // one character, two chars in UTF-16
    String reason = "x".repeat(FailureReason.MAX_LENGTH - 2) + emoji + "y".repeat(100);
    String sanitized = FailureReason.sanitize(reason);
    assertThat(sanitized.length()).isLessThanOrEqualTo(FailureReason.MAX_LENGTH);
    assertThat(sanitized).endsWith("…");
    assertThat(Character.isHighSurrogate(sanitized.charAt(sanitized.length() - 2))).isFalse();
    assertThat(FailureReason.sanitize("x".repeat(FailureReason.MAX_LENGTH)))
        .hasSize(FailureReason.MAX_LENGTH);
  }
}
