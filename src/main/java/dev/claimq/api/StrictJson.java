package dev.claimq.api;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.BeanProperty;
import com.fasterxml.jackson.databind.DeserializationConfig;
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
import com.fasterxml.jackson.databind.deser.BeanDeserializerBase;
import com.fasterxml.jackson.databind.deser.BeanDeserializerModifier;
import com.fasterxml.jackson.databind.deser.ContextualDeserializer;
import com.fasterxml.jackson.databind.deser.std.DelegatingDeserializer;
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
 *       it is and 1e309 stays a number, as jsonb keeps them; one written longer than any that can
 *       be stored is refused unread, as one that cannot be stored is, naming where it is;
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
    mapper.getFactory().setStreamReadConstraints(numbersBounded(mapper.getFactory()));
    mapper.registerModule(
        new SimpleModule("claimq-storable")
            .addDeserializer(String.class, new StorableText(false))
            .addDeserializer(JsonNode.class, new StorableJson())
            .setDeserializerModifier(
                new BeanDeserializerModifier() {
                  @Override
                  public JsonDeserializer<?> modifyDeserializer(
                      DeserializationConfig config,
                      BeanDescription description,
                      JsonDeserializer<?> deserializer) {
                    return deserializer instanceof BeanDeserializerBase
                        ? new NumbersPlaced(deserializer)
                        : deserializer;
                  }
                }));
  }

  /**
   * The factory's limits, but a number may be written with as many digits as the longest one that
   * can be stored (Storable), not Jackson's 1,000 in all: 0.1 followed by 999 more digits is a
   * number claimq stores and answers, so it must read it again. Beyond that the parser refuses it
   * (NumberTooLong) before anything reads it as a number, so no number costs more to read than one
   * that can be stored, and the body limit bounds how many there are. The MCP transport's parser
   * reads with a copy of this mapper, so with these limits too; its envelope check
   * (ToolArguments.ENVELOPE) sets them itself.
   */
  public static StreamReadConstraints numbersBounded(JsonFactory factory) {
    StreamReadConstraints limits = factory.streamReadConstraints();
    return new StreamReadConstraints(
        limits.getMaxNestingDepth(),
        limits.getMaxDocumentLength(),
        Storable.MAX_NUMBER_WRITTEN,
        limits.getMaxStringLength(),
        limits.getMaxNameLength(),
        limits.getMaxTokenCount()) {
      @Override
      public void validateFPLength(int length) throws StreamConstraintsException {
        validateIntegerLength(length);
      }

      @Override
      public void validateIntegerLength(int length) throws StreamConstraintsException {
        if (length > _maxNumLen) {
          throw new NumberTooLong();
        }
      }

      @Override
      public void validateNestingDepth(int depth) throws StreamConstraintsException {
        if (depth > _maxNestingDepth) {
          throw new NestedTooDeep(_maxNestingDepth);
        }
      }
    };
  }

  /**
   * Arrays and objects nested deeper than the parser reads, refused as it opens the one past the
   * limit, in the service's words rather than Jackson's (which name its own settings). Like
   * NumberTooLong, it knows nothing of where; whoever reads the parser names the place.
   */
  public static final class NestedTooDeep extends StreamConstraintsException {
    NestedTooDeep(int limit) {
      super(
          "nests arrays and objects past the limit of "
              + limit
              + " levels (the body itself is level 1)");
    }
  }

  /**
   * A number written with more digits than any that can be stored, refused by the parser as it
   * meets it. It knows nothing of where: whoever reads the parser names the place (see
   * NumbersPlaced, and {@link #where}).
   */
  public static final class NumberTooLong extends StreamConstraintsException {
    NumberTooLong() {
      super(Storable.WRITTEN_TOO_LONG);
    }
  }

  /** Where the parser is, as a path from the root: params.arguments.payload.n[1]. */
  public static String pathOf(JsonParser parser) {
    String path = where(null, parser);
    return path.startsWith(".") ? path.substring(1) : path;
  }

  /**
   * Where the parser is, as a path from the context it was in at from (which is part of it) down to
   * the value it is on, in the spelling of errors[].field: ".payload.n[1]".
   */
  static String where(JsonStreamContext from, JsonParser parser) {
    return path(parser.getParsingContext(), from);
  }

  /**
   * Where the object or array the parser is in sits, in the spelling of errors[].field
   * ("payload.to[1]"; "" for the body itself): for a fault in a key, whose name it never read.
   */
  public static String containerOf(JsonParser parser) {
    String path = path(parser.getParsingContext().getParent(), null);
    return path.startsWith(".") ? path.substring(1) : path;
  }

  private static String path(JsonStreamContext start, JsonStreamContext from) {
    StringBuilder path = new StringBuilder();
    for (JsonStreamContext at = start; at != null; at = at.getParent()) {
      if (at.inObject() && at.getCurrentName() != null) {
        path.insert(0, "." + at.getCurrentName());
      } else if (at.inArray()) {
        path.insert(0, "[" + Math.max(at.getCurrentIndex(), 0) + "]");
      }
      if (at == from) {
        break;
      }
    }
    return path.toString();
  }

  /**
   * A record, read as Jackson reads it, but a number too long to read (NumberTooLong, thrown by the
   * parser while the record reads the next token, or wrapped by a field it was in) is a 400 naming
   * where it is, as an unstorable value is, not a body that is "not valid JSON": the parser has not
   * moved since, so where it stands is where the number is.
   */
  static final class NumbersPlaced extends DelegatingDeserializer {
    NumbersPlaced(JsonDeserializer<?> record) {
      super(record);
    }

    @Override
    protected JsonDeserializer<?> newDelegatingInstance(JsonDeserializer<?> record) {
      return new NumbersPlaced(record);
    }

    @Override
    public Object deserialize(JsonParser parser, DeserializationContext context)
        throws IOException {
      JsonStreamContext start = parser.getParsingContext();
      try {
        return super.deserialize(parser, context);
      } catch (JsonProcessingException e) {
        if (!tooLong(e)) {
          throw e;
        }
        throw new UnstorableValueException(parser, where(start, parser), Storable.WRITTEN_TOO_LONG);
      }
    }

    /** True for a NumberTooLong not yet placed by a record within this one. */
    private static boolean tooLong(Throwable e) {
      for (Throwable cause = e; cause != null; cause = cause.getCause()) {
        if (cause instanceof UnstorableValueException) {
          return false;
        }
        if (cause instanceof NumberTooLong) {
          return true;
        }
      }
      return false;
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
      } else if (value.isBigDecimal() || value.isBigInteger()) {
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
