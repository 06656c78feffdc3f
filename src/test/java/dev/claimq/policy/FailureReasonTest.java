package dev.claimq.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.SoftAssertions.assertSoftly;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import java.util.List;
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
              "bad key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEhunter2hunter2\n-----END RSA PRIVATE KEY-----\nend"),
          // Quoted values go whole: delimiters, spaces and escaped quotes inside them included.
          Map.entry("JSON, delimiter inside", "{\"password\": \"Tr0ub4dor&3xyz hunter2\"}"),
          Map.entry("JSON, multi-word", "{\"password\": \"correct hunter2 battery staple\"}"),
          Map.entry("JSON, escaped quote", "{\"password\": \"a\\\"b hunter2\"}"),
          Map.entry("JSON, compact", "{\"client_secret\":\"x,hunter2\"}"),
          Map.entry(
              "JSON, pretty-printed", "{\n  \"password\": \"a; hunter2\",\n  \"user\": \"ada\"\n}"),
          Map.entry("single-quoted dict", "{'password': 'Tr0ub4dor hunter2'}"),
          Map.entry("single-quoted, escaped quote", "{'token': 'it\\'s hunter2'}"),
          Map.entry("YAML, double-quoted", "password: \"correct hunter2\""),
          Map.entry("YAML, single-quoted", "password: 'correct hunter2'"),
          Map.entry("YAML, unquoted", "password: hunter2-hunter2"),
          Map.entry("pair, double-quoted", "login failed: password=\"correct hunter2\""),
          Map.entry("pair, single-quoted", "token='x hunter2' expired"),
          Map.entry("pair, escaped quote", "api_key=\"a\\\"b hunter2\" rejected"),
          Map.entry("header, unquoted", "X-Api-Key: hunter2hunter2"),
          Map.entry("header, quoted", "{\"X-Api-Key\": \"abc hunter2\"}"),
          Map.entry(
              "authorization header quoted, multi-word",
              "{\"Authorization\": \"Bearer abc hunter2\"}"),
          Map.entry("authorization header single-quoted", "{'Authorization': 'Token a&hunter2'}"),
          Map.entry(
              "authorization header, escaped quotes",
              "Authorization=\"Digest username=\\\"ada\\\", response=\\\"hunter2\\\"\""),
          Map.entry("quoted value cut short", "{\"password\": \"correct horse hunter2"),
          Map.entry(
              "authorization header, Digest",
              "AUTHORIZATION=Digest username=\"ada\", nonce=\"n\", response=\"hunter2\" rejected"),
          Map.entry("Digest without a header", "sent Digest realm=x, response=hunter2"),
          Map.entry("bearer with a colon", "401 for Bearer: hunter2hunter2"),
          Map.entry("bearer with a no-break space", "401 for Bearer\u00a0hunter2hunter2"),
          Map.entry("Stripe webhook secret", "signature check with whsec_hunter2hunter2 failed"),
          Map.entry(
              "SendGrid key",
              "403 for SG.hunter2hunter2hunter2.hunter2hunter2hunter2 (permissions)"),
          Map.entry(
              "Google API key",
              "GET /geocode/json?address=x&key=AIzahunter2hunter2hunter2hunter2hunter2"),
          Map.entry("Mailgun key", "401 for api:key-hunter2hunter2hunter2hunter2abcd"),
          Map.entry(
              "Azure connection string",
              "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=hunter2hunter2==;"),
          Map.entry("Azure SAS", "GET /c/b?sv=2022&sp=r&sig=hunter2hunter2%3D 403"),
          Map.entry("a signature parameter", "X-Amz-Signature=hunter2hunter2 mismatch"),
          Map.entry("auth header", "X-Auth: hunter2hunter2"),
          Map.entry("pass pair", "login pass=hunter2 refused"));

  @Test
  void every_secret_in_the_corpus_is_redacted() {
    // Soft assertions, so that a failure names every entry that leaks, not only the first.
    assertSoftly(
        softly ->
            SECRETS.forEach(
                (kind, reason) ->
                    softly
                        .assertThat(FailureReason.sanitize(reason))
                        .as(kind)
                        .doesNotContain("hunter2")
                        .contains("[REDACTED]")));
  }

  @Test
  void the_context_around_a_secret_is_kept() {
    assertThat(FailureReason.sanitize("SMTP 535 for user=ada password=hunter2 at 10:00"))
        .isEqualTo("SMTP 535 for user=ada password=[REDACTED] at 10:00");
    assertThat(FailureReason.sanitize("GET https://ada:hunter2@api.example.com/v1 timed out"))
        .isEqualTo("GET https://[REDACTED]@api.example.com/v1 timed out");
  }

  @Test
  void a_quoted_secret_goes_up_to_its_closing_quote_and_the_quotes_stay() {
    assertThat(FailureReason.sanitize("{\"password\": \"Tr0ub4dor&3xyz hunter2\"}"))
        .isEqualTo("{\"password\": \"[REDACTED]\"}");
    assertThat(
            FailureReason.sanitize(
                "{\"user\": \"ada\", \"password\": \"correct horse battery staple\", \"retry\": 1}"))
        .isEqualTo("{\"user\": \"ada\", \"password\": \"[REDACTED]\", \"retry\": 1}");
    assertThat(FailureReason.sanitize("\"password\": \"a\\\"b c\" rejected"))
        .isEqualTo("\"password\": \"[REDACTED]\" rejected");
    assertThat(FailureReason.sanitize("{'password': 'a b', 'user': 'ada'}"))
        .isEqualTo("{'password': '[REDACTED]', 'user': 'ada'}");
    assertThat(FailureReason.sanitize("{'token': 'it\\'s x', 'user': 'ada'}"))
        .isEqualTo("{'token': '[REDACTED]', 'user': 'ada'}");
  }

  @Test
  void yaml_and_pair_forms_keep_their_context() {
    assertThat(FailureReason.sanitize("password: \"a b\"\nuser: ada"))
        .isEqualTo("password: \"[REDACTED]\"\nuser: ada");
    assertThat(FailureReason.sanitize("password: 'a b'\nuser: ada"))
        .isEqualTo("password: '[REDACTED]'\nuser: ada");
    assertThat(FailureReason.sanitize("password: a-b\nuser: ada"))
        .isEqualTo("password: [REDACTED]\nuser: ada");
    assertThat(FailureReason.sanitize("login password=\"a b\" user=ada"))
        .isEqualTo("login password=\"[REDACTED]\" user=ada");
    assertThat(FailureReason.sanitize("token='x y' expired"))
        .isEqualTo("token='[REDACTED]' expired");
  }

  @Test
  void a_quoted_authorization_value_goes_whole() {
    assertThat(
            FailureReason.sanitize("{\"Authorization\": \"Bearer abc def\", \"Accept\": \"*/*\"}"))
        .isEqualTo("{\"Authorization\": \"[REDACTED]\", \"Accept\": \"*/*\"}");
    assertThat(FailureReason.sanitize("{\"X-Api-Key\": \"abc def\", \"Accept\": \"*/*\"}"))
        .isEqualTo("{\"X-Api-Key\": \"[REDACTED]\", \"Accept\": \"*/*\"}");
  }

  @Test
  void an_unquoted_value_ends_at_whitespace() {
    // Unquoted, a secret cannot be told from the words after it, so only its first word goes.
    assertThat(FailureReason.sanitize("X-Api-Key: abc def")).isEqualTo("X-Api-Key: [REDACTED] def");
    assertThat(FailureReason.sanitize("Authorization: Bearer abc def"))
        .isEqualTo("Authorization: [REDACTED] def");
  }

  @Test
  void a_quoted_value_cut_before_its_closing_quote_goes_to_the_end_of_the_line() {
    assertThat(FailureReason.sanitize("{\"password\": \"correct horse\n at attempt 3"))
        .isEqualTo("{\"password\": \"[REDACTED]\n at attempt 3");
  }

  @Test
  void a_quoted_value_as_long_as_the_api_takes_is_redacted() {
    // The API takes reasons of up to 100,000 characters.
    String value = "ab\\\"c".repeat(19_990);
    assertThat(FailureReason.sanitize("token=\"" + value + "\" ok"))
        .isEqualTo("token=\"[REDACTED]\" ok");
    assertThat(FailureReason.sanitize("token='" + "x".repeat(99_990) + "' ok"))
        .isEqualTo("token='[REDACTED]' ok");
  }

  @Test
  void an_empty_quoted_value_is_kept() {
    assertThat(FailureReason.sanitize("{\"password\": \"\"}")).isEqualTo("{\"password\": \"\"}");
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
  void a_nul_is_dropped() {
    // PostgreSQL text cannot hold U+0000, so it never reaches the database.
    assertThat(FailureReason.sanitize("a\u0000b")).isEqualTo("ab");
  }

  @Test
  void a_control_character_cannot_split_a_secret_to_hide_it() {
    assertThat(FailureReason.sanitize("password=hun\u0000ter2 ok"))
        .isEqualTo("password=[REDACTED] ok");
  }

  @Test
  void long_reasons_are_cut_to_the_limit_without_splitting_a_character() {
    String emoji = "\uD83D\uDCE7"; // one character, two chars in UTF-16
    String reason = "x".repeat(FailureReason.MAX_LENGTH - 2) + emoji + "y".repeat(100);
    String sanitized = FailureReason.sanitize(reason);
    assertThat(sanitized).isEqualTo("x".repeat(FailureReason.MAX_LENGTH - 2) + emoji + "…");
    assertThat(sanitized.codePointCount(0, sanitized.length())).isEqualTo(FailureReason.MAX_LENGTH);
    assertThat(FailureReason.sanitize("x".repeat(FailureReason.MAX_LENGTH)))
        .hasSize(FailureReason.MAX_LENGTH);
  }

  @Test
  void the_limit_counts_characters_not_utf16_units() {
    String emoji = "\uD83D\uDCE7"; // one character, two chars in UTF-16
    assertThat(FailureReason.sanitize(emoji.repeat(FailureReason.MAX_LENGTH)))
        .isEqualTo(emoji.repeat(FailureReason.MAX_LENGTH));
    assertThat(FailureReason.sanitize(emoji.repeat(FailureReason.MAX_LENGTH + 1)))
        .isEqualTo(emoji.repeat(FailureReason.MAX_LENGTH - 1) + "…");
    assertThat(FailureReason.sanitize("x" + emoji.repeat(FailureReason.MAX_LENGTH)))
        .isEqualTo("x" + emoji.repeat(FailureReason.MAX_LENGTH - 2) + "…");
  }

  @Test
  void a_secret_pair_inside_another_pairs_value_is_redacted() {
    assertThat(FailureReason.sanitize("query x=password=hunter2 failed"))
        .isEqualTo("query x=password=[REDACTED] failed");
    assertThat(FailureReason.sanitize("see https.x://ada:hunter2@host"))
        .isEqualTo("see https.x://[REDACTED]@host");
  }

  @Test
  void a_web_token_is_redacted_from_its_header_wherever_its_run_starts() {
    String token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZGEifQ.c2lnbmF0dXJl";
    assertThat(FailureReason.sanitize("jwt " + token + " expired"))
        .isEqualTo("jwt [REDACTED] expired");
    assertThat(FailureReason.sanitize("x-" + token)).isEqualTo("x-[REDACTED]");
    assertThat(FailureReason.sanitize("v1." + token)).isEqualTo("v1.[REDACTED]");
  }

  /**
   * The work grows with the length of the reason, whatever its text: rules that looked for a
   * secret's name from every word boundary of a long run of key or scheme characters scanned the
   * run again from each, and 5,000 characters of "a." took seconds. A fail is sanitized before its
   * claim is looked at, so at the API's 100,000 characters one request with any token held a
   * request thread for about an hour. Ten seconds is hundreds of times what linear work takes.
   */
  @Test
  void the_longest_reasons_the_api_takes_are_sanitized_in_linear_time() {
    for (String unit :
        List.of(
            "a.",
            "a-",
            "a_b.",
            "tokentoken",
            "x://",
            "a://a:",
            "eyJ-",
            "eyJaaaaa.",
            "a=password=",
            "Digest a=\"",
            "Digest a=a,",
            "Bearer: ",
            "SG.aaaaaaaaaaaaaaaaa")) {
      String reason = unit.repeat(100_000 / unit.length());
      assertTimeoutPreemptively(
          Duration.ofSeconds(10),
          () -> FailureReason.sanitize(reason),
          "\"" + unit + "\" repeated");
    }
  }
}
