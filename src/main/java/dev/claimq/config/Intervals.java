package dev.claimq.config;

import io.quarkus.runtime.configuration.DurationConverter;
import java.time.Duration;
import java.util.Optional;

/** How a setting that {@link Every} has checked is read: a duration, or off. */
public final class Intervals {
  private Intervals() {}

  /** Whether the setting means "never" (off or disabled, in any case). */
  public static boolean isOff(String setting) {
    return setting.equalsIgnoreCase("off") || setting.equalsIgnoreCase("disabled");
  }

  /** The setting's duration; empty when it is off. */
  public static Optional<Duration> of(String setting) {
    return isOff(setting)
        ? Optional.empty()
        : Optional.of(DurationConverter.parseDuration(setting));
  }
}
