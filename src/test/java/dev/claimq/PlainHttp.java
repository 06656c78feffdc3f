package dev.claimq;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

/**
 * Calls over the JDK's HTTP client, for what RestAssured would not send as is: no default key,
 * bodies as raw bytes, and chunked bodies as streaming clients send them.
 */
public final class PlainHttp {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient http = HttpClient.newHttpClient();
  private final URI base;

  public PlainHttp(URI base) {
    this.base = base;
  }

  /** A JSON body (or none, for null) with this Authorization header (or none, for null). */
  public HttpResponse<String> send(String method, String path, String body, String authorization)
      throws IOException, InterruptedException {
    return send(
        method,
        path,
        body == null
            ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(body),
        body != null,
        authorization);
  }

  /** A POST of these exact bytes as application/json. */
  public HttpResponse<String> post(String path, byte[] body, String authorization)
      throws IOException, InterruptedException {
    return send("POST", path, HttpRequest.BodyPublishers.ofByteArray(body), true, authorization);
  }

  /** A POST as a streaming client sends it: Transfer-Encoding chunked, no Content-Length. */
  public HttpResponse<String> postChunked(String path, byte[] body, String authorization)
      throws IOException, InterruptedException {
    return send(
        "POST",
        path,
        HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(body)),
        true,
        authorization);
  }

  private HttpResponse<String> send(
      String method,
      String path,
      HttpRequest.BodyPublisher body,
      boolean json,
      String authorization)
      throws IOException, InterruptedException {
    HttpRequest.Builder request = HttpRequest.newBuilder(base.resolve(path));
    if (authorization != null) {
      request.header("Authorization", authorization);
    }
    if (json) {
      request.header("Content-Type", "application/json");
    }
    return http.send(request.method(method, body).build(), HttpResponse.BodyHandlers.ofString());
  }

  /** Asserts an RFC 9457 problem with this status, a detail, and nothing of Java in its body. */
  public static JsonNode assertProblem(HttpResponse<String> response, int status)
      throws IOException {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
    assertThat(response.headers().firstValue("Content-Type"))
        .hasValueSatisfying(type -> assertThat(type).startsWith("application/problem+json"));
    JsonNode problem = JSON.readTree(response.body());
    assertThat(problem.path("status").asInt()).isEqualTo(status);
    assertThat(problem.path("detail").asText())
        .isNotBlank()
        .doesNotContain("java.")
        .doesNotContain("Exception");
    return problem;
  }
}
