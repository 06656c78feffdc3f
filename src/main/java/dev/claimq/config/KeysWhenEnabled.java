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
import java.util.List;

/**
 * With authentication on, at least one API key is configured: checked with the rest of the
 * settings, before the service touches the database. (Each entry is read, and an unreadable one
 * refused, by ApiKeys as the service starts.)
 */
@Documented
@Target(TYPE)
@Retention(RUNTIME)
@Constraint(validatedBy = KeysWhenEnabled.Check.class)
public @interface KeysWhenEnabled {
  String message() default
      "has no key, and authentication is on: set CLAIMQ_AUTH_KEYS (mint a key with java"
          + " src/main/java/dev/claimq/security/MintKey.java NAME ROLES), or run without"
          + " authentication with CLAIMQ_AUTH_ENABLED=false";

  Class<?>[] groups() default {};

  Class<? extends Payload>[] payload() default {};

  final class Check implements ConstraintValidator<KeysWhenEnabled, ClaimqConfig.Auth> {
    @Override
    public boolean isValid(ClaimqConfig.Auth auth, ConstraintValidatorContext context) {
      return auth == null
          || !auth.enabled()
          || !auth.keys().orElse(List.of()).stream().allMatch(String::isBlank);
    }
  }
}
