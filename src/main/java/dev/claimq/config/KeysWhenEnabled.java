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
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Every API key entry can be read and names a key of its own, and with authentication on there is
 * at least one: checked with the rest of the settings, before the service touches the database.
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
      if (auth == null) {
        return true;
      }
      List<String> entries =
          auth.keys().orElse(List.of()).stream().filter(entry -> !entry.isBlank()).toList();
      Set<String> hashes = new HashSet<>();
      for (String entry : entries) {
        String wrong;
        try {
          KeyEntry key = KeyEntry.parse(entry);
          wrong =
              hashes.add(key.sha256())
                  ? null
                  : "claimq.auth.keys: key '" + key.name() + "' has the same hash as another key";
        } catch (IllegalArgumentException unreadable) {
          wrong = unreadable.getMessage();
        }
        if (wrong != null) {
          context.disableDefaultConstraintViolation();
          context.buildConstraintViolationWithTemplate(literal(wrong)).addConstraintViolation();
          return false;
        }
      }
      return !auth.enabled() || !entries.isEmpty();
    }

    /** The text as a message template says it: braces, dollar signs and backslashes are its own. */
    private static String literal(String text) {
      return text.replaceAll("([\\\\{}$])", "\\\\$1");
    }
  }
}
