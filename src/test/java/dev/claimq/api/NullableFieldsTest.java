package dev.claimq.api;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.claimq.AsAdmin;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import jakarta.validation.Validator;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.junit.jupiter.api.Test;

/**
 * An optional field of a request body takes null exactly where the document types it with null: a
 * client generated from the document that sends null for "none" is not refused, and one that
 * validates against it is not told null is wrong where the service takes it. Each field is read as
 * the API reads it, with the service's own ObjectMapper and then Bean Validation.
 */
@QuarkusTest
class NullableFieldsTest extends AsAdmin {
  @Inject ObjectMapper mapper;
  @Inject Validator validator;

  @Test
  void an_optional_field_takes_null_where_the_document_says_so_and_only_there() throws Exception {
    JsonNode schemas =
        new ObjectMapper()
            .readTree(given().queryParam("format", "json").get("/q/openapi").asString())
            .at("/components/schemas");
    List<String> wrong = new ArrayList<>();
    int checked = 0;
    for (Class<?> request : Requests.class.getDeclaredClasses()) {
      if (!request.isRecord()) {
        continue;
      }
      Schema named = request.getAnnotation(Schema.class);
      String name =
          named == null || named.name().isEmpty() ? request.getSimpleName() : named.name();
      JsonNode schema = schemas.get(name);
      assertThat(schema).as(name + " in the document").isNotNull();
      Set<String> required = new TreeSet<>();
      schema.path("required").forEach(field -> required.add(field.asText()));
      for (Map.Entry<String, JsonNode> property : schema.path("properties").properties()) {
        String field = property.getKey();
        if (required.contains(field)) {
          continue;
        }
        boolean documented = false;
        for (JsonNode type : property.getValue().path("type")) {
          documented |= type.asText().equals("null");
        }
        boolean taken = takesNull(request, field);
        if (taken != documented) {
          wrong.add(name + "." + field + (taken ? " takes null, undocumented" : " refuses null"));
        }
        checked++;
      }
    }
    assertThat(checked).isGreaterThan(40);
    assertThat(wrong).isEmpty();
  }

  /** Whether the service reads {field: null} without refusing the field, alone in its body. */
  private boolean takesNull(Class<?> request, String field) {
    Object read;
    try {
      read = mapper.readValue("{\"" + field + "\": null}", request);
    } catch (Exception refused) {
      return false;
    }
    return validator.validate(read).stream()
        .noneMatch(violation -> violation.getPropertyPath().toString().equals(field));
  }
}
