package dev.claimq.api;

import static dev.claimq.Api.problem;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.anyOf;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.nullValue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.claimq.AsAdmin;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Errors that come from HTTP itself are problem+json too, and give nothing away. */
@QuarkusTest
class ProblemTest extends AsAdmin {

  @Test
  void an_unknown_path_is_a_404_problem() {
    problem(given().get("/v1/nowhere"), 404, "about:blank");
  }

  @Test
  void a_wrong_method_is_a_405_problem_that_says_what_is_allowed() {
    // RFC 9110, 15.5.6: a 405 names the methods the resource takes; it named none.
    problem(given().delete("/v1/queues/emails/items"), 405, "about:blank")
        .header("Allow", "OPTIONS, POST")
        .body("detail", containsString("OPTIONS, POST"));
    problem(given().post("/v1/items/x/attempts"), 405, "about:blank")
        .header("Allow", "GET, HEAD, OPTIONS");
    // OPTIONS answers the same Allow; it answered every method of the resource class, and 200
    // on paths that do not exist.
    given()
        .options("/v1/items/x/attempts")
        .then()
        .statusCode(200)
        .header("Allow", "GET, HEAD, OPTIONS");
    given().options("/v1/me").then().statusCode(200).header("Allow", "GET, HEAD, OPTIONS");
    problem(given().options("/v1/nowhere"), 404, "about:blank");
    // An id holding %2F is one segment, as routing reads it: GET /v1/items/{id} takes it.
    problem(given().urlEncodingEnabled(false).post("/v1/items/1%2Fcomplete"), 405, "about:blank")
        .header("Allow", "GET, HEAD, OPTIONS");
    problem(given().urlEncodingEnabled(false).post("/v1/items/%2F"), 405, "about:blank")
        .header("Allow", "GET, HEAD, OPTIONS");
  }

  @Test
  void every_path_of_the_document_names_its_methods_in_a_405() throws Exception {
    JsonNode paths =
        new ObjectMapper()
            .readTree(given().queryParam("format", "json").get("/q/openapi").asString())
            .get("paths");
    List<String> wrong = new ArrayList<>();
    for (Map.Entry<String, JsonNode> path : paths.properties()) {
      Set<String> documented = new TreeSet<>();
      path.getValue()
          .fieldNames()
          .forEachRemaining(m -> documented.add(m.toUpperCase(Locale.ROOT)));
      documented.retainAll(Set.of("GET", "PUT", "POST", "DELETE", "PATCH"));
      if (documented.contains("GET")) {
        documented.add("HEAD");
      }
      documented.add("OPTIONS");
      String method =
          Stream.of("PATCH", "DELETE", "PUT", "POST")
              .filter(m -> !documented.contains(m))
              .findFirst()
              .orElseThrow();
      String concrete = path.getKey().replaceAll("\\{[^}]+}", "x");
      Response response = given().request(method, concrete);
      String allow = response.header("Allow");
      if (response.statusCode() != 405 || !String.join(", ", documented).equals(allow)) {
        wrong.add(method + " " + concrete + ": " + response.statusCode() + ", Allow " + allow);
      }
      Response options = given().options(concrete);
      if (!String.join(", ", documented).equals(options.header("Allow"))) {
        wrong.add("OPTIONS " + concrete + ": Allow " + options.header("Allow"));
      }
    }
    assertThat(paths.size()).isGreaterThan(20);
    assertThat(wrong).isEmpty();
  }

  @Test
  void a_wrong_method_on_the_console_is_a_405_problem_that_says_what_is_allowed() {
    // The console's files are there: a POST of one was answered 404, no such resource.
    for (String path : List.of("/console/", "/console", "/console/console.css")) {
      problem(given().post(path), 405, "about:blank")
          .header("Allow", "GET, HEAD")
          .body("detail", containsString("GET"));
      given().get(path).then().statusCode(anyOf(equalTo(200), equalTo(301)));
    }
    problem(given().delete("/console/index.html"), 405, "about:blank");
    // Where there is no such file, there is no resource to allow a method on.
    problem(given().post("/console/nowhere.js"), 404, "about:blank");
  }

  @Test
  void a_body_that_is_not_json_is_a_415_problem() {
    problem(
        given().contentType(ContentType.TEXT).body("hi").post("/v1/queues/emails/items"),
        415,
        "about:blank");
  }

  @Test
  void malformed_json_answers_where_it_broke_without_internals() {
    problem(
            given()
                .contentType(ContentType.JSON)
                .body("{\"dedupeKey\": \"k\",\n \"payload\": {")
                .post("/v1/queues/emails/items"),
            400,
            "malformed-request")
        .body("detail", containsString("line 2"))
        .body("detail", not(containsString("jackson")))
        .body("detail", not(containsString("Exception")));
  }

  @Test
  void a_whole_number_past_its_type_names_the_fields_range() {
    // It was "The value of 'priority' cannot be read."
    problem(
            given()
                .contentType(ContentType.JSON)
                .body("{\"dedupeKey\": \"k\", \"payload\": 1, \"priority\": 2147483648}")
                .post("/v1/queues/emails/items"),
            400,
            "malformed-request")
        .body("errors[0].field", equalTo("priority"))
        .body("errors[0].message", equalTo("must be a whole number from -32768 to 32767"));
    problem(
            given()
                .contentType(ContentType.JSON)
                .body(
                    "{\"items\": [{\"id\": \"1\", \"claimToken\": \"t\", \"error\": \"e\","
                        + " \"retryAfterSeconds\": 99999999999999999999}]}")
                .post("/v1/items:fail"),
            400,
            "malformed-request")
        .body("errors[0].field", equalTo("items[0].retryAfterSeconds"))
        .body("errors[0].message", equalTo("must be a whole number from 0 to 86400"));
  }

  @Test
  void a_lone_surrogate_in_a_payload_key_names_where_the_key_is() {
    // It was "The body is not valid JSON (line 1, column 38).", naming no field.
    problem(
            given()
                .contentType(ContentType.JSON)
                .body(
                    "{\"dedupeKey\": \"s\", \"payload\": {\"to\": [{\"a\": 1, \"k\\ud800\": 1}]}}")
                .post("/v1/queues/emails/items"),
            400,
            "invalid-request")
        .body("errors[0].field", equalTo("payload.to[0]"))
        .body("detail", containsString("lone surrogate"));
    problem(
            given()
                .contentType(ContentType.JSON)
                .body("{\"dedupeKey\": \"s\", \"pay\\udc00\": 1}")
                .post("/v1/queues/emails/items"),
            400,
            "invalid-request")
        .body("errors[0].field", equalTo("body"));
  }

  @Test
  void a_second_json_value_after_the_body_is_named_as_such() {
    // It was "The body must be a JSON object.", which the first value is.
    problem(
            given()
                .contentType(ContentType.JSON)
                .body("{\"dedupeKey\": \"k\", \"payload\": 1} {}")
                .post("/v1/queues/emails/items"),
            400,
            "malformed-request")
        .body("detail", containsString("more than one JSON value"))
        .body("detail", containsString("line 1, column"));
  }

  @Test
  void a_body_that_parses_but_does_not_fit_names_its_field_in_errors() {
    problem(
            given()
                .contentType(ContentType.JSON)
                .body("{\"dedupeKey\": \"k\", \"payload\": 1, \"maxAttempts\": 1.5}")
                .post("/v1/queues/emails/items"),
            400,
            "malformed-request")
        .body("errors[0].field", equalTo("maxAttempts"))
        .body("errors[0].message", equalTo("must be a whole number"));
    problem(
            given()
                .contentType(ContentType.JSON)
                .body("{\"dedupeKey\": \"k\", \"payload\": 1, \"maxAtempts\": 2}")
                .post("/v1/queues/emails/items"),
            400,
            "malformed-request")
        .body("errors[0].field", equalTo("maxAtempts"));
    // Broken JSON names no field: it never got as far as one.
    problem(
            given().contentType(ContentType.JSON).body("{").post("/v1/queues/emails/items"),
            400,
            "malformed-request")
        .body("errors", nullValue());
  }

  @Test
  void readiness_reports_the_database() {
    given().get("/q/health/ready").then().statusCode(200).body(containsString("UP"));
  }
}
