package dev.claimq.api;

import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.uniqueQueue;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.claimq.AsAdmin;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Every request body example of the committed document, sent as it is shown, as the Swagger UI's
 * "Try it out" sends it: none may be refused as malformed (a 400 or 422), since an operator copies
 * them. An example with a claim token is a stale claim (409) until a real claim's is pasted in; one
 * with item ids names items that may not exist here. The Swagger UI made up the bodies that had no
 * example from the schema's bounds: a policy of one attempt and one-second leases, accepted.
 */
@QuarkusTest
class RequestExamplesTest extends AsAdmin {
  @Test
  void every_request_example_is_taken_as_it_is_shown() throws Exception {
    JsonNode document =
        new ObjectMapper().readTree(Files.readString(Path.of("openapi", "openapi.json")));
    String queue = uniqueQueue("examples");
    List<String> refused = new ArrayList<>();
    int sent = 0;
    for (Iterator<Map.Entry<String, JsonNode>> paths = document.path("paths").fields();
        paths.hasNext(); ) {
      Map.Entry<String, JsonNode> path = paths.next();
      for (Iterator<Map.Entry<String, JsonNode>> operations = path.getValue().fields();
          operations.hasNext(); ) {
        Map.Entry<String, JsonNode> operation = operations.next();
        JsonNode body = operation.getValue().path("requestBody");
        JsonNode examples = body.path("content").path("application/json");
        if (!body.isMissingNode() && examples.path("examples").isEmpty()) {
          // Without one, the Swagger UI makes a body up from the schema's bounds.
          refused.add(operation.getValue().path("operationId").asText() + ": no example");
        }
        for (Iterator<Map.Entry<String, JsonNode>> each = examples.path("examples").fields();
            each.hasNext(); ) {
          Map.Entry<String, JsonNode> example = each.next();
          // An item of its own for each, so that one example's change is not another's state.
          String id = enqueued(queue, "example-" + sent, Map.of("to", "ada@example.com"));
          String target = path.getKey().replace("{queue}", queue).replace("{id}", id);
          Response answer =
              given()
                  .contentType(ContentType.JSON)
                  .body(example.getValue().path("value").toString())
                  .request(operation.getKey(), target);
          sent++;
          int status = answer.statusCode();
          if (status == 400 || status == 422 || status == 415 || status >= 500) {
            refused.add(
                operation.getValue().path("operationId").asText()
                    + " '"
                    + example.getKey()
                    + "': "
                    + status
                    + " "
                    + answer.asString());
          }
        }
      }
    }
    assertThat(sent).as("examples sent").isGreaterThanOrEqualTo(21);
    assertThat(refused).as("examples refused").isEmpty();
  }
}
