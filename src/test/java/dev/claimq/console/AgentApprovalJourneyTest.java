package dev.claimq.console;

import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import dev.claimq.mcp.McpClients;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;

/**
 * The approval gate end to end, each part through its own door: an agent proposes over MCP, a
 * person approves in the console in a real browser, a worker sends over HTTP, and the agent reads
 * the outcome over MCP.
 */
@QuarkusTest
class AgentApprovalJourneyTest extends ConsoleTest {

  @Test
  void an_agents_proposal_waits_for_an_operators_approval_then_is_sent_once_and_reported_done() {
    String queue = uniqueQueue("agent-gate");
    Seed.as(Seed.OPERATOR)
        .contentType(ContentType.JSON)
        .body(Map.of("requireApproval", true))
        .put("/v1/queues/{queue}/policy", queue)
        .then()
        .statusCode(200);

    try (McpSyncClient agent = mcp(Seed.AGENT)) {
      Map<String, Object> proposal =
          Map.of("queue", queue, "dedupeKey", "post/1", "payload", Map.of("text", "Hello"));
      Map<String, Object> proposed = item(call(agent, "enqueue_work", proposal));
      String id = (String) proposed.get("id");
      assertThat(proposed.get("state")).isEqualTo("held");
      // The agent retrying its proposal gets the same held item, not a second one.
      CallToolResult again = call(agent, "enqueue_work", proposal);
      assertThat(structured(again).get("result")).isEqualTo("already enqueued");
      assertThat(item(again).get("id")).isEqualTo(id);
      // Held: no worker gets it.
      claim(queue).then().statusCode(204);

      Browser browser = browser();
      signIn(browser, Seed.OPERATOR);
      showQueue(browser, queue);
      browser.click(By.id("qh-" + queue));
      browser.click(By.id("held-" + id));
      browser.text(By.cssSelector(".facts"), "dev-agent");
      browser.click(By.id("approve"));
      browser.text(By.id("state"), "pending");

      var claimed = claim(queue);
      claimed.then().statusCode(200).body("id", equalTo(id));
      Seed.as(Seed.WORKER)
          .contentType(ContentType.JSON)
          .body(Map.of("claimToken", claimed.path("claimToken"), "externalRef", "post-123"))
          .post("/v1/items/{id}/complete", id)
          .then()
          .statusCode(200);

      Map<String, Object> status = structured(call(agent, "get_work_status", Map.of("id", id)));
      assertThat(status.get("state")).isEqualTo("done");
      assertThat(status.get("externalRef")).isEqualTo("post-123");
      assertThat(status.get("attempts")).isEqualTo(1);
    }
  }

  private static io.restassured.response.Response claim(String queue) {
    return Seed.as(Seed.WORKER)
        .contentType(ContentType.JSON)
        .body(Map.of("worker", "publisher-1"))
        .post("/v1/queues/{queue}/claim", queue);
  }

  private McpSyncClient mcp(String key) {
    return McpClients.client(base, key);
  }

  private static CallToolResult call(McpSyncClient client, String tool, Map<String, Object> args) {
    return client.callTool(new McpSchema.CallToolRequest(tool, args));
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> structured(CallToolResult result) {
    assertThat(result.isError()).as("a tool error: %s", result.content()).isFalse();
    return (Map<String, Object>) result.structuredContent();
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> item(CallToolResult result) {
    return (Map<String, Object>) structured(result).get("item");
  }
}
