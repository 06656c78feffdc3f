package dev.claimq.config;

import static java.lang.annotation.ElementType.METHOD;
import static java.lang.annotation.RetentionPolicy.RUNTIME;

import io.quarkus.runtime.configuration.DurationConverter;
import jakarta.validation.Constraint;
import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;
import jakarta.validation.Payload;
import java.lang.annotation.Documented;
import java.lang.annotation.Retention;
import java.lang.annotation.Target;
import java.time.Duration;
import java.util.List;

/**
 * A setting read as a duration, or as one of the words that mean "never" (off and disabled, in any
 * case, as {@link Intervals} reads them; retention's forever): it is kept as text for those words,
 * so the configuration cannot check it as a duration, and a wrong one would be found only when
 * first read, by a job that then fails on every run, or never runs and is reported down.
 */
@Documented
@Target(METHOD)
@Retention(RUNTIME)
@Constraint(validatedBy = Every.Check.class)
public @interface Every {
  /** The words taken for "never". */
  String[] never() default {"off", "disabled"};

  /** Whether a duration of 0 is taken (else it must be longer). */
  boolean zero() default false;

  String message() default
      "must be a duration (such as 500ms, 5s, 1m, 2h, 7d or PT5S) longer than 0, or off";

  Class<?>[] groups() default {};

  Class<? extends Payload>[] payload() default {};

  final class Check implements ConstraintValidator<Every, String> {
    private List<String> never;
    private boolean zero;

    @Override
    public void initialize(Every every) {
      never = List.of(every.never());
      zero = every.zero();
    }

    @Override
    public boolean isValid(String value, ConstraintValidatorContext context) {
      if (value == null || never.stream().anyMatch(value::equalsIgnoreCase)) {
        return true; // in any case, as Intervals reads off
      }
      Duration duration;
      try {
        duration = DurationConverter.parseDuration(value);
      } catch (IllegalArgumentException notADuration) {
        return false;
      }
      return duration != null && !duration.isNegative() && (zero || !duration.isZero());
    }
  }
}
