package dev.claimq.api;

import static dev.claimq.Api.claim;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.uniqueQueue;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Sends every request body in the OpenAPI document in broken forms: not JSON, the wrong JSON type,
 * unknown fields, each field with a value of the wrong type or past its bound, and an oversized
 * body. Each must be refused with a 400 or 413 problem, and nothing stored may change.
 *
 * <p>The bodies start from a valid one carrying the real claim token of a held item, so a broken
 * body that slipped through validation would complete, fail or extend that claim, or enqueue an
 * item, and the before/after comparison would catch it.
 */
@QuarkusTest
class HostileInputTest {
  private final ObjectMapper json = new ObjectMapper();

  @Test
  void every_broken_body_to_every_endpoint_is_refused_and_changes_nothing() throws Exception {
    String queue = uniqueQueue("hostile");
    String held = enqueued(queue, "held", Map.of("n", 1));
    String token = claim(held, Map.of("worker", "w", "leaseSeconds", 600)).path("claimToken");
    String pending = enqueued(queue, "pending", Map.of("n", 2));
    String before = snapshot(queue);

    JsonNode document =
        json.readTree(given().queryParam("format", "json").get("/q/openapi").asString());
    List<String> accepted = new ArrayList<>();
    int sent = 0;
    for (Iterator<Map.Entry<String, JsonNode>> paths = document.path("paths").fields();
        paths.hasNext(); ) {
      Map.Entry<String, JsonNode> path = paths.next();
      JsonNode post = path.getValue().path("post");
      JsonNode schemaRef =
          post.path("requestBody").path("content").path("application/json").path("schema");
      if (schemaRef.isMissingNode()) {
        continue;
      }
      JsonNode schema = resolve(document, schemaRef);
      String id =
          path.getKey().contains("/claim") && path.getKey().startsWith("/v1/items")
              ? pending
              : held;
      String url = path.getKey().replace("{queue}", queue).replace("{id}", id);
      ObjectNode valid = validBody(document, schema, token);

      for (Map.Entry<String, String> body : brokenBodies(document, schema, valid).entrySet()) {
        Response response =
            given()
                .urlEncodingEnabled(false) // batch paths carry a literal ':'
                .contentType("application/json")
                .body(body.getValue())
                .post(url);
        sent++;
        int status = response.statusCode();
        boolean problem =
            String.valueOf(response.contentType()).startsWith("application/problem+json");
        if ((status != 400 && status != 413) || !problem) {
          accepted.add(
              path.getKey()
                  + " with "
                  + body.getKey()
                  + ": "
                  + status
                  + " "
                  + response.contentType());
        }
      }
    }

    assertThat(sent).as("broken bodies sent").isGreaterThan(60);
    assertThat(accepted).as("broken bodies not refused with 400/413 problem+json").isEmpty();
    assertThat(snapshot(queue)).as("stored items").isEqualTo(before);
  }

  /** Name of the mutation → the body to send. */
  private Map<String, String> brokenBodies(JsonNode document, JsonNode schema, ObjectNode valid) {
    Map<String, String> bodies = new LinkedHashMap<>();
    bodies.put("truncated JSON", valid.toString().substring(0, valid.toString().length() - 1));
    bodies.put("not JSON", "claim it please");
    bodies.put("an array", "[" + valid + "]");
    bodies.put("a string", "\"" + valid.toString().replace("\"", "'") + "\"");
    bodies.put("a number", "42");
    bodies.put("two documents", valid + " " + valid);
    bodies.put("an unknown field", valid.deepCopy().put("surprise", 1).toString());
    bodies.put(
        "an oversized body", valid.deepCopy().put("padding", "x".repeat(1_200_000)).toString());
    for (Iterator<Map.Entry<String, JsonNode>> properties = schema.path("properties").fields();
        properties.hasNext(); ) {
      Map.Entry<String, JsonNode> property = properties.next();
      String name = property.getKey();
      JsonNode spec = resolve(document, property.getValue());
      String type = spec.path("type").asText("");
      switch (type) {
        case "string" -> {
          bodies.put(name + " as a number", valid.deepCopy().put(name, 12345).toString());
          bodies.put(
              name + " as an object",
              valid.deepCopy().set(name, json.createObjectNode()).toString());
          if (spec.has("maxLength")) {
            bodies.put(
                name + " too long",
                valid
                    .deepCopy()
                    .put(name, "x".repeat(spec.path("maxLength").asInt() + 1))
                    .toString());
          }
        }
        case "integer" -> {
          bodies.put(name + " as a string", valid.deepCopy().put(name, "7").toString());
          bodies.put(name + " as a fraction", valid.deepCopy().put(name, 1.5).toString());
          bodies.put(
              name + " beyond any integer",
              valid
                  .deepCopy()
                  .put(name, new java.math.BigInteger("1" + "0".repeat(30)))
                  .toString());
          if (spec.has("maximum")) {
            bodies.put(
                name + " above its maximum",
                valid.deepCopy().put(name, spec.path("maximum").asLong() + 1).toString());
          }
          if (spec.has("minimum")) {
            bodies.put(
                name + " below its minimum",
                valid.deepCopy().put(name, spec.path("minimum").asLong() - 1).toString());
          }
        }
        case "boolean" -> {
          bodies.put(name + " as a string", valid.deepCopy().put(name, "true").toString());
          bodies.put(name + " as a number", valid.deepCopy().put(name, 1).toString());
        }
        default -> {
          // JsonValue (the payload): any JSON value but null
          bodies.put(name + " as null", valid.deepCopy().putNull(name).toString());
        }
      }
    }
    for (JsonNode required : schema.path("required")) {
      ObjectNode without = valid.deepCopy();
      without.remove(required.asText());
      bodies.put("without " + required.asText(), without.toString());
    }
    return bodies;
  }

  /** A body that the endpoint would accept: every property with a valid value. */
  private ObjectNode validBody(JsonNode document, JsonNode schema, String token) {
    ObjectNode body = json.createObjectNode();
    for (Iterator<Map.Entry<String, JsonNode>> properties = schema.path("properties").fields();
        properties.hasNext(); ) {
      Map.Entry<String, JsonNode> property = properties.next();
      JsonNode spec = resolve(document, property.getValue());
      switch (property.getKey()) {
        case "claimToken" -> body.put("claimToken", token);
        case "runAt" -> body.put("runAt", "2026-01-01T00:00:00Z");
        case "waitSeconds" -> body.put("waitSeconds", 0);
        default -> {
          switch (spec.path("type").asText("")) {
            case "string" -> body.put(property.getKey(), "x");
            case "integer" ->
                body.put(property.getKey(), Math.max(1, spec.path("minimum").asLong(1)));
            case "boolean" -> body.put(property.getKey(), true);
            default -> body.put(property.getKey(), 1);
          }
        }
      }
    }
    return body;
  }

  private static JsonNode resolve(JsonNode document, JsonNode schema) {
    String ref = schema.path("$ref").asText("");
    if (ref.startsWith("#/components/schemas/")) {
      return document
          .path("components")
          .path("schemas")
          .path(ref.substring("#/components/schemas/".length()));
    }
    return schema;
  }

  private static String snapshot(String queue) {
    return given()
        .queryParam("queue", queue)
        .queryParam("limit", 500)
        .get("/v1/items")
        .then()
        .statusCode(200)
        .extract()
        .asString();
  }
}
