package dev.claimq.api;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.claimq.AsAdmin;
import io.quarkus.test.junit.QuarkusTest;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The OpenAPI document committed under openapi/ must be the one the code generates, so the API a
 * reader sees in the repository is the API that runs. To refresh it after changing the API, run
 * ./mvnw package -DskipTests (the build writes openapi/) and commit the result.
 */
@QuarkusTest
class OpenApiDocumentTest extends AsAdmin {
  private static final String REFRESH =
      "openapi/ is out of date: run ./mvnw package -DskipTests and commit openapi/";

  @Test
  void the_committed_json_document_is_the_generated_one() throws Exception {
    ObjectMapper mapper = new ObjectMapper();
    JsonNode committed = mapper.readTree(Files.readString(Path.of("openapi", "openapi.json")));
    JsonNode served =
        mapper.readTree(given().queryParam("format", "json").get("/q/openapi").asString());
    assertThat(served).as(REFRESH).isEqualTo(committed);
  }

  @Test
  void the_committed_yaml_document_is_the_generated_one() throws Exception {
    ObjectMapper yaml = new YAMLMapper();
    JsonNode committed = yaml.readTree(Files.readString(Path.of("openapi", "openapi.yaml")));
    JsonNode served = yaml.readTree(given().get("/q/openapi").asString());
    assertThat(served).as(REFRESH).isEqualTo(committed);
  }

  @Test
  void swagger_ui_is_served() {
    given().get("/q/swagger-ui/").then().statusCode(200).body(containsString("swagger"));
  }
}
