package dev.claimq.mcp;

import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.claimq.LogCapture;
import io.agroal.api.AgroalDataSource;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;

/**
 * The agents' MCP server, through the official Java SDK's Streamable HTTP client, as an agent's
 * client talks to it: the tools, their idempotence, their refusals in the API's words, and the
 * keys' limits.
 */
@QuarkusTest
class McpTest {
  static final String AGENT = "dev-agent-key";
  static final String WORKER = "dev-worker-key";
  static final String ELSEWHERE = "test-elsewhere-key";

  @TestHTTPResource("/")
  URI root;

  @Inject AgroalDataSource database;

  McpSyncClient client(String key) {
    return McpClients.client(root, key);
  }

  static CallToolResult call(McpSyncClient client, String tool, Map<String, Object> arguments) {
    return client.callTool(new McpSchema.CallToolRequest(tool, arguments));
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> structured(CallToolResult result) {
    assertThat(result.isError()).as("an error: %s", text(result)).isFalse();
    return (Map<String, Object>) result.structuredContent();
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> map(Object value) {
    return (Map<String, Object>) value;
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> item(CallToolResult result) {
    return (Map<String, Object>) structured(result).get("item");
  }

  static String text(CallToolResult result) {
    return ((McpSchema.TextContent) result.content().get(0)).text();
  }

  static String refusal(CallToolResult result) {
    assertThat(result.isError()).as("a refusal, not: %s", result).isTrue();
    return text(result);
  }

  static Map<String, Object> work(String queue, String key, Object payload) {
    Map<String, Object> arguments = new LinkedHashMap<>();
    arguments.put("queue", queue);
    arguments.put("dedupeKey", key);
    arguments.put("payload", payload);
    return arguments;
  }

  long rows(String queue) throws Exception {
    return McpClients.rows(database, queue);
  }

  @Test
  @SuppressWarnings("unchecked")
  void the_three_tools_are_listed_each_with_a_schema_of_its_arguments() {
    try (McpSyncClient agent = client(AGENT)) {
      Map<String, McpSchema.Tool> tools = new LinkedHashMap<>();
      agent.listTools().tools().forEach(tool -> tools.put(tool.name(), tool));

      assertThat(tools).containsOnlyKeys("enqueue_work", "get_work_status", "list_my_work");
      McpSchema.Tool enqueue = tools.get("enqueue_work");
      assertThat(enqueue.description()).contains("dedupeKey").contains("already enqueued");
      assertThat(enqueue.inputSchema())
          .containsEntry("type", "object")
          .containsEntry("additionalProperties", false)
          .containsEntry("required", List.of("queue", "dedupeKey", "payload"));
      assertThat(map(enqueue.inputSchema().get("properties")))
          .containsOnlyKeys("queue", "dedupeKey", "payload", "runAt", "priority", "maxAttempts");
      assertThat(map(tools.get("get_work_status").inputSchema().get("properties")))
          .containsOnlyKeys("id", "queue", "dedupeKey");
      Map<String, Object> mine = map(tools.get("list_my_work").inputSchema().get("properties"));
      assertThat(mine).containsOnlyKeys("state", "limit", "cursor");
      assertThat((List<Object>) map(mine.get("state")).get("enum"))
          .containsExactlyInAnyOrder("pending", "sending", "done", "failed", "cancelled", "held");
      assertThat(tools.get("get_work_status").annotations().readOnlyHint()).isTrue();
    }
  }

  @Test
  void enqueue_creates_once_and_a_replay_answers_the_same_item_without_a_second_row()
      throws Exception {
    String queue = uniqueQueue("mcp");
    try (McpSyncClient agent = client(AGENT)) {
      Map<String, Object> arguments = work(queue, "welcome/42", Map.of("to", "ada@example.com"));
      arguments.put("priority", 7);
      arguments.put("runAt", "2030-01-01T00:00:00Z");

      CallToolResult first = call(agent, "enqueue_work", arguments);
      assertThat(structured(first)).containsEntry("result", "created");
      Map<String, Object> item = item(first);
      assertThat(item)
          .containsEntry("queue", queue)
          .containsEntry("dedupeKey", "welcome/42")
          .containsEntry("state", "pending")
          .containsEntry("attempts", 0)
          .containsEntry("maxAttempts", 5)
          .containsEntry("runAt", "2030-01-01T00:00:00Z")
          .containsEntry("enqueuedBy", "dev-agent");
      assertThat(text(first)).startsWith("Created: item " + item.get("id") + " in queue");

      CallToolResult again = call(agent, "enqueue_work", arguments);
      assertThat(structured(again)).containsEntry("result", "already enqueued");
      assertThat(item(again)).containsEntry("id", item.get("id"));
      assertThat(text(again)).startsWith("Already enqueued: item " + item.get("id"));
      assertThat(rows(queue)).isEqualTo(1);
    }
  }

  @Test
  void the_same_key_with_another_payload_is_refused_in_the_words_of_the_api() throws Exception {
    String queue = uniqueQueue("mcp");
    try (McpSyncClient agent = client(AGENT)) {
      String id = (String) item(call(agent, "enqueue_work", work(queue, "k", 1))).get("id");

      CallToolResult reused = call(agent, "enqueue_work", work(queue, "k", 2));

      assertThat(refusal(reused))
          .isEqualTo(
              "Queue '"
                  + queue
                  + "' already has item "
                  + id
                  + " with dedupe key 'k' and a different payload. A dedupe key names one piece"
                  + " of work: use a new key for different work.");
      assertThat(map(reused.structuredContent()))
          .containsEntry("status", 422)
          .containsEntry("type", "https://claimq.dev/problems/dedupe-key-reused");

      // The same payload with a runAt the item was not enqueued with is other work too.
      Map<String, Object> later = work(queue, "k", 1);
      later.put("runAt", "2030-01-01T00:00:00Z");
      CallToolResult rescheduled = call(agent, "enqueue_work", later);
      assertThat(refusal(rescheduled))
          .contains("item " + id + " with dedupe key 'k' and runAt ")
          .contains(" as enqueued: a replay that gives runAt must match.");
      assertThat(rows(queue)).isEqualTo(1);
    }
  }

  @Test
  void status_is_found_by_id_and_by_queue_and_dedupe_key() {
    String queue = uniqueQueue("mcp");
    try (McpSyncClient agent = client(AGENT)) {
      String id = (String) item(call(agent, "enqueue_work", work(queue, "s/1", "x"))).get("id");

      Map<String, Object> byId = structured(call(agent, "get_work_status", Map.of("id", id)));
      Map<String, Object> byKey =
          structured(call(agent, "get_work_status", Map.of("queue", queue, "dedupeKey", "s/1")));

      assertThat(byId)
          .containsEntry("id", id)
          .containsEntry("state", "pending")
          .containsEntry("attempts", 0)
          .containsEntry("maxAttempts", 5)
          .containsEntry("lastError", null)
          .containsEntry("externalRef", null)
          .containsKey("updatedAt");
      assertThat(byKey).isEqualTo(byId);
      assertThat(
              refusal(call(agent, "get_work_status", Map.of("queue", queue, "dedupeKey", "nope"))))
          .isEqualTo("Queue '" + queue + "' has no item with dedupe key 'nope'.");
      assertThat(refusal(call(agent, "get_work_status", Map.of("id", "999999999999"))))
          .isEqualTo("No item has id '999999999999'.");
      assertThat(refusal(call(agent, "get_work_status", Map.of("id", id, "queue", queue))))
          .isEqualTo("Name the item either by id, or by queue and dedupeKey together.");
    }
  }

  @Test
  void a_dedupe_key_counts_characters_not_utf16_units_in_both_tools() throws Exception {
    String queue = uniqueQueue("mcp");
    String emoji = "\uD83D\uDE00"; // one character, two UTF-16 units
    try (McpSyncClient agent = client(AGENT)) {
      Map<String, Object> created =
          item(call(agent, "enqueue_work", work(queue, emoji.repeat(200), 1)));
      Map<String, Object> found =
          structured(
              call(
                  agent,
                  "get_work_status",
                  Map.of("queue", queue, "dedupeKey", emoji.repeat(200))));

      assertThat(created).containsEntry("dedupeKey", emoji.repeat(200));
      assertThat(found).containsEntry("id", created.get("id"));
      assertThat(refusal(call(agent, "enqueue_work", work(queue, emoji.repeat(201), 1))))
          .isEqualTo("The request is invalid: dedupeKey size must be between 1 and 200.");
      assertThat(
              refusal(
                  call(
                      agent,
                      "get_work_status",
                      Map.of("queue", queue, "dedupeKey", emoji.repeat(201)))))
          .isEqualTo("The request is invalid: dedupeKey size must be between 1 and 200.");
      // Shortened to 80 characters in the answer, never cut between a character's two units.
      assertThat(
              refusal(
                  call(
                      agent,
                      "get_work_status",
                      Map.of("queue", queue, "dedupeKey", "a" + emoji.repeat(100)))))
          .isEqualTo(
              "Queue '" + queue + "' has no item with dedupe key 'a" + emoji.repeat(79) + "…'.");
      assertThat(rows(queue)).isEqualTo(1);
    }
  }

  @Test
  void my_work_is_listed_newest_first_by_state_across_pages() {
    String queue = uniqueQueue("mcp");
    try (McpSyncClient agent = client(AGENT);
        McpSyncClient admin = client("dev-admin-key")) {
      List<String> ids = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        ids.add((String) item(call(agent, "enqueue_work", work(queue, "mine/" + i, i))).get("id"));
      }
      // Another key's work is not this key's.
      call(admin, "enqueue_work", work(queue, "not-mine", 0));

      Map<String, Object> first =
          structured(call(agent, "list_my_work", Map.of("state", "pending", "limit", 2)));
      assertThat(ids(first)).startsWith(ids.get(2), ids.get(1));
      String cursor = (String) first.get("nextCursor");
      assertThat(cursor).isNotNull();
      Map<String, Object> second =
          structured(
              call(
                  agent, "list_my_work", Map.of("state", "pending", "limit", 2, "cursor", cursor)));
      assertThat(ids(second)).first().isEqualTo(ids.get(0));
      assertThat(ids(first)).doesNotContainAnyElementsOf(ids(second));
      assertThat(ids(structured(call(agent, "list_my_work", Map.of("state", "done")))))
          .doesNotContainAnyElementsOf(ids);
      // Other tests' held proposals may be this key's too: only these items are this test's.
      assertThat(ids(structured(call(agent, "list_my_work", Map.of("state", "held")))))
          .doesNotContainAnyElementsOf(ids);
      assertThat(refusal(call(agent, "list_my_work", Map.of("limit", 101))))
          .isEqualTo("limit must be a whole number from 1 to 100, got '101'.");
      // A cursor of the pending items, sent for the done ones: refused, not an empty page.
      assertThat(refusal(call(agent, "list_my_work", Map.of("state", "done", "cursor", cursor))))
          .startsWith("cursor was issued for another listing");
      assertThat(refusal(call(admin, "list_my_work", Map.of("state", "pending", "cursor", cursor))))
          .startsWith("cursor was issued for another listing (other filters, or another key's");
    }
  }

  @SuppressWarnings("unchecked")
  static List<String> ids(Map<String, Object> page) {
    return ((List<Map<String, Object>>) page.get("items"))
        .stream().map(item -> (String) item.get("id")).toList();
  }

  @Test
  void a_key_limited_to_another_queue_is_refused_there_and_sees_no_item_of_it() throws Exception {
    String queue = uniqueQueue("mcp");
    try (McpSyncClient agent = client(AGENT);
        McpSyncClient elsewhere = client(ELSEWHERE)) {
      String id = (String) item(call(agent, "enqueue_work", work(queue, "k", 1))).get("id");

      assertThat(refusal(call(elsewhere, "enqueue_work", work(queue, "k2", 1))))
          .isEqualTo("This API key may not use this queue.");
      assertThat(
              refusal(call(elsewhere, "get_work_status", Map.of("queue", queue, "dedupeKey", "k"))))
          .isEqualTo("This API key may not use this queue.");
      assertThat(refusal(call(elsewhere, "get_work_status", Map.of("id", id))))
          .isEqualTo("No item has id '" + id + "'.");
      assertThat(structured(call(elsewhere, "enqueue_work", work("elsewhere", "e/1", 1))))
          .containsEntry("result", "created");
      assertThat(rows(queue)).isEqualTo(1);
    }
  }

  @Test
  void a_key_without_the_agent_role_is_refused_by_every_tool() throws Exception {
    String queue = uniqueQueue("mcp");
    try (McpSyncClient worker = client(WORKER)) {
      for (String tool : List.of("enqueue_work", "get_work_status", "list_my_work")) {
        assertThat(refusal(call(worker, tool, work(queue, "k", 1))))
            .as(tool)
            .isEqualTo("This API key does not have the role this endpoint needs (agent).");
      }
      assertThat(rows(queue)).isZero();
    }
  }

  @Test
  void no_key_or_an_unknown_key_is_a_401_before_any_mcp() throws Exception {
    LogCapture log = LogCapture.start(Level.SEVERE);
    assertThatThrownBy(() -> client(null)).hasStackTraceContaining("401");
    assertThatThrownBy(() -> client("not-a-key")).hasStackTraceContaining("401");
    HttpClient http = HttpClient.newHttpClient();
    HttpResponse<String> bare =
        http.send(
            HttpRequest.newBuilder(root.resolve("/mcp"))
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString("{}"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(bare.statusCode()).isEqualTo(401);
    assertThat(bare.headers().firstValue("WWW-Authenticate")).hasValue("Bearer realm=\"claimq\"");
    assertThat(log.errors()).isEmpty();
    log.close();
  }

  @Test
  void a_request_without_a_key_is_a_problem_saying_so_on_every_mcp_route() throws Exception {
    HttpClient http = HttpClient.newHttpClient();
    Map<String, HttpRequest.Builder> requests = new LinkedHashMap<>();
    requests.put(
        "POST /mcp",
        HttpRequest.newBuilder(root.resolve("/mcp"))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .POST(HttpRequest.BodyPublishers.ofString("{}")));
    requests.put("GET /mcp", HttpRequest.newBuilder(root.resolve("/mcp")).GET());
    requests.put("DELETE /mcp", HttpRequest.newBuilder(root.resolve("/mcp")).DELETE());
    requests.put("GET /mcp/sse", HttpRequest.newBuilder(root.resolve("/mcp/sse")).GET());
    for (Map.Entry<String, HttpRequest.Builder> request : requests.entrySet()) {
      HttpResponse<String> answer =
          http.send(
              request.getValue().timeout(Duration.ofSeconds(10)).build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(answer.statusCode()).as(request.getKey()).isEqualTo(401);
      assertThat(answer.headers().firstValue("Content-Type"))
          .as(request.getKey())
          .hasValue("application/problem+json");
      assertThat(answer.headers().firstValue("WWW-Authenticate"))
          .hasValue("Bearer realm=\"claimq\"");
      // As GET /v1/me answers it.
      assertThat(answer.body())
          .as(request.getKey())
          .contains(
              "\"detail\":\"This endpoint needs an API key: send Authorization: Bearer <key>.\"");
    }
  }

  @Test
  void malformed_arguments_are_tool_errors_naming_the_argument() throws Exception {
    String queue = uniqueQueue("mcp");
    try (McpSyncClient agent = client(AGENT);
        LogCapture log = LogCapture.start(Level.WARNING)) {
      Map<String, Object> extra = work(queue, "k", 1);
      extra.put("colour", "red");
      Map<String, Object> wrongType = work(queue, "k", 1);
      wrongType.put("priority", "7");
      Map<String, Object> huge = work(queue, "k".repeat(201), 1);
      Map<String, Object> badTime = work(queue, "k", 1);
      badTime.put("runAt", "tomorrow");

      assertThat(refusal(call(agent, "enqueue_work", extra)))
          .isEqualTo("Unknown field 'colour': check its spelling.");
      assertThat(refusal(call(agent, "enqueue_work", wrongType)))
          .isEqualTo("The value of 'priority' must be a whole number.");
      assertThat(refusal(call(agent, "enqueue_work", Map.of("queue", queue))))
          .isEqualTo(
              "The request is invalid: dedupeKey must not be null; payload must be a JSON value"
                  + " other than null.");
      assertThat(refusal(call(agent, "enqueue_work", huge)))
          .isEqualTo("The request is invalid: dedupeKey size must be between 1 and 200.");
      assertThat(refusal(call(agent, "enqueue_work", badTime)))
          .isEqualTo(
              "runAt must be an RFC 3339 timestamp with an offset, such as 2026-11-30T09:00:00Z;"
                  + " got 'tomorrow'.");
      assertThat(refusal(call(agent, "enqueue_work", work("Not A Queue", "k", 1))))
          .isEqualTo(
              "Queue name 'Not A Queue' must be 1-64 characters of a-z, 0-9, '.', '_' or '-',"
                  + " starting with a letter or digit.");
      assertThat(refusal(call(agent, "list_my_work", Map.of("state", "lost"))))
          .isEqualTo(
              "State 'lost' is not one of: held, pending, sending, done, failed, cancelled.");
      assertThat(refusal(call(agent, "list_my_work", Map.of("cursor", "abc"))))
          .isEqualTo(
              "cursor is not one this service issued: pass nextCursor from a previous page.");
      // An argument with a default is left out for it, as a REST field is: null is refused.
      Map<String, Object> nullLimit = new HashMap<>();
      nullLimit.put("limit", null);
      assertThat(refusal(call(agent, "list_my_work", nullLimit)))
          .isEqualTo("The value of 'limit' must not be null: leave it out to take its default.");
      Map<String, Object> nullPriority = work(queue, "k", 1);
      nullPriority.put("priority", null);
      assertThat(refusal(call(agent, "enqueue_work", nullPriority)))
          .isEqualTo("The value of 'priority' must not be null: leave it out to take its default.");
      assertThat(rows(queue)).isZero();
      assertThat(log.records()).extracting(LogCapture::format).isEmpty();
    }
  }
}
