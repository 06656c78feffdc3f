package dev.claimq.faults;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** The fake downstream provider (examples/demo/provider.py) as a process, and its record. */
final class Provider implements AutoCloseable {
  final String url;
  private final Process process;
  private final Http http = new Http(new History());

  Provider(Path logs) throws IOException {
    process =
        new ProcessBuilder("python3", "examples/demo/provider.py")
            .redirectError(ProcessBuilder.Redirect.appendTo(logs.resolve("provider.log").toFile()))
            .start();
    String first =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))
            .readLine();
    if (first == null || !first.startsWith("PROVIDER_URL=")) {
      throw new IOException("the provider did not start: " + first);
    }
    url = first.substring("PROVIDER_URL=".length());
  }

  /** Idempotency key to its record entry: id, accepted, refused, payload. */
  Map<String, JsonNode> sends() throws IOException, InterruptedException {
    Map<String, JsonNode> sends = new HashMap<>();
    for (JsonNode send : get("").path("sends")) {
      sends.put(send.path("idempotencyKey").asText(), send);
    }
    return sends;
  }

  /** Every request it received, in order: idempotencyKey, status (0: hung), payload. */
  List<JsonNode> requests() throws IOException, InterruptedException {
    List<JsonNode> requests = new ArrayList<>();
    get("/../requests").path("requests").forEach(requests::add);
    return requests;
  }

  private JsonNode get(String suffix) throws IOException, InterruptedException {
    String target = suffix.isEmpty() ? url : url.replace("/sends", "/requests");
    return http.send(target, "GET", Map.of(), null, Duration.ofSeconds(30)).body();
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    process.waitFor(10, TimeUnit.SECONDS);
  }
}
