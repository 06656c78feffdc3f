package dev.claimq.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A key at its bound of sessions gets a new one in place of its least recently used session with no
 * request or stream in progress, once that one has been idle for
 * claimq.mcp.reclaim-idle-session-after (2 s here): the official SDKs close a client without ending
 * its session, and a script connecting often was locked out.
 */
@QuarkusTest
@TestProfile(McpSessionReclaimTest.ReclaimAfterTwoSeconds.class)
class McpSessionReclaimTest {
  private static final String KEY = "test-elsewhere-key";
  private static final String INITIALIZE =
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
          + "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
          + "\"clientInfo\":{\"name\":\"reclaim\",\"version\":\"1\"}}}";
  private static final String INITIALIZED =
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
  private static final String LIST_TOOLS =
      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}";

  public static class ReclaimAfterTwoSeconds implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      return Map.of("claimq.mcp.reclaim-idle-session-after", "2s");
    }
  }

  @TestHTTPResource("/mcp")
  URI mcp;

  @Inject McpSessions sessions;

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

  @Test
  void at_its_bound_a_key_opens_a_session_in_place_of_its_least_recently_used_idle_one()
      throws Exception {
    List<String> opened = new ArrayList<>();
    HttpResponse<InputStream> stream = null;
    for (int n = sessions.open("test-elsewhere"); n < McpSessions.MAX_SESSIONS_PER_KEY; n++) {
      HttpResponse<String> answer = post(null, INITIALIZE);
      assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
      String session = answer.headers().firstValue("Mcp-Session-Id").orElseThrow();
      assertThat(post(session, INITIALIZED).statusCode()).isEqualTo(202);
      opened.add(session);
      if (stream == null) {
        // The first keeps its stream open from the start (a client that is still there): the
        // least recently used of all, and in use.
        stream =
            http.send(
                HttpRequest.newBuilder(mcp)
                    .header("Authorization", "Bearer " + KEY)
                    .header("Mcp-Session-Id", session)
                    .header("Accept", "text/event-stream")
                    .GET()
                    .build(),
                HttpResponse.BodyHandlers.ofInputStream());
      }
    }
    String first = opened.get(0);
    String second = opened.get(1);
    String third = opened.get(2);
    try {
      assertThat(stream.statusCode()).isEqualTo(200);
      Thread.sleep(2200); // every session idle past the 2 s, but the first is in use
      assertThat(post(second, LIST_TOOLS).statusCode()).as("the second, used again").isEqualTo(200);

      HttpResponse<String> another = post(null, INITIALIZE);
      assertThat(another.statusCode()).as(another.body()).isEqualTo(200);
      assertThat(another.headers().firstValue("Mcp-Session-Id")).isPresent();
      assertThat(sessions.open("test-elsewhere")).isEqualTo(McpSessions.MAX_SESSIONS_PER_KEY);
      // The least recently used one not in use made room: the third.
      HttpResponse<String> ended = post(third, LIST_TOOLS);
      assertThat(ended.statusCode()).as(ended.body()).isEqualTo(404);
      assertThat(ended.body()).contains("send initialize again");
      assertThat(post(first, LIST_TOOLS).statusCode()).as("the first, in use").isEqualTo(200);
      assertThat(post(second, LIST_TOOLS).statusCode()).isEqualTo(200);
    } finally {
      stream.body().close();
    }
  }

  private HttpResponse<String> post(String session, String body) throws Exception {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(mcp)
            .timeout(Duration.ofSeconds(20))
            .header("Authorization", "Bearer " + KEY)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (session != null) {
      request.header("Mcp-Session-Id", session);
    }
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }
}
