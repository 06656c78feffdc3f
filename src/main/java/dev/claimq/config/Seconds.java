package dev.claimq.config;

import static java.lang.annotation.ElementType.METHOD;
import static java.lang.annotation.RetentionPolicy.RUNTIME;

import jakarta.validation.Constraint;
import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;
import jakarta.validation.Payload;
import java.lang.annotation.Documented;
import java.lang.annotation.Retention;
import java.lang.annotation.Target;
import java.time.Duration;
import org.hibernate.validator.constraintvalidation.HibernateConstraintValidatorContext;

/**
 * A duration setting of whole seconds from min to max, as the API takes the same setting of a
 * queue's policy: the service counts such settings in seconds, so 1500ms would be read as 1 s.
 */
@Documented
@Target(METHOD)
@Retention(RUNTIME)
@Constraint(validatedBy = Seconds.Check.class)
public @interface Seconds {
  long min() default 1;

  long max() default Long.MAX_VALUE;

  /** Said with the range, as {range}: "from 1 s to 43200 s", or "of 0 s or more". */
  String message() default "must be a whole number of seconds {range}";

  Class<?>[] groups() default {};

  Class<? extends Payload>[] payload() default {};

  final class Check implements ConstraintValidator<Seconds, Duration> {
    private long min;
    private long max;

    @Override
    public void initialize(Seconds bounds) {
      min = bounds.min();
      max = bounds.max();
    }

    @Override
    public boolean isValid(Duration value, ConstraintValidatorContext context) {
      if (value == null
          || (value.getNano() == 0 && value.getSeconds() >= min && value.getSeconds() <= max)) {
        return true;
      }
      context
          .unwrap(HibernateConstraintValidatorContext.class)
          .addMessageParameter(
              "range",
              max == Long.MAX_VALUE
                  ? "of " + min + " s or more"
                  : "from " + min + " s to " + max + " s");
      return false;
    }
  }
}
