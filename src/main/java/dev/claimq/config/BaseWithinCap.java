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
import org.hibernate.validator.constraintvalidation.HibernateConstraintValidatorContext;

/** The first retry's delay is no longer than the longest delay between attempts. */
@Documented
@Target(TYPE)
@Retention(RUNTIME)
@Constraint(validatedBy = BaseWithinCap.Check.class)
public @interface BaseWithinCap {
  /** Said with the two settings as they are, as {why}. */
  String message() default "{why}";

  Class<?>[] groups() default {};

  Class<? extends Payload>[] payload() default {};

  final class Check implements ConstraintValidator<BaseWithinCap, ClaimqConfig.Retry> {
    @Override
    public boolean isValid(ClaimqConfig.Retry retry, ConstraintValidatorContext context) {
      if (retry == null
          || retry.backoffBase() == null
          || retry.backoffCap() == null
          || retry.backoffBase().compareTo(retry.backoffCap()) <= 0) {
        return true;
      }
      context
          .unwrap(HibernateConstraintValidatorContext.class)
          .addMessageParameter(
              "why",
              "has backoff-base "
                  + retry.backoffBase().toSeconds()
                  + " s, longer than backoff-cap "
                  + retry.backoffCap().toSeconds()
                  + " s (either may be the default): the first retry's delay must be within the"
                  + " longest, so raise claimq.retry.backoff-cap or lower"
                  + " claimq.retry.backoff-base");
      return false;
    }
  }
}
