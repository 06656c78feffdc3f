package dev.claimq.api;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.type.LogicalType;
import io.quarkus.jackson.ObjectMapperCustomizer;
import jakarta.inject.Singleton;

/**
 * Reads request bodies strictly: a value of the wrong JSON type is a 400, not silently converted
 * ("5" is not a number, 5 is not a string, 1.5 is not a whole number). Unknown fields are refused
 * in application.properties.
 */
@Singleton
public class StrictJson implements ObjectMapperCustomizer {
  @Override
  public void customize(ObjectMapper mapper) {
    mapper.disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT);
    mapper.enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    mapper.enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES);
    for (LogicalType scalar :
        new LogicalType[] {
          LogicalType.Integer, LogicalType.Float, LogicalType.Boolean, LogicalType.Textual
        }) {
      var coercion = mapper.coercionConfigFor(scalar);
      for (CoercionInputShape shape : CoercionInputShape.values()) {
        if (!matches(scalar, shape)) {
          coercion.setCoercion(shape, CoercionAction.Fail);
        }
      }
    }
  }

  /** The JSON shapes a scalar of this kind may be read from. */
  private static boolean matches(LogicalType scalar, CoercionInputShape shape) {
    return switch (scalar) {
      case Integer -> shape == CoercionInputShape.Integer;
      case Float -> shape == CoercionInputShape.Integer || shape == CoercionInputShape.Float;
      case Boolean -> false; // true and false are never coerced; only other shapes reach here
      case Textual -> shape == CoercionInputShape.String;
      default -> true;
    };
  }
}
