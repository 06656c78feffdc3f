package dev.claimq.api;

import static dev.claimq.Api.claimedNext;
import static dev.claimq.Api.complete;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.claimq.AsAdmin;
import dev.claimq.PlainHttp;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.net.URI;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Every endpoint with every kind of caller, asserting the exact status: no key, an unknown key,
 * another scheme, each role, and a key with every role limited to another queue. Every answer,
 * refusals too, says that no cache may keep it. Calls go over a plain HTTP client so that no
 * default key leaks in.
 */
@QuarkusTest
class SecurityTest extends AsAdmin {
  private static final Map<String, String> CALLERS = new LinkedHashMap<>();

  static {
    CALLERS.put("none", null);
    CALLERS.put("unknown", "Bearer not-a-key");
    CALLERS.put("basic", "Basic ZGV2LWFkbWluLWtleTo=");
    CALLERS.put("agent", "Bearer dev-agent-key");
    CALLERS.put("worker", "Bearer dev-worker-key");
    CALLERS.put("operator", "Bearer dev-operator-key");
    CALLERS.put("elsewhere", "Bearer test-elsewhere-key");
  }

  @TestHTTPResource("/")
  URI base;

  private PlainHttp http;
  private final ObjectMapper json = new ObjectMapper();

  private String queue;
  private String emptyQueue;
  private String pendingLater;
  private String done;

  /** One endpoint call, and the status each caller must get. */
  private record Case(String method, String path, String body, Map<String, Integer> expected) {}

  @BeforeEach
  void fixtures() {
    http = new PlainHttp(base);
    queue = uniqueQueue("secured");
    emptyQueue = uniqueQueue("secured-empty");
    pendingLater =
        enqueued(
            queue, Map.of("dedupeKey", "later", "payload", 1, "runAt", "2099-01-01T00:00:00Z"));
    done = enqueued(queue, "done", 1);
    complete(done, Map.of("claimToken", claimedNext(queue, "w").path("claimToken")))
        .then()
        .statusCode(200);
  }

  @Test
  void every_endpoint_answers_each_caller_with_the_exact_status() throws Exception {
    List<Case> cases =
        List.of(
            new Case(
                "POST",
                "/v1/queues/" + queue + "/items",
                "{\"dedupeKey\":\"k-${caller}\",\"payload\":1}",
                only("agent", 201)),
            new Case("POST", "/v1/queues/" + emptyQueue + "/claim", "{}", only("worker", 204)),
            new Case(
                "POST",
                "/v1/queues/" + queue + "/items:batch",
                "{\"items\":[{\"dedupeKey\":\"batch-${caller}\",\"payload\":1}]}",
                only("agent", 200)),
            new Case(
                "POST", "/v1/queues/" + emptyQueue + "/claim", "{\"max\":5}", only("worker", 204)),
            new Case(
                "POST",
                "/v1/queues/" + emptyQueue + "/claim:batch",
                "{\"max\":5}",
                only("worker", 204)),
            new Case(
                "POST",
                "/v1/items:complete",
                "{\"items\":[{\"id\":\"" + pendingLater + "\",\"claimToken\":\"x\"}]}",
                otherQueueItem(only("worker", 200), 200)),
            new Case(
                "POST",
                "/v1/items:fail",
                "{\"items\":[{\"id\":\""
                    + pendingLater
                    + "\",\"claimToken\":\"x\",\"error\":\"e\"}]}",
                otherQueueItem(only("worker", 200), 200)),
            new Case(
                "POST",
                "/v1/items/" + pendingLater + "/claim",
                "{}",
                otherQueueItem(only("worker", 204), 404)),
            new Case(
                "POST",
                "/v1/items/" + pendingLater + "/heartbeat",
                "{\"claimToken\":\"x\"}",
                otherQueueItem(only("worker", 409), 404)),
            new Case(
                "POST",
                "/v1/items/" + pendingLater + "/complete",
                "{\"claimToken\":\"x\"}",
                otherQueueItem(only("worker", 409), 404)),
            new Case(
                "POST",
                "/v1/items/" + pendingLater + "/fail",
                "{\"claimToken\":\"x\",\"error\":\"e\"}",
                otherQueueItem(only("worker", 409), 404)),
            new Case(
                "GET",
                "/v1/items/" + pendingLater,
                null,
                otherQueueItem(roles(Map.of("agent", 200, "worker", 200, "operator", 200)), 404)),
            new Case("GET", "/v1/items?queue=" + queue, null, everyone(200)),
            new Case("GET", "/v1/items:search?q=" + done, null, otherQueueItem(everyone(200), 200)),
            new Case(
                "GET", "/v1/items/" + done + "/attempts", null, otherQueueItem(everyone(200), 404)),
            new Case(
                "GET", "/v1/items/" + done + "/actions", null, otherQueueItem(everyone(200), 404)),
            new Case("GET", "/v1/queues", null, otherQueueItem(everyone(200), 200)),
            new Case("GET", "/v1/queues/" + queue + "/policy", null, everyone(200)),
            new Case("GET", "/v1/queues/" + queue + "/actions", null, everyone(200)),
            new Case("PUT", "/v1/queues/" + queue + "/policy", "{}", only("operator", 200)),
            new Case("POST", "/v1/queues/" + queue + "/resume", null, only("operator", 200)),
            new Case(
                "POST",
                "/v1/items/" + done + "/retry",
                null,
                otherQueueItem(only("operator", 409), 404)),
            new Case(
                "POST",
                "/v1/items/" + done + "/cancel",
                null,
                otherQueueItem(only("operator", 409), 404)));

    List<String> wrong = new ArrayList<>();
    for (Case c : cases) {
      for (Map.Entry<String, String> caller : CALLERS.entrySet()) {
        int expected = c.expected().get(caller.getKey());
        HttpResponse<String> response = call(c, caller.getKey(), caller.getValue());
        if (response.statusCode() != expected) {
          wrong.add(
              c.method()
                  + " "
                  + c.path()
                  + " as "
                  + caller.getKey()
                  + ": "
                  + response.statusCode()
                  + ", expected "
                  + expected);
        } else if (expected >= 400 && expected != 409) {
          assertProblem(response, expected);
        }
        if (!response.headers().allValues("Cache-Control").equals(List.of("no-store"))) {
          wrong.add(c.method() + " " + c.path() + " as " + caller.getKey() + ": may be cached");
        }
      }
    }
    assertThat(wrong).isEmpty();
  }

  @Test
  void answers_outside_the_endpoints_table_are_kept_out_of_caches_too() throws Exception {
    String initialize =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
            + "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
            + "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";
    Map<String, java.net.http.HttpRequest.Builder> requests = new LinkedHashMap<>();
    requests.put(
        "MCP initialize",
        java.net.http.HttpRequest.newBuilder(base.resolve("/mcp"))
            .header("Authorization", "Bearer dev-agent-key")
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .POST(java.net.http.HttpRequest.BodyPublishers.ofString(initialize)));
    requests.put(
        "MCP without a key",
        java.net.http.HttpRequest.newBuilder(base.resolve("/mcp"))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .POST(java.net.http.HttpRequest.BodyPublishers.ofString(initialize)));
    requests.put(
        "304",
        java.net.http.HttpRequest.newBuilder(base.resolve("/v1/items/" + done))
            .header("Authorization", "Bearer dev-operator-key")
            .header("If-None-Match", "*"));
    requests.put(
        "a path spelled with a matrix parameter",
        java.net.http.HttpRequest.newBuilder(base.resolve("/v1;x=1/me"))
            .header("Authorization", "Bearer dev-operator-key"));
    requests.put(
        "414",
        java.net.http.HttpRequest.newBuilder(
            base.resolve("/v1/items?q=" + "a".repeat(HttpFraming.REQUEST_LINE_BYTES))));
    for (Map.Entry<String, java.net.http.HttpRequest.Builder> request : requests.entrySet()) {
      HttpResponse<String> response =
          java.net.http.HttpClient.newHttpClient()
              .send(request.getValue().build(), HttpResponse.BodyHandlers.ofString());
      assertThat(response.headers().allValues("Cache-Control"))
          .as(request.getKey() + ": " + response.statusCode())
          .containsExactly("no-store");
    }
    // The console's files hold no one's data: they keep their own rule.
    assertThat(get("/console/", null).headers().allValues("Cache-Control"))
        .containsExactly("no-cache");
  }

  @Test
  void a_key_limited_to_a_queue_sees_only_that_queue_in_listings() throws Exception {
    String mine = "elsewhere";
    enqueued(mine, Map.of("dedupeKey", uniqueQueue("k"), "payload", 1));

    HttpResponse<String> queues = get("/v1/queues", "Bearer test-elsewhere-key");
    assertThat(queues.statusCode()).isEqualTo(200);
    JsonNode listing = json.readTree(queues.body());
    assertThat(listing.path("queues")).hasSize(1);
    assertThat(listing.path("queues").path(0).path("queue").asText()).isEqualTo(mine);
    // Totals count the key's queues only, not every queue the service has.
    assertThat(listing.path("totals").path("queues").asInt()).isEqualTo(1);
    HttpResponse<String> items = get("/v1/items?limit=500", "Bearer test-elsewhere-key");
    assertThat(items.statusCode()).isEqualTo(200);
    for (JsonNode item : json.readTree(items.body()).path("items")) {
      assertThat(item.path("queue").asText()).isEqualTo(mine);
    }
    assertThat(get("/v1/items?queue=" + queue, "Bearer test-elsewhere-key").statusCode())
        .isEqualTo(403);
  }

  @Test
  void a_key_limited_to_a_queue_finishes_a_batch_of_that_queues_items() throws Exception {
    String key = "Bearer test-elsewhere-key";
    StringBuilder batch = new StringBuilder("{\"items\":[");
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      String id = enqueued("elsewhere", Map.of("dedupeKey", uniqueQueue("own"), "payload", i));
      HttpResponse<String> claimed = send("POST", "/v1/items/" + id + "/claim", "{}", key);
      assertThat(claimed.statusCode()).isEqualTo(200);
      String token = json.readTree(claimed.body()).path("claimToken").asText();
      batch.append(i == 0 ? "" : ",");
      batch.append("{\"id\":\"").append(id).append("\",\"claimToken\":\"").append(token);
      batch.append("\"}");
      ids.add(id);
    }
    batch.append("]}");

    HttpResponse<String> done = send("POST", "/v1/items:complete", batch.toString(), key);

    assertThat(done.statusCode()).isEqualTo(200);
    for (JsonNode result : json.readTree(done.body()).path("results")) {
      assertThat(result.path("status").asInt()).isEqualTo(200);
      assertThat(ids).contains(result.path("item").path("id").asText());
    }
    assertThat(json.readTree(done.body()).path("results").size()).isEqualTo(3);
  }

  @Test
  void a_403_for_a_missing_role_names_the_role_the_endpoint_needs() throws Exception {
    HttpResponse<String> agentClaims =
        send("POST", "/v1/queues/" + emptyQueue + "/claim", "{}", "Bearer dev-agent-key");
    HttpResponse<String> workerRetries =
        send("POST", "/v1/items/" + done + "/retry", null, "Bearer dev-worker-key");
    HttpResponse<String> operatorReads = get("/v1/items/" + done, "Bearer dev-operator-key");

    assertThat(PlainHttp.assertProblem(agentClaims, 403).path("detail").asText())
        .endsWith("needs (worker).");
    assertThat(PlainHttp.assertProblem(workerRetries, 403).path("detail").asText())
        .endsWith("needs (operator).");
    assertThat(operatorReads.statusCode()).isEqualTo(200);
  }

  @Test
  void a_missing_or_unknown_key_is_a_401_problem_with_a_bearer_challenge() throws Exception {
    for (String authorization : new String[] {null, "Bearer nope", "Bearer ", "Token x"}) {
      HttpResponse<String> response = get("/v1/queues", authorization);
      assertProblem(response, 401);
      assertThat(response.headers().firstValue("WWW-Authenticate"))
          .hasValue("Bearer realm=\"claimq\"");
    }
  }

  @Test
  void two_authorization_headers_are_a_401_whichever_keys_they_carry() throws Exception {
    // Which key acts would be a guess, even when both are valid. A client that asks for HTTP/2
    // (Java's does, by default) is answered in HTTP/1.1: an h2c upgrade handed the service one of
    // the two headers.
    for (var version : java.net.http.HttpClient.Version.values()) {
      java.net.http.HttpResponse<String> response =
          java.net.http.HttpClient.newBuilder()
              .version(version)
              .build()
              .send(
                  java.net.http.HttpRequest.newBuilder(base.resolve("/v1/me"))
                      .header("Authorization", "Bearer dev-operator-key")
                      .header("Authorization", "Bearer dev-admin-key")
                      .build(),
                  java.net.http.HttpResponse.BodyHandlers.ofString());
      assertProblem(response, 401);
      assertThat(response.version()).isEqualTo(java.net.http.HttpClient.Version.HTTP_1_1);
    }
    assertThat(get("/v1/me", "Bearer dev-operator-key").statusCode()).isEqualTo(200);
  }

  @Test
  void health_and_the_api_document_need_no_key() throws Exception {
    assertThat(get("/q/health/ready", null).statusCode()).isEqualTo(200);
    assertThat(get("/q/health/live", null).statusCode()).isEqualTo(200);
    HttpResponse<String> document = get("/q/openapi", null);
    assertThat(document.statusCode()).isEqualTo(200);
    assertThat(document.body()).contains("bearer");
  }

  @Test
  void what_a_key_does_is_recorded_under_its_name() throws Exception {
    String q = uniqueQueue("who");
    HttpResponse<String> enqueued =
        send(
            "POST",
            "/v1/queues/" + q + "/items",
            "{\"dedupeKey\":\"k\",\"payload\":1}",
            "Bearer dev-agent-key");
    String id = json.readTree(enqueued.body()).path("id").asText();
    assertThat(json.readTree(enqueued.body()).path("enqueuedBy").asText()).isEqualTo("dev-agent");

    JsonNode claim =
        json.readTree(
            send("POST", "/v1/queues/" + q + "/claim", "{}", "Bearer dev-worker-key").body());
    String token = claim.path("claimToken").asText();
    send(
        "POST",
        "/v1/items/" + id + "/fail",
        "{\"claimToken\":\"" + token + "\",\"error\":\"x\",\"retryable\":false}",
        "Bearer dev-worker-key");
    send("POST", "/v1/items/" + id + "/retry", null, "Bearer dev-operator-key");
    send("POST", "/v1/items/" + id + "/cancel", null, "Bearer dev-operator-key");

    JsonNode attempts =
        json.readTree(get("/v1/items/" + id + "/attempts", "Bearer dev-operator-key").body());
    assertThat(attempts.path("attempts").get(0).path("finishedBy").asText())
        .isEqualTo("dev-worker");
    JsonNode actions =
        json.readTree(get("/v1/items/" + id + "/actions", "Bearer dev-operator-key").body());
    assertThat(actions.path("actions").findValuesAsText("action"))
        .containsExactly("retry", "cancel");
    assertThat(actions.path("actions").findValuesAsText("actor")).containsOnly("dev-operator");
  }

  private Map<String, Integer> only(String role, int status) {
    return roles(Map.of(role, status));
  }

  /**
   * To a key limited to another queue, an item of this queue is no such item (a 404, or a 404 per
   * entry of a batch), so it cannot tell which ids exist elsewhere.
   */
  private Map<String, Integer> otherQueueItem(Map<String, Integer> expected, int status) {
    Map<String, Integer> changed = new LinkedHashMap<>(expected);
    changed.put("elsewhere", status);
    return changed;
  }

  /** Every role may: 401 for no or bad keys, 403 for another queue. */
  private Map<String, Integer> everyone(int status) {
    return roles(Map.of("agent", status, "worker", status, "operator", status));
  }

  /** The authorized roles' statuses; 401 for no or bad keys, 403 for other roles and queues. */
  private Map<String, Integer> roles(Map<String, Integer> authorized) {
    Map<String, Integer> expected = new LinkedHashMap<>();
    expected.put("none", 401);
    expected.put("unknown", 401);
    expected.put("basic", 401);
    for (String role : List.of("agent", "worker", "operator")) {
      expected.put(role, authorized.getOrDefault(role, 403));
    }
    expected.put("elsewhere", 403);
    return expected;
  }

  private HttpResponse<String> call(Case c, String callerName, String authorization)
      throws Exception {
    String body = c.body() == null ? null : c.body().replace("${caller}", callerName);
    return send(c.method(), c.path(), body, authorization);
  }

  private HttpResponse<String> get(String path, String authorization) throws Exception {
    return send("GET", path, null, authorization);
  }

  private HttpResponse<String> send(String method, String path, String body, String authorization)
      throws Exception {
    return http.send(method, path, body, authorization);
  }

  private void assertProblem(HttpResponse<String> response, int status) throws Exception {
    PlainHttp.assertProblem(response, status);
  }
}
