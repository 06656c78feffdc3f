package dev.claimq.security;

import static java.lang.annotation.ElementType.TYPE;
import static java.lang.annotation.RetentionPolicy.RUNTIME;

import dev.claimq.config.ClaimqConfig;
import jakarta.validation.Constraint;
import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;
import jakarta.validation.Payload;
import java.lang.annotation.Documented;
import java.lang.annotation.Retention;
import java.lang.annotation.Target;
import java.util.List;
import org.hibernate.validator.constraintvalidation.HibernateConstraintValidatorContext;

/**
 * The API keys can be read, and with authentication on there is one: checked with the rest of the
 * settings, before the service touches the database, and said in one line (ApiKeys, which parses
 * them, would say it later, inside a stack trace).
 */
@Documented
@Target(TYPE)
@Retention(RUNTIME)
@Constraint(validatedBy = UsableKeys.Check.class)
public @interface UsableKeys {
  String message() default "{why}";

  Class<?>[] groups() default {};

  Class<? extends Payload>[] payload() default {};

  final class Check implements ConstraintValidator<UsableKeys, ClaimqConfig.Auth> {
    @Override
    public boolean isValid(ClaimqConfig.Auth auth, ConstraintValidatorContext context) {
      if (auth == null) {
        return true;
      }
      List<String> entries = auth.keys().orElse(List.of());
      String why = null;
      try {
        new ApiKeys(auth.enabled(), entries);
      } catch (IllegalArgumentException unreadable) {
        why = "has a key entry that cannot be read: " + unreadable.getMessage();
      }
      if (why == null && auth.enabled() && entries.stream().allMatch(String::isBlank)) {
        why =
            "has no key, and authentication is on: set CLAIMQ_AUTH_KEYS (mint a key with java"
                + " src/main/java/dev/claimq/security/MintKey.java NAME ROLES), or run without"
                + " authentication with CLAIMQ_AUTH_ENABLED=false";
      }
      if (why == null) {
        return true;
      }
      context.unwrap(HibernateConstraintValidatorContext.class).addMessageParameter("why", why);
      return false;
    }
  }
}
