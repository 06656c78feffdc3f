package dev.claimq.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.config.ConfigValidationException;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import io.smallrye.config.validator.BeanValidationConfigValidator;
import jakarta.validation.Validation;
import jakarta.validation.Validator;
import java.time.Duration;
import java.util.Map;
import org.hibernate.validator.messageinterpolation.ParameterMessageInterpolator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The settings are checked as the service starts, each against the range the API takes for the same
 * setting of a queue: a lease of 0 s handed every claim an expired lease (a second worker took the
 * item while the first still worked on it), and a max-attempts of 0 made every enqueue a 500. Read
 * here as the service reads them (SmallRye Config, with the same converter and validator).
 */
class ClaimqConfigTest {
  private static final Validator VALIDATOR =
      Validation.byDefaultProvider()
          .configure()
          .messageInterpolator(new ParameterMessageInterpolator())
          .buildValidatorFactory()
          .getValidator();

  /** One key, as the service needs one to start with authentication on (MintKey's hash). */
  private static final String KEY =
      "ops:operator:*:7eee78659ab50d4dd820f4242709d188809ca0249506edf83d70022973d5e2ca";

  /** The settings as given, over one valid key unless they name keys themselves. */
  private static ClaimqConfig read(Map<String, String> given) {
    Map<String, String> settings = new java.util.HashMap<>(given);
    settings.putIfAbsent("claimq.auth.keys", KEY);
    SmallRyeConfig config =
        new SmallRyeConfigBuilder()
            .withMapping(ClaimqConfig.class)
            .withConverter(Duration.class, 200, new DurationConverter())
            .withValidator((BeanValidationConfigValidator) () -> VALIDATOR)
            .withSources(new PropertiesConfigSource(settings, "test", 500))
            .build();
    return config.getConfigMapping(ClaimqConfig.class);
  }

  @Test
  void the_defaults_are_taken() {
    ClaimqConfig config = read(Map.of());
    assertThat(config.lease().defaultDuration()).isEqualTo(Duration.ofSeconds(60));
    assertThat(config.retry().defaultMaxAttempts()).isEqualTo(5);
    assertThat(config.retention().keepKeys()).isEqualTo("400d");
  }

  @Test
  void with_authentication_on_a_key_is_needed() {
    assertThatThrownBy(() -> read(Map.of("claimq.auth.keys", " ")))
        .isInstanceOf(ConfigValidationException.class)
        .hasMessageContaining(
            "claimq.auth has no key, and authentication is on: set CLAIMQ_AUTH_KEYS");
    read(Map.of("claimq.auth.keys", " ", "claimq.auth.enabled", "false"));
  }

  /**
   * An entry that cannot be read stops the service with the other settings, before migrations (it
   * was refused only once the schema had been migrated, in a stack trace). Its name is said when it
   * is one (not a pasted key), and a queue as written, braces too: the message is no template.
   */
  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "mailer:agent | claimq.auth.keys entry 'mailer': expected name:roles:queues:sha256",
        "cq_pastedKey | entry of one part (not shown: it may be a key): expected"
            + " name:roles:queues:sha256",
        // A hand-chosen key in lower case reads as a name.
        "cq_lowercase_pasted_key | entry of one part (not shown: it may be a key)",
        "x{a}:agent:*:00 | entry whose first part is no name",
        "ops:agent:emails+cq_PastedKey:00 | entry 'ops': queue 2 of its queues is not a queue"
            + " name",
        "ops:admin:*:00 | entry 'ops': roles are agent, worker and operator",
        "ops:agent:Emails:00 | entry 'ops': queue 1 of its queues is not a queue name",
        "7eee78659ab50d4dd820f4242709d188809ca0249506edf83d70022973d5e2ca:agent:*:00 | entry whose"
            + " first part is no name",
        "ops:agent:*:00 | entry 'ops': the last part must be the key's SHA-256",
      })
  void an_entry_that_cannot_be_read_is_refused_with_the_settings(String entry, String message) {
    assertThatThrownBy(() -> read(Map.of("claimq.auth.keys", KEY + "," + entry)))
        .isInstanceOf(ConfigValidationException.class)
        .hasMessageContaining(message)
        // Nothing pasted is echoed: no key, no hash (the entries here end in a short '00').
        .hasMessageNotContaining("cq_")
        .hasMessageNotContaining("7eee78659ab5");
    // Not even with authentication off: the entry is a mistake either way.
    assertThatThrownBy(
            () -> read(Map.of("claimq.auth.keys", entry, "claimq.auth.enabled", "false")))
        .isInstanceOf(ConfigValidationException.class)
        .hasMessageContaining(message);
  }

  @Test
  void two_entries_with_one_hash_are_refused_with_the_settings() {
    String again = "again" + KEY.substring(KEY.indexOf(':'));
    assertThatThrownBy(() -> read(Map.of("claimq.auth.keys", KEY + "," + again)))
        .isInstanceOf(ConfigValidationException.class)
        .hasMessageContaining("key 'again' has the same hash as another key");
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "claimq.lease.default-duration | 1s",
        "claimq.lease.default-duration | 12h",
        "claimq.retry.backoff-base | 1h",
        "claimq.retention.keep-keys | forever",
        "claimq.retention.keep-keys | 0s",
        "claimq.retention.keep-finished | 0s",
        "claimq.reaper.interval | off",
        "claimq.reaper.interval | OFF",
        "claimq.long-poll.fallback-interval | Disabled",
        "claimq.retention.keep-keys | FOREVER",
        "claimq.reaper.interval | 500ms",
        "claimq.metrics.sample-interval | PT10S",
        "claimq.schema | claimq_2",
        "claimq.schema | s2345678901234567890123456789012345678901234567890123456",
        "claimq.lease.max-releases | 0",
      })
  void a_value_in_range_is_taken(String name, String value) {
    read(Map.of(name, value));
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "claimq.lease.default-duration | 0s | claimq.lease.default-duration must be a whole number"
            + " of seconds from 1 s to 43200 s",
        "claimq.lease.default-duration | -5s | claimq.lease.default-duration must be a whole"
            + " number of seconds from 1 s to 43200 s",
        "claimq.lease.default-duration | 1500ms | claimq.lease.default-duration must be a whole"
            + " number of seconds from 1 s to 43200 s",
        "claimq.lease.default-duration | 43201s | claimq.lease.default-duration must be a whole"
            + " number of seconds from 1 s to 43200 s",
        "claimq.retry.default-max-attempts | 0 | claimq.retry.default-max-attempts must be greater"
            + " than or equal to 1",
        "claimq.retry.default-max-attempts | 101 | claimq.retry.default-max-attempts must be less"
            + " than or equal to 100",
        "claimq.retry.backoff-base | 0s | claimq.retry.backoff-base must be a whole number of"
            + " seconds from 1 s to 86400 s",
        "claimq.retry.backoff-base | 2h | claimq.retry has backoff-base 7200 s, longer than"
            + " backoff-cap 3600 s (either may be the default): the first retry's delay must be"
            + " within the longest, so raise claimq.retry.backoff-cap or lower"
            + " claimq.retry.backoff-base",
        "claimq.retention.keep-finished | -1s | claimq.retention.keep-finished must be a whole"
            + " number of seconds of 0 s or more",
        "claimq.retry.crash-loop-after | 0 | claimq.retry.crash-loop-after must be greater than or"
            + " equal to 1",
        "claimq.lease.max-releases | -1 | claimq.lease.max-releases must be greater than or equal"
            + " to 0",
        "claimq.limits.payload-bytes | -1 | claimq.limits.payload-bytes must be greater than or"
            + " equal to 1",
        "claimq.retention.keep-keys | never | claimq.retention.keep-keys must be a duration (such as"
            + " 30d or PT720H) of 0 or more, or forever",
        "claimq.retention.keep-keys | -1d | claimq.retention.keep-keys must be a duration",
        "claimq.reaper.interval | -1s | claimq.reaper.interval must be a duration (such as 500ms,"
            + " 5s, 1m, 2h, 7d or PT5S) longer than 0, or off",
        "claimq.reaper.interval | 0s | claimq.reaper.interval must be a duration",
        "claimq.retention.interval | 5minutes | claimq.retention.interval must be a duration",
        "claimq.vacuum.interval | never | claimq.vacuum.interval must be a duration",
        "claimq.metrics.sample-interval | 0s | claimq.metrics.sample-interval must be a duration",
        "claimq.long-poll.fallback-interval | -1s | claimq.long-poll.fallback-interval must be a"
            + " duration",
        "claimq.schema | Claimq | claimq.schema must be a PostgreSQL name in lower case",
        "claimq.schema | claimq-1 | claimq.schema must be a PostgreSQL name in lower case",
        "claimq.schema | s23456789012345678901234567890123456789012345678901234567 | 56 at most",
      })
  void a_value_out_of_range_stops_the_start_naming_the_setting(
      String name, String value, String why) {
    assertThatThrownBy(() -> read(Map.of(name, value)))
        .isInstanceOf(ConfigValidationException.class)
        .hasMessageContaining(why);
  }
}
