package dev.claimq.api;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.BeanProperty;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyName;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.deser.ContextualDeserializer;
import com.fasterxml.jackson.databind.deser.std.JsonNodeDeserializer;
import com.fasterxml.jackson.databind.deser.std.StdDeserializer;
import com.fasterxml.jackson.databind.deser.std.StdScalarDeserializer;
import com.fasterxml.jackson.databind.deser.std.StringDeserializer;
import com.fasterxml.jackson.databind.exc.InvalidNullException;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.type.LogicalType;
import com.fasterxml.jackson.databind.type.TypeFactory;
import io.quarkus.jackson.ObjectMapperCustomizer;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.util.Iterator;
import java.util.Map;

/**
 * Reads request bodies strictly, so that what is stored is what was sent:
 *
 * <ul>
 *   <li>a value of the wrong JSON type is a 400, not converted ("5" is not a number, 5 is not a
 *       string, 1.5 is not a whole number); unknown fields are refused in application.properties;
 *   <li>an object that names a field twice is a 400: an ambiguous document is refused, not guessed;
 *   <li>numbers are read as exact decimals, never as doubles, so 0.30000000000000000001 stays what
 *       it is and 1e309 stays a number, as jsonb keeps them;
 *   <li>text that PostgreSQL cannot store as sent (NUL, lone surrogates) is a 400 naming the field.
 * </ul>
 */
@Singleton
public class StrictJson implements ObjectMapperCustomizer {
  @Override
  public void customize(ObjectMapper mapper) {
    mapper.disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT);
    mapper.enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    mapper.enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES);
    mapper.enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
    mapper.enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);
    mapper.configure(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES, false); // 1.50 stays 1.50
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
    mapper.registerModule(
        new SimpleModule("claimq-storable")
            .addDeserializer(String.class, new StorableText(false))
            .addDeserializer(JsonNode.class, new StorableJson()));
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

  /** A string field, refused when it cannot be stored as sent. */
  public static class StorableText extends StdScalarDeserializer<String> {
    private final boolean nulAllowed;

    StorableText(boolean nulAllowed) {
      super(String.class);
      this.nulAllowed = nulAllowed;
    }

    @Override
    public String deserialize(JsonParser parser, DeserializationContext context)
        throws IOException {
      String text = StringDeserializer.instance.deserialize(parser, context);
      String why = text == null ? null : Storable.whyNotText(text, nulAllowed);
      if (why != null) {
        throw new UnstorableValueException(parser, "", why);
      }
      return text;
    }
  }

  /**
   * A failure reason: its control characters, NUL included, are dropped by the sanitizer as
   * documented, so only text that is not Unicode at all is refused.
   */
  public static class ReasonText extends StorableText {
    public ReasonText() {
      super(true);
    }
  }

  /**
   * A field that may be left out, but not sent as null: read as its type is read, and an explicit
   * null is refused (InvalidNullException, a 400 naming the field). Jackson's own nulls = FAIL
   * would refuse a record's absent field too, as a creator reads absence as null.
   */
  public static class NullRefused extends StdDeserializer<Object>
      implements ContextualDeserializer {
    private final JsonDeserializer<Object> read;
    private final PropertyName name;

    public NullRefused() {
      this(null, null, null);
    }

    private NullRefused(JavaType type, JsonDeserializer<Object> read, PropertyName name) {
      super(type == null ? TypeFactory.unknownType() : type);
      this.read = read;
      this.name = name;
    }

    @Override
    public JsonDeserializer<?> createContextual(
        DeserializationContext context, BeanProperty property) throws JsonMappingException {
      JavaType type = property.getType();
      return new NullRefused(
          type, context.findContextualValueDeserializer(type, property), property.getFullName());
    }

    @Override
    public Object deserialize(JsonParser parser, DeserializationContext context)
        throws IOException {
      return read.deserialize(parser, context);
    }

    @Override
    public Object getNullValue(DeserializationContext context) throws JsonMappingException {
      throw InvalidNullException.from(context, name, getValueType());
    }

    @Override
    public Object getAbsentValue(DeserializationContext context) {
      return null;
    }
  }

  /** Any JSON value (a payload), refused when a key, a string or a number cannot be stored. */
  static class StorableJson extends StdScalarDeserializer<JsonNode> {
    StorableJson() {
      super(JsonNode.class);
    }

    @Override
    public JsonNode deserialize(JsonParser parser, DeserializationContext context)
        throws IOException {
      JsonNode value =
          JsonNodeDeserializer.getDeserializer(JsonNode.class).deserialize(parser, context);
      check(parser, value, "");
      return value;
    }

    @Override
    public JsonNode getNullValue(DeserializationContext context) {
      return NullNode.getInstance(); // as Jackson's own: null is a value, refused by @PresentJson
    }

    private static void check(JsonParser parser, JsonNode value, String at)
        throws UnstorableValueException {
      if (value.isTextual()) {
        refuseIf(parser, at, Storable.whyNotText(value.textValue(), false));
      } else if (value.isBigDecimal()) {
        refuseIf(parser, at, Storable.whyNotNumber(value.decimalValue()));
      } else if (value.isArray()) {
        for (int i = 0; i < value.size(); i++) {
          check(parser, value.get(i), at + "[" + i + "]");
        }
      } else if (value.isObject()) {
        for (Iterator<Map.Entry<String, JsonNode>> fields = value.fields(); fields.hasNext(); ) {
          Map.Entry<String, JsonNode> field = fields.next();
          String why = Storable.whyNotText(field.getKey(), false);
          if (why != null) {
            refuseIf(parser, at, "has a key that " + why);
          }
          check(parser, field.getValue(), at + "." + field.getKey());
        }
      }
    }

    private static void refuseIf(JsonParser parser, String at, String why)
        throws UnstorableValueException {
      if (why != null) {
        throw new UnstorableValueException(parser, at, why);
      }
    }
  }
}
