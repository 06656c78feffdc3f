package dev.claimq.api;

import static dev.claimq.Api.claim;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.fail;
import static dev.claimq.Api.uniqueQueue;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import dev.claimq.AsAdmin;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Real answers of every operation, success and error alike, checked against the committed document:
 * the status must be one the operation documents, the Content-Type the documented one, and the body
 * must validate against the documented schema (JSON Schema 2020-12, OpenAPI 3.1's dialect), nulls,
 * required fields and all. The examples are checked by the linters; this checks what the service
 * really sends.
 */
@QuarkusTest
class ResponsesMatchTheDocumentTest extends AsAdmin {
  private final ObjectMapper json = new ObjectMapper();
  private final JsonSchemaFactory schemas =
      JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012);
  private final List<String> mismatches = new ArrayList<>();
  private final Set<String> checked = new TreeSet<>();
  private JsonNode document;

  /** The statuses the document's default response describes: the HTTP layer's refusals. */
  private static final Set<Integer> HTTP_LAYER = Set.of(414, 417, 431, 501);

  @Test
  void every_operation_answers_as_the_document_says() throws Exception {
    document = json.readTree(Files.readString(Path.of("openapi", "openapi.json")));
    String queue = uniqueQueue("contract");
    String other = uniqueQueue("contract-empty");
    String items = "/v1/queues/" + queue + "/items";

    Response created =
        check("post", "/v1/queues/{queue}/items", as().body(enqueue("a")).post(items));
    String id = created.path("id");
    check("post", "/v1/queues/{queue}/items", as().body(enqueue("a")).post(items));
    check(
        "post",
        "/v1/queues/{queue}/items",
        as().body(Map.of("dedupeKey", "a", "payload", 2)).post(items));
    check("post", "/v1/queues/{queue}/items", as().body(Map.of("payload", 2)).post(items));
    check(
        "post",
        "/v1/queues/{queue}/items",
        as().body(Map.of("dedupeKey", "big", "payload", "x".repeat(300_000))).post(items));
    check(
        "post",
        "/v1/queues/{queue}/items",
        as().body(enqueue("a")).post("/v1/queues/NOT_A_NAME/items"));
    check(
        "post",
        "/v1/queues/{queue}/items",
        given()
            .body(enqueue("a"))
            .contentType(ContentType.JSON)
            .header("Authorization", "Bearer nope")
            .post(items));
    check(
        "post",
        "/v1/queues/{queue}/items",
        given()
            .body(enqueue("a"))
            .contentType(ContentType.JSON)
            .header("Authorization", "Bearer dev-worker-key")
            .post(items));
    check(
        "post",
        "/v1/queues/{queue}/items",
        as().accept("text/plain").body(enqueue("a2")).post(items));
    check(
        "post",
        "/v1/queues/{queue}/items",
        as().contentType("application/json; charset=ISO-8859-1").body("{}").post(items));
    check(
        "post",
        "/v1/queues/{queue}/items",
        as().header("Content-Encoding", "gzip").body(enqueue("a3")).post(items));
    check(
        "post",
        "/v1/queues/{queue}/claim",
        as().contentType("text/plain").body("{}").post("/v1/queues/" + queue + "/claim"));
    check(
        "post",
        "/v1/queues/{queue}/items:batch",
        as().body(Map.of("items", List.of(enqueue("b"), enqueue("c"), enqueue("d"))))
            .post(items + ":batch"));
    check(
        "post",
        "/v1/queues/{queue}/items:batch",
        as().body(Map.of("items", List.of())).post(items + ":batch"));

    Response claimed =
        check(
            "post",
            "/v1/queues/{queue}/claim",
            as().body(Map.of("worker", "w")).post("/v1/queues/" + queue + "/claim"));
    String token = claimed.path("claimToken");
    check(
        "post",
        "/v1/queues/{queue}/claim",
        as().body(Map.of("worker", "w")).post("/v1/queues/" + other + "/claim"));
    check(
        "post",
        "/v1/queues/{queue}/claim",
        as().body(Map.of("leaseSeconds", 0)).post("/v1/queues/" + other + "/claim"));
    Response batch =
        check(
            "post",
            "/v1/queues/{queue}/claim:batch",
            as().body(Map.of("max", 2)).post("/v1/queues/" + queue + "/claim:batch"));
    check(
        "post",
        "/v1/queues/{queue}/claim:batch",
        as().body(Map.of("max", 2)).post("/v1/queues/" + other + "/claim:batch"));
    check(
        "post",
        "/v1/queues/{queue}/claim:batch",
        as().body(Map.of("max", 0)).post("/v1/queues/" + other + "/claim:batch"));
    String last = enqueue(queue, "e");
    check("post", "/v1/items/{id}/claim", as().body(Map.of()).post("/v1/items/" + id + "/claim"));
    Response held =
        check(
            "post",
            "/v1/items/{id}/claim",
            as().body(Map.of("worker", "w")).post("/v1/items/" + last + "/claim"));
    check("post", "/v1/items/{id}/claim", as().body(Map.of()).post("/v1/items/999999999999/claim"));

    check(
        "post",
        "/v1/items/{id}/heartbeat",
        as().body(Map.of("claimToken", token)).post("/v1/items/" + id + "/heartbeat"));
    check(
        "post",
        "/v1/items/{id}/heartbeat",
        as().body(Map.of("claimToken", "stale")).post("/v1/items/" + id + "/heartbeat"));
    check(
        "post",
        "/v1/items/{id}/complete",
        as().body(Map.of("claimToken", token, "externalRef", "m"))
            .post("/v1/items/" + id + "/complete"));
    check(
        "post",
        "/v1/items/{id}/complete",
        as().body(Map.of("claimToken", "stale")).post("/v1/items/" + id + "/complete"));
    check(
        "post",
        "/v1/items/{id}/complete",
        as().body(Map.of()).post("/v1/items/" + id + "/complete"));
    String heldToken = held.path("claimToken");
    check(
        "post",
        "/v1/items/{id}/fail",
        as().body(Map.of("claimToken", heldToken, "error", "e", "retryable", false))
            .post("/v1/items/" + last + "/fail"));
    check(
        "post",
        "/v1/items/{id}/fail",
        as().body(Map.of("claimToken", "x", "error", "e")).post("/v1/items/999999999999/fail"));
    List<Map<String, Object>> pair = batch.path("items");
    check(
        "post",
        "/v1/items:complete",
        as().body(
                Map.of(
                    "items",
                    List.of(
                        Map.of(
                            "id",
                            pair.get(0).get("id"),
                            "claimToken",
                            pair.get(0).get("claimToken")),
                        Map.of("id", "999999999999", "claimToken", "x"))))
            .post("/v1/items:complete"));
    check(
        "post",
        "/v1/items:fail",
        as().body(
                Map.of(
                    "items",
                    List.of(
                        Map.of(
                            "id",
                            pair.get(1).get("id"),
                            "claimToken",
                            pair.get(1).get("claimToken"),
                            "error",
                            "e"))))
            .post("/v1/items:fail"));
    check(
        "post",
        "/v1/items:fail",
        as().body(Map.of("items", List.of(Map.of("id", "1")))).post("/v1/items:fail"));

    check(
        "get",
        "/v1/items",
        as().queryParam("queue", queue).queryParam("limit", 2).get("/v1/items"));
    check(
        "get",
        "/v1/items",
        as().queryParam("queue", queue).queryParam("state", "failed").get("/v1/items"));
    check("get", "/v1/items", as().queryParam("limit", 0).get("/v1/items"));
    check("get", "/v1/items/{id}", as().get("/v1/items/" + id));
    check("get", "/v1/items/{id}", as().get("/v1/items/" + last));
    check("get", "/v1/items/{id}", as().get("/v1/items/nope"));
    check("get", "/v1/items/{id}/attempts", as().get("/v1/items/" + last + "/attempts"));
    check("get", "/v1/items/{id}/attempts", as().get("/v1/items/999999999999/attempts"));
    // An open attempt: its outcome and finishedAt are null.
    String open = enqueued(queue, "open", 1);
    claim(open, Map.of("worker", "w1")).then().statusCode(200);
    check("get", "/v1/items/{id}/attempts", as().get("/v1/items/" + open + "/attempts"));
    // Any call's body may pass the service's byte limit, a worker's report too.
    check(
        "post",
        "/v1/items/{id}/fail",
        as().body("{\"claimToken\":\"t\",\"error\":\"" + "x".repeat(1_100_000) + "\"}")
            .post("/v1/items/" + open + "/fail"));
    check("post", "/v1/items/{id}/retry", as().post("/v1/items/" + last + "/retry"));
    check("post", "/v1/items/{id}/retry", as().post("/v1/items/" + id + "/retry"));
    check("post", "/v1/items/{id}/cancel", as().post("/v1/items/" + last + "/cancel"));
    check("post", "/v1/items/{id}/cancel", as().post("/v1/items/" + id + "/cancel"));
    check("get", "/v1/items/{id}/actions", as().get("/v1/items/" + last + "/actions"));
    check("get", "/v1/queues", as().get("/v1/queues"));
    check("get", "/v1/me", as().get("/v1/me"));
    check("get", "/v1/items:search", as().queryParam("q", id).get("/v1/items:search"));
    check("get", "/v1/items:search", as().get("/v1/items:search"));
    // Refused by the HTTP layer before any operation: each operation's default response.
    check(
        "get", "/v1/items:search", as().queryParam("q", "a".repeat(9000)).get("/v1/items:search"));
    check("get", "/v1/me", as().header("X-Large", "a".repeat(21_000)).get("/v1/me"));
    check(
        "post",
        "/v1/queues/{queue}/items",
        as().header("Expect", "later").body(enqueue("e")).post(items));
    check(
        "get",
        "/v1/items",
        as().queryParam("reason", "x").queryParam("updatedAfter", "now").get("/v1/items"));
    check(
        "post",
        "/v1/items:retry",
        as().body(Map.of("queue", queue, "dryRun", true)).post("/v1/items:retry"));
    check("post", "/v1/items:retry", as().body(Map.of("state", "done")).post("/v1/items:retry"));
    check(
        "post",
        "/v1/items:cancel",
        as().body(Map.of("queue", queue, "dryRun", true)).post("/v1/items:cancel"));
    check("post", "/v1/items:cancel", as().body(Map.of("limit", 0)).post("/v1/items:cancel"));

    // The approval gate, on a queue of its own that requires it.
    String gate = uniqueQueue("contract-gate");
    check(
        "put",
        "/v1/queues/{queue}/policy",
        as().body(Map.of("requireApproval", true)).put("/v1/queues/" + gate + "/policy"));
    String approved = enqueue(gate, "approved");
    String rejected = enqueue(gate, "rejected");
    String approve = "/v1/items/" + approved + "/approve";
    check("post", "/v1/items/{id}/approve", as().body(Map.of("note", "ok")).post(approve));
    check("post", "/v1/items/{id}/approve", as().body(Map.of()).post(approve));
    String reject = "/v1/items/" + rejected + "/reject";
    check("post", "/v1/items/{id}/reject", as().body(Map.of()).post(reject));
    check("post", "/v1/items/{id}/reject", as().body(Map.of("reason", "no")).post(reject));
    check(
        "post",
        "/v1/items:approve",
        as().body(Map.of("queue", gate, "dryRun", true)).post("/v1/items:approve"));
    check(
        "post",
        "/v1/items:reject",
        as().body(Map.of("queue", gate, "reason", "no")).post("/v1/items:reject"));
    check("post", "/v1/items:reject", as().body(Map.of("queue", gate)).post("/v1/items:reject"));
    check(
        "post",
        "/v1/items/{id}/retry",
        given().header("Authorization", "Bearer dev-agent-key").post("/v1/items/" + id + "/retry"));

    // Intent, release and resolve, on an item of their own.
    String fresh = enqueued(queue, "fresh", 1);
    String freshToken = claim(fresh, Map.of()).path("claimToken");
    String intent = "/v1/items/" + fresh + "/intent";
    check(
        "post", "/v1/items/{id}/intent", as().body(Map.of("claimToken", freshToken)).post(intent));
    check("post", "/v1/items/{id}/intent", as().body(Map.of("claimToken", "x")).post(intent));
    check("post", "/v1/items/{id}/intent", as().body(Map.of()).post(intent));
    String release = "/v1/items/" + fresh + "/release";
    check("post", "/v1/items/{id}/release", as().body(Map.of("claimToken", "x")).post(release));
    check(
        "post",
        "/v1/items/{id}/release",
        as().body(Map.of("claimToken", freshToken)).post(release));
    String failedToken = claim(fresh, Map.of()).path("claimToken");
    fail(fresh, Map.of("claimToken", failedToken, "error", "e", "retryable", false));
    String resolve = "/v1/items/" + fresh + "/resolve";
    check("post", "/v1/items/{id}/resolve", as().body(Map.of("note", "confirmed")).post(resolve));
    check("post", "/v1/items/{id}/resolve", as().body(Map.of("note", "again")).post(resolve));
    check("post", "/v1/items/{id}/resolve", as().body(Map.of("note", 1)).post(resolve));

    // A queue's policy, pause and resume, and their log.
    String policy = "/v1/queues/" + queue + "/policy";
    check("get", "/v1/queues/{queue}/policy", as().get(policy));
    check("put", "/v1/queues/{queue}/policy", as().body(Map.of("maxAttempts", 3)).put(policy));
    check("put", "/v1/queues/{queue}/policy", as().body(Map.of("maxAttempts", 0)).put(policy));
    check("get", "/v1/queues/{queue}/policy", as().get(policy));
    check("post", "/v1/queues/{queue}/pause", as().post("/v1/queues/" + queue + "/pause"));
    check("post", "/v1/queues/{queue}/resume", as().post("/v1/queues/" + queue + "/resume"));
    check("get", "/v1/queues/{queue}/actions", as().get("/v1/queues/" + queue + "/actions"));
    check("get", "/v1/queues/{queue}/policy", as().get("/v1/queues/NOT_A_NAME/policy"));

    assertThat(mismatches).as("answers that the document does not describe").isEmpty();
    assertThat(checked).as("operations checked").containsAll(operations());
  }

  private RequestSpecification as() {
    return given().contentType(ContentType.JSON).urlEncodingEnabled(false);
  }

  private static Map<String, Object> enqueue(String key) {
    return Map.of("dedupeKey", key, "payload", Map.of("n", key));
  }

  private static String enqueue(String queue, String key) {
    return given()
        .contentType(ContentType.JSON)
        .body(enqueue(key))
        .post("/v1/queues/{queue}/items", queue)
        .then()
        .statusCode(201)
        .extract()
        .path("id");
  }

  /** Checks one answer against the operation's documented response for its status. */
  private Response check(String method, String path, Response response) throws Exception {
    String where = method.toUpperCase() + " " + path + " → " + response.statusCode();
    checked.add(method + " " + path);
    JsonNode operation = document.path("paths").path(path).path(method);
    assertThat(operation.isMissingNode()).as(method + " " + path + " is in the document").isFalse();
    JsonNode responses = operation.path("responses");
    JsonNode documented = resolve(responses.path(String.valueOf(response.statusCode())));
    if (documented.isMissingNode() && HTTP_LAYER.contains(response.statusCode())) {
      documented = resolve(responses.path("default")); // what its description names
    }
    if (documented.isMissingNode()) {
      mismatches.add(where + ": status not documented");
      return response;
    }
    JsonNode content = documented.path("content");
    if (content.isMissingNode() || content.isEmpty()) {
      if (!response.asString().isEmpty()) {
        mismatches.add(where + ": a body where none is documented");
      }
      return response;
    }
    String type = String.valueOf(response.contentType()).split(";")[0].strip();
    JsonNode media = content.path(type);
    if (media.isMissingNode()) {
      mismatches.add(where + ": Content-Type " + type + ", documented " + fieldNames(content));
      return response;
    }
    ObjectNode schema = json.createObjectNode();
    schema.put("$schema", "https://json-schema.org/draft/2020-12/schema");
    schema.set("allOf", json.createArrayNode().add(media.path("schema")));
    schema.set("components", document.path("components")); // so that #/components/... resolves
    Set<ValidationMessage> errors =
        schemas.getSchema(schema).validate(json.readTree(response.asString()));
    for (ValidationMessage error : errors) {
      mismatches.add(where + ": " + error.getMessage());
    }
    return response;
  }

  private JsonNode resolve(JsonNode response) {
    String ref = response.path("$ref").asText("");
    return ref.isEmpty()
        ? response
        : document
            .path("components")
            .path("responses")
            .path(ref.substring(ref.lastIndexOf('/') + 1));
  }

  private Set<String> operations() {
    Set<String> all = new LinkedHashSet<>();
    for (Iterator<Map.Entry<String, JsonNode>> paths = document.path("paths").fields();
        paths.hasNext(); ) {
      Map.Entry<String, JsonNode> path = paths.next();
      path.getValue()
          .fieldNames()
          .forEachRemaining(method -> all.add(method + " " + path.getKey()));
    }
    return all;
  }

  private static List<String> fieldNames(JsonNode node) {
    List<String> names = new ArrayList<>();
    node.fieldNames().forEachRemaining(names::add);
    return names;
  }
}
