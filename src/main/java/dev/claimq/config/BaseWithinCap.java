package dev.claimq.config;

import static java.lang.annotation.ElementType.TYPE;
import static java.lang.annotation.RetentionPolicy.RUNTIME;

import jakarta.validation.Constraint;
import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;
import jakarta.validation.Payload;
import java.lang.annotation.Documented;
import java.lang.annotation.Retention;
import java.lang.annotation.Target;

/** The first retry's delay is no longer than the longest delay between attempts. */
@Documented
@Target(TYPE)
@Retention(RUNTIME)
@Constraint(validatedBy = BaseWithinCap.Check.class)
public @interface BaseWithinCap {
  String message() default
      "has a backoff-base longer than its backoff-cap: the first retry's delay must be within the"
          + " longest";

  Class<?>[] groups() default {};

  Class<? extends Payload>[] payload() default {};

  final class Check implements ConstraintValidator<BaseWithinCap, ClaimqConfig.Retry> {
    @Override
    public boolean isValid(ClaimqConfig.Retry retry, ConstraintValidatorContext context) {
      return retry == null
          || retry.backoffBase() == null
          || retry.backoffCap() == null
          || retry.backoffBase().compareTo(retry.backoffCap()) <= 0;
    }
  }
}
