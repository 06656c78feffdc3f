package dev.claimq.faults;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

/**
 * The harness's HTTP client for claimq and the provider. Every answer from claimq is checked on the
 * way: a 5xx other than a problem+json 503 is recorded as a violation wherever it happens.
 */
final class Http {
  static final ObjectMapper JSON = new ObjectMapper();
  static final String AGENT = "dev-agent-key";
  static final String WORKER = "dev-worker-key";
  static final String OPERATOR = "dev-operator-key";

  record Answer(int status, JsonNode body, Map<String, java.util.List<String>> headers) {}

  private final HttpClient client =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(2))
          .build();
  private final History history;

  Http(History history) {
    this.history = history;
  }

  /** A call to claimq; IOException for a timeout or a connection refused or cut. */
  Answer claimq(String base, String method, String path, String key, Object body, Duration timeout)
      throws IOException, InterruptedException {
    Answer answer =
        send(
            base + path,
            method,
            key == null ? Map.of() : Map.of("Authorization", "Bearer " + key),
            body,
            timeout);
    if (answer.status >= 500) {
      String type = answer.headers.getOrDefault("content-type", java.util.List.of("")).get(0);
      if (answer.status == 503 && type.startsWith("application/problem+json")) {
        history.unavailable.incrementAndGet();
      } else {
        history.badAnswers.add(
            method
                + " "
                + base
                + path
                + " answered "
                + answer.status
                + " "
                + type
                + " "
                + answer.body);
      }
    }
    return answer;
  }

  Answer send(String url, String method, Map<String, String> headers, Object body, Duration timeout)
      throws IOException, InterruptedException {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url)).timeout(timeout);
    headers.forEach(request::header);
    if (body == null) {
      request.method(method, HttpRequest.BodyPublishers.noBody());
    } else {
      request.header("Content-Type", "application/json");
      request.method(method, HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
    }
    HttpResponse<String> response =
        client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    JsonNode json = null;
    if (!response.body().isEmpty()) {
      try {
        json = JSON.readTree(response.body());
      } catch (IOException notJson) {
        json = JSON.getNodeFactory().textNode(response.body());
      }
    }
    return new Answer(response.statusCode(), json, response.headers().map());
  }
}
