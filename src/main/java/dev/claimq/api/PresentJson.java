package dev.claimq.api;

import com.fasterxml.jackson.databind.JsonNode;
import jakarta.validation.Constraint;
import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;
import jakarta.validation.Payload;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/** A JSON value that is present and not the literal null (Jackson reads null as NullNode). */
@Target({
  ElementType.FIELD,
  ElementType.PARAMETER,
  ElementType.RECORD_COMPONENT,
  ElementType.METHOD
})
@Retention(RetentionPolicy.RUNTIME)
@Constraint(validatedBy = PresentJson.Validator.class)
public @interface PresentJson {
  String message() default "must be a JSON value other than null";

  Class<?>[] groups() default {};

  Class<? extends Payload>[] payload() default {};

  class Validator implements ConstraintValidator<PresentJson, JsonNode> {
    @Override
    public boolean isValid(JsonNode value, ConstraintValidatorContext context) {
      return value == null || !value.isNull() && !value.isMissingNode();
    }
  }
}
