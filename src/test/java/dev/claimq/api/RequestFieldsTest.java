package dev.claimq.api;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.claimq.AsAdmin;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import jakarta.validation.Validator;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.junit.jupiter.api.Test;

/**
 * Each field of a request body takes what the document says it takes, read as the API reads it:
 * with the service's own ObjectMapper, then Bean Validation. A client generated from the document
 * that sends what the document allows is not refused, and one that validates against it is not told
 * a value is wrong where the service takes it.
 */
@QuarkusTest
class RequestFieldsTest extends AsAdmin {
  /**
   * Text at the edges of what "blank" means: Java's white space (U+001C, U+2003) and what
   * ECMAScript's \s counts besides (U+00A0, U+2007, U+202F, U+FEFF), control characters, and
   * ordinary text.
   */
  private static final List<String> EDGES =
      List.of(
          "a",
          " ",
          "\t",
          "\u0001",
          "\u001C",
          "\u0085",
          "\u00A0",
          "\u2003",
          "\u2007",
          "\u202F",
          "\u3000",
          "\uFEFF",
          " \u2003a");

  @Inject ObjectMapper mapper;
  @Inject Validator validator;

  private record Property(Class<?> request, String schema, String field, JsonNode spec) {}

  @Test
  void an_optional_field_takes_null_where_the_document_says_so_and_only_there() {
    List<String> wrong = new ArrayList<>();
    List<Property> optional = properties(false);
    for (Property property : optional) {
      boolean documented = false;
      for (JsonNode type : property.spec.path("type")) {
        documented |= type.asText().equals("null");
      }
      boolean taken = takes(property, JsonNodeFactory.instance.nullNode());
      if (taken != documented) {
        wrong.add(
            property.schema
                + "."
                + property.field
                + (taken ? " takes null, undocumented" : " refuses null"));
      }
    }
    assertThat(optional.size()).isGreaterThan(40);
    assertThat(wrong).isEmpty();
  }

  @Test
  void a_text_field_with_a_pattern_takes_what_the_pattern_takes() {
    List<String> wrong = new ArrayList<>();
    int checked = 0;
    for (Property property : properties(true)) {
      String pattern = property.spec.path("pattern").asText(null);
      if (pattern == null || property.spec.has("enum")) {
        continue;
      }
      // Read here as Java reads it: only where ECMAScript reads it the same ([\s\S], any
      // character, is the same to both).
      assertThat(pattern.replace("[\\s\\S]", ""))
          .as(property.schema + "." + property.field)
          .doesNotContainPattern("\\\\[sSwWdDbB]");
      for (String text : EDGES) {
        int length = text.codePointCount(0, text.length());
        // As JSON Schema reads it: the pattern matches anywhere; the bounds count characters.
        boolean documented =
            Pattern.compile(pattern).matcher(text).find()
                && length >= property.spec.path("minLength").asInt(0)
                && length <= property.spec.path("maxLength").asInt(Integer.MAX_VALUE);
        boolean taken = takes(property, JsonNodeFactory.instance.textNode(text));
        if (taken != documented) {
          wrong.add(
              property.schema
                  + "."
                  + property.field
                  + (taken ? " takes " : " refuses ")
                  + escaped(text)
                  + " (pattern "
                  + pattern
                  + ")");
        }
      }
      checked++;
    }
    assertThat(checked).isGreaterThan(8);
    assertThat(wrong).isEmpty();
  }

  @Test
  void a_request_refuses_a_field_it_does_not_know_and_its_schema_says_so() throws Exception {
    JsonNode schemas = schemas();
    List<String> wrong = new ArrayList<>();
    int checked = 0;
    for (Class<?> request : Requests.class.getDeclaredClasses()) {
      Schema named = request.getAnnotation(Schema.class);
      if (!request.isRecord() || named == null || named.name().isEmpty()) {
        continue;
      }
      boolean refused;
      try {
        mapper.readValue("{\"notAField\": 1}", request);
        refused = false;
      } catch (UnrecognizedPropertyException e) {
        refused = true;
      }
      JsonNode additional = schemas.path(named.name()).path("additionalProperties");
      if (!refused || !additional.isBoolean() || additional.asBoolean()) {
        wrong.add(named.name() + ": refused " + refused + ", additionalProperties " + additional);
      }
      checked++;
    }
    assertThat(checked).isGreaterThan(15);
    assertThat(wrong).isEmpty();
  }

  @Test
  void white_space_is_what_java_counts_as_white_space() {
    Pattern whiteSpace = Pattern.compile("[" + Requests.WHITE_SPACE + "]");
    List<String> wrong = new ArrayList<>();
    for (int c = 0; c <= Character.MAX_CODE_POINT; c++) {
      if (whiteSpace.matcher(Character.toString(c)).matches() != Character.isWhitespace(c)) {
        wrong.add("U+%04X".formatted(c));
      }
    }
    assertThat(wrong).isEmpty();
    assertThat(" \u2003\u001C\t".isBlank()).isTrue(); // what @NotBlank asks of a String
  }

  /** The served document's schemas. */
  private static JsonNode schemas() {
    try {
      return new ObjectMapper()
          .readTree(given().queryParam("format", "json").get("/q/openapi").asString())
          .at("/components/schemas");
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  /** Each property of each request body, the optional ones only or all. */
  private List<Property> properties(boolean required) {
    JsonNode schemas = schemas();
    List<Property> properties = new ArrayList<>();
    for (Class<?> request : Requests.class.getDeclaredClasses()) {
      if (!request.isRecord()) {
        continue;
      }
      Schema named = request.getAnnotation(Schema.class);
      String name =
          named == null || named.name().isEmpty() ? request.getSimpleName() : named.name();
      JsonNode schema = schemas.get(name);
      assertThat(schema).as(name + " in the document").isNotNull();
      Set<String> requiredHere = new TreeSet<>();
      schema.path("required").forEach(field -> requiredHere.add(field.asText()));
      for (Map.Entry<String, JsonNode> property : schema.path("properties").properties()) {
        if (required || !requiredHere.contains(property.getKey())) {
          properties.add(new Property(request, name, property.getKey(), property.getValue()));
        }
      }
    }
    return properties;
  }

  /** Whether the service reads {field: value} without refusing the field, alone in its body. */
  private boolean takes(Property property, JsonNode value) {
    ObjectNode body = JsonNodeFactory.instance.objectNode().set(property.field, value);
    Object read;
    try {
      read = mapper.readValue(body.toString(), property.request);
    } catch (Exception refused) {
      return false;
    }
    return validator.validate(read).stream()
        .noneMatch(violation -> violation.getPropertyPath().toString().equals(property.field));
  }

  private static String escaped(String text) {
    StringBuilder escaped = new StringBuilder("\"");
    text.chars()
        .forEach(
            c -> escaped.append(c < 0x7F && c > 0x20 ? "" + (char) c : "\\u%04X".formatted(c)));
    return escaped.append('"').toString();
  }
}
