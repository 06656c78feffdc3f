// A claimq worker in Java 17 with only the JDK (java.net.http): the protocol of
// openapi/worker-protocol.md, end to end. Replace send() with your own side effect, and
// alreadySent() with asking your provider by idempotency key.
//
//   java Worker.java --queue emails [--url http://localhost:8080] [--worker mailer-1]
//                    [--api-key KEY] [--lease-seconds 60] [--wait-seconds 20] [--exit-when-empty]
//
// Every flag also reads an env var: CLAIMQ_URL, CLAIMQ_QUEUE, CLAIMQ_WORKER, CLAIMQ_API_KEY,
// CLAIMQ_LEASE_SECONDS, CLAIMQ_WAIT_SECONDS, CLAIMQ_EXIT_WHEN_EMPTY=1. With PROVIDER_URL set, the
// demo send POSTs the payload there (and alreadySent() asks GET PROVIDER_URL/<key>); without it,
// it only logs. An item's traceparent (the agent's trace) goes along as the traceparent header on
// the calls to the provider and on complete and fail. Each complete or fail also claims the next
// item (next), one call per item. SIGTERM or SIGINT: finish the item in hand, then exit 0.
//
// Many workers on one machine: `java -XX:+UseSerialGC -Xmx64m Worker.java ...` keeps each to
// about 110 MB instead of twice that, at the same rate (docs/performance.md). A JVM reaches its
// full rate only after a minute or two of work, as the JIT compiles the HTTP client.

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

public class Worker {
  /** claimq did not answer usefully (connection error, timeout, 5xx): try again later. */
  static class Transient extends Exception {
    Transient(String message) {
      super(message);
    }
  }

  /** 409: this claim is no longer current. Stop working on the item; never redo the send. */
  static class ClaimGone extends Exception {
    ClaimGone(String message) {
      super(message);
    }
  }

  /**
   * The outcome of one send, as claimq wants to hear it: done, retry, permanent, or unknown (a
   * retry after which the provider may have acted: the next claim is flagged possiblySent).
   */
  record Outcome(String kind, String detail, Long retryAfterSeconds) {}

  /**
   * The fields of a claimed item a worker needs; the payload stays raw JSON, passed on as is. The
   * traceparent is null when the item carries none.
   */
  record Item(
      String id,
      String idempotencyKey,
      String claimToken,
      String payload,
      boolean possiblySent,
      String traceparent) {}

  static final HttpClient http =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5))
          .build();
  static volatile boolean stopping;
  static Map<String, String> config;
  // The claim token in hand, like the API key, is never written to the log, whoever echoes it.
  static volatile String claimToken;

  public static void main(String[] args) throws Exception {
    config = configure(args);
    if (config.get("queue") == null) {
      System.err.println("Worker.java: --queue or CLAIMQ_QUEUE is required");
      System.exit(2);
    }
    // Only set a flag: the item in hand is finished, and the loop then returns normally (exit 0).
    // sun.misc.Signal, because a shutdown hook could not keep the exit status at 0.
    for (String name : new String[] {"TERM", "INT"}) {
      sun.misc.Signal.handle(new sun.misc.Signal(name), signal -> stopping = true);
    }
    int leaseSeconds = Integer.parseInt(config.get("lease-seconds"));
    int waitSeconds = Integer.parseInt(config.get("wait-seconds"));
    String claimBody =
        String.format(
            "{\"worker\": %s, \"leaseSeconds\": %d, \"waitSeconds\": %d}",
            quote(config.get("worker")), leaseSeconds, waitSeconds);
    int failures = 0;
    String next = null; // the next item, claimed by the last report
    while (next != null || !stopping) {
      if (next != null) { // a claimed item is finished even when stopping
        next = workOn(itemOf(next), leaseSeconds, claimBody, waitSeconds);
        continue;
      }
      HttpResponse<String> claimed;
      try {
        claimed = post("/v1/queues/" + config.get("queue") + "/claim", claimBody, waitSeconds + 10);
        // A 200 without an item (a proxy's empty answer, say) is a failed claim like any other.
        if (claimed.statusCode() == 200 && !isClaimedItem(claimed.body())) {
          throw new Transient("claim answered 200 without an item");
        }
        failures = 0;
      } catch (Transient | IllegalStateException error) {
        double delay = backoff(++failures);
        log(String.format("claim: %s; again in %.1fs", error.getMessage(), delay));
        sleepUnlessStopping(delay);
        continue;
      } catch (ClaimGone impossible) {
        continue;
      }
      if (claimed.statusCode() == 204) { // nothing due within waitSeconds
        if (config.get("exit-when-empty") != null) {
          log("queue " + config.get("queue") + " is empty; exiting");
          break;
        }
        continue;
      }
      next = workOn(itemOf(claimed.body()), leaseSeconds, claimBody, waitSeconds);
    }
    log("stopped");
  }

  /** Whether an answer is a claimed item: it has an id and a claimToken. */
  static boolean isClaimedItem(String json) {
    return text(field(json, "id")) != null && text(field(json, "claimToken")) != null;
  }

  /** A claimed item as claim-next (or a report's next) answers it. */
  static Item itemOf(String json) {
    return new Item(
        text(field(json, "id")),
        text(field(json, "idempotencyKey")),
        text(field(json, "claimToken")),
        field(json, "payload"),
        "true".equals(field(json, "possiblySent")),
        text(field(json, "traceparent")));
  }

  /**
   * Says this attempt is about to send, so that if it ends without a complete the next claim is
   * flagged possiblySent (or the item held for a human) rather than sent again blindly.
   */
  static boolean declareIntent(Item item) {
    try {
      String token = "\"claimToken\": \"" + item.claimToken() + "\"";
      String answer = finish("/v1/items/" + item.id() + "/intent", "{" + token).body();
      String sent = alreadySentIn(answer);
      if (sent != null) {
        // An earlier claim's send went through after all: complete with it, do not send.
        log("item " + item.id() + ": already sent by an earlier attempt; completing with it");
        String ref = field(sent, "externalRef");
        finish(
            "/v1/items/" + item.id() + "/complete",
            "{" + token + ", \"externalRef\": " + ref,
            null,
            item.traceparent(),
            10);
        return false;
      }
    } catch (ClaimGone gone) {
      log("item " + item.id() + ": claim gone before sending; not sending");
      return false;
    } catch (Transient | RuntimeException error) {
      log("item " + item.id() + ": " + error.getMessage() + "; not sending");
      return false;
    }
    return true;
  }

  /**
   * Sends the item and reports it. The report asks for the next item too (one call per item)
   * unless the worker is stopping; answers that next item's JSON, or null: then claim as usual.
   */
  static String workOn(Item item, int leaseSeconds, String claimBody, int waitSeconds) {
    claimToken = item.claimToken();
    if (!declareIntent(item)) {
      return null;
    }
    var heartbeat = Executors.newSingleThreadScheduledExecutor();
    var earlierSend = new AtomicReference<String>(); // an alreadySent a heartbeat answered
    long every = leaseSeconds * 1000L / 3;
    heartbeat.scheduleAtFixedRate(
        () -> heartbeat(item, earlierSend), every, every, TimeUnit.MILLISECONDS);
    Outcome outcome;
    try {
      outcome = sendUnlessSent(item);
    } catch (RuntimeException error) { // a bug in send(): report it rather than hold the item
      outcome = new Outcome("unknown", "worker error: " + error, null);
    } finally {
      // shutdown, not shutdownNow: a heartbeat in flight finishes, so its answer is not lost.
      heartbeat.shutdown();
      try {
        heartbeat.awaitTermination(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    String sent = earlierSend.get();
    if (sent != null && outcome.kind().equals("done")) {
      // Told too late: this send went out as well. Its own reference is reported, so that
      // claimq counts a second send (duplicateSends) where the provider made one.
      log(
          String.format(
              "item %s: attempt %s sent it too; completing with this send's reference",
              item.id(), field(sent, "attempt")));
    } else if (sent != null) {
      // That earlier send is the item's send, and this one did not go out: complete with it.
      log(
          String.format(
              "item %s: completing with attempt %s's send instead of this send's outcome (%s)",
              item.id(), field(sent, "attempt"), outcome.kind()));
      outcome = new Outcome("done", text(field(sent, "externalRef")), null);
    }

    String path = "/v1/items/" + item.id() + "/";
    String token = "\"claimToken\": " + quote(item.claimToken());
    // A stopping worker claims nothing more. A repeated report answers next: null (its lost first
    // answer's item waits for its lease to end), so the wait stays within the call's timeout.
    boolean wantsNext = !stopping;
    String next = wantsNext ? claimBody : null;
    int timeout = waitSeconds + 10;
    try {
      String answer;
      if (outcome.kind().equals("done")) {
        String ref = outcome.detail() == null ? "" : ", \"externalRef\": " + quote(outcome.detail());
        String body = "{" + token + ref;
        answer = finish(path + "complete", body, next, item.traceparent(), timeout).body();
        log("item " + item.id() + ": done (" + outcome.detail() + ")");
      } else {
        String retryAfter =
            outcome.retryAfterSeconds() == null
                ? ""
                : ", \"retryAfterSeconds\": " + outcome.retryAfterSeconds();
        String unknown = outcome.kind().equals("unknown") ? ", \"sent\": \"unknown\"" : "";
        String body =
            String.format(
                "{%s, \"error\": %s, \"retryable\": %s%s%s",
                token,
                quote(outcome.detail()),
                !outcome.kind().equals("permanent"),
                unknown,
                retryAfter);
        answer = finish(path + "fail", body, next, item.traceparent(), timeout).body();
        log("item " + item.id() + ": " + outcome.detail() + ", now " + text(field(answer, "state")));
      }
      // No next in the answer (a claimq without it): claim as usual.
      String claimed = wantsNext ? field(answer, "next") : null;
      return claimed != null && isClaimedItem(claimed) ? claimed : null;
    } catch (ClaimGone gone) {
      // Another claim owns the item now. The provider has our idempotency key, so the next send
      // of this item is recognised as this one: nothing to undo, nothing to redo.
      log("item " + item.id() + ": claim gone; leaving the item to its current claim");
    } catch (Transient | IllegalStateException error) {
      log("item " + item.id() + ": " + error.getMessage());
    }
    return null;
  }

  /**
   * The side effect. Always pass the item's idempotencyKey to the provider: if this item is ever
   * sent twice (a stale worker, a crash before complete), the provider makes it one send.
   */
  static Outcome send(Item item) {
    String providerUrl = System.getenv("PROVIDER_URL");
    if (providerUrl == null || providerUrl.isEmpty()) {
      log("item " + item.id() + ": would send " + item.payload());
      return new Outcome("done", null, null);
    }
    HttpRequest request =
        traced(HttpRequest.newBuilder(URI.create(providerUrl)), item.traceparent())
            .header("Content-Type", "application/json")
            .header("Idempotency-Key", item.idempotencyKey())
            .timeout(Duration.ofSeconds(30))
            .POST(HttpRequest.BodyPublishers.ofString(item.payload()))
            .build();
    HttpResponse<String> response;
    try {
      response = http.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (ConnectException | HttpConnectTimeoutException error) {
      // Refused, unresolvable, or no connection in time: the request never went out.
      return new Outcome("retry", "provider unreachable: " + error, null);
    } catch (IOException | InterruptedException error) {
      // A timeout, or the connection lost once the request was written: it may have acted.
      return new Outcome("unknown", "provider may have acted: " + error, null);
    }
    int status = response.statusCode();
    if (status >= 200 && status < 300) {
      return new Outcome("done", text(field(response.body(), "id")), null);
    }
    String body = response.body();
    String reason =
        "provider answered " + status + ": " + excerpt(body);
    if (status == 408 || status == 429 || status >= 500) {
      Long retryAfter =
          response.headers().firstValue("Retry-After").map(Worker::retryAfterSeconds).orElse(null);
      return new Outcome("retry", reason, retryAfter);
    }
    return new Outcome("permanent", reason, null); // any other 4xx: will never succeed
  }

  /** The longest retryAfterSeconds claimq takes. */
  static final long MAX_RETRY_AFTER_SECONDS = 86400;

  /**
   * The provider's Retry-After as claimq takes it: whole seconds, at most a day (however many
   * digits the provider sent); null for anything else (an HTTP-date, garbage), so that claimq's
   * own backoff applies.
   */
  static Long retryAfterSeconds(String header) {
    String value = header.strip();
    if (!value.matches("[0-9]+")) return null;
    String digits = value.replaceFirst("^0+(?=.)", "");
    return digits.length() > 6
        ? MAX_RETRY_AFTER_SECONDS
        : Math.min(Long.parseLong(digits), MAX_RETRY_AFTER_SECONDS);
  }

  /** The first 500 characters, never half a surrogate pair (which is not valid UTF-8). */
  static String excerpt(String body) {
    if (body.length() <= 500) return body;
    return body.substring(0, Character.isHighSurrogate(body.charAt(499)) ? 499 : 500);
  }

  /**
   * Asks your provider, by idempotency key, whether an earlier attempt's send of this item went
   * through: a done outcome with its reference if it did, null if it did not (send it), or a retry
   * when the provider cannot tell, since sending then might send twice. The demo provider answers
   * GET PROVIDER_URL/{key} with 200 {"id": ...} or 404.
   */
  static Outcome alreadySent(Item item) {
    String providerUrl = System.getenv("PROVIDER_URL");
    if (providerUrl == null || providerUrl.isEmpty()) {
      return null; // nothing to ask; the demo send only logs
    }
    // URLEncoder writes a form: a space as +, which in a path is a plus.
    String key =
        URLEncoder.encode(item.idempotencyKey(), StandardCharsets.UTF_8).replace("+", "%20");
    HttpRequest request =
        traced(
                HttpRequest.newBuilder(URI.create(providerUrl.replaceAll("/$", "") + "/" + key)),
                item.traceparent())
            .timeout(Duration.ofSeconds(10))
            .GET()
            .build();
    String unsure = "could not ask the provider whether an earlier attempt sent: ";
    HttpResponse<String> response;
    try {
      response = http.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException | InterruptedException error) {
      return new Outcome("retry", unsure + error, null);
    }
    int status = response.statusCode();
    if (status == 404) {
      return null;
    }
    String body = response.body();
    if (status != 200) {
      String reason =
          "provider answered " + status + ": " + excerpt(body);
      return new Outcome("retry", unsure + reason, null);
    }
    return new Outcome("done", text(field(body, "id")), null); // it did send, ref readable or not
  }

  /**
   * send(), except that a claim saying an earlier attempt may have sent asks the provider first:
   * what it says is then the outcome, and only "not sent" leads to a send.
   */
  static Outcome sendUnlessSent(Item item) {
    if (item.possiblySent()) {
      log("item " + item.id() + ": an earlier attempt may have sent");
      Outcome outcome = alreadySent(item);
      if (outcome != null) {
        if (outcome.kind().equals("done")) {
          log("item " + item.id() + ": the provider has that send; completing with it");
        }
        return outcome;
      }
    }
    return send(item);
  }

  /**
   * Extends the lease; run every third of it while the send runs, so a slow send keeps it. An
   * answer saying an earlier claim's send went through after all ends the schedule and is kept in
   * earlierSend.
   */
  static void heartbeat(Item item, AtomicReference<String> earlierSend) {
    String answer;
    try {
      answer =
          post(
                  "/v1/items/" + item.id() + "/heartbeat",
                  "{\"claimToken\": " + quote(item.claimToken()) + "}",
                  10)
              .body();
    } catch (ClaimGone gone) {
      log("item " + item.id() + ": heartbeat answered 409: the claim is gone");
      throw new IllegalStateException("claim gone"); // ends the schedule
    } catch (Transient | IllegalStateException error) {
      log("item " + item.id() + ": heartbeat failed (" + error.getMessage() + "); trying again");
      return;
    }
    String sent = alreadySentIn(answer);
    if (sent != null) {
      String attempt = field(sent, "attempt");
      log("item " + item.id() + ": heartbeat says attempt " + attempt + " sent it already");
      earlierSend.set(sent);
      throw new IllegalStateException("already sent"); // ends the schedule
    }
  }

  /** The raw alreadySent object of an intent's or a heartbeat's answer, or null if none. */
  static String alreadySentIn(String answer) {
    String sent = answer == null ? null : field(answer, "alreadySent");
    return sent == null || !sent.startsWith("{") ? null : sent;
  }

  /**
   * complete and fail are repeat-safe, so a lost answer is simply asked again, for long enough
   * (about a minute and a half) to outlast a claimq restart. The request's JSON object comes
   * opened, not closed, so that finish adds the next claim's body (none when null) last.
   */
  static HttpResponse<String> finish(String path, String opened) throws Transient, ClaimGone {
    return finish(path, opened, null, null, 10);
  }

  /** finish, continuing the item's trace (its traceparent; none when null). */
  static HttpResponse<String> finish(
      String path, String opened, String next, String traceparent, int timeoutSeconds)
      throws Transient, ClaimGone {
    int tries = 10;
    for (int attempt = 1; ; attempt++) {
      // A stopping worker claims nothing more: a report made again after SIGTERM (its first try
      // refused or lost) asks for no next item.
      String body = opened + (next != null && !stopping ? ", \"next\": " + next : "") + "}";
      try {
        return post(path, body, timeoutSeconds, traceparent);
      } catch (Transient error) {
        if (attempt == tries) {
          String reason = error.getMessage() + "; gave up after " + tries + " tries";
          throw new Transient(path + ": " + reason + ", the lease will release the item");
        }
        double delay = backoff(attempt);
        log(String.format("%s: %s; again in %.1fs", path, error.getMessage(), delay));
        sleep(delay); // finishing outlives a SIGTERM
      }
    }
  }

  static HttpResponse<String> post(String path, String body, int timeoutSeconds)
      throws Transient, ClaimGone {
    return post(path, body, timeoutSeconds, null);
  }

  static HttpResponse<String> post(
      String path, String body, int timeoutSeconds, String traceparent)
      throws Transient, ClaimGone {
    HttpRequest.Builder request =
        traced(
                HttpRequest.newBuilder(URI.create(config.get("url").replaceAll("/$", "") + path)),
                traceparent)
            .header("Content-Type", "application/json")
            .timeout(Duration.ofSeconds(timeoutSeconds))
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (config.get("api-key") != null) {
      request.header("Authorization", "Bearer " + config.get("api-key"));
    }
    HttpResponse<String> response;
    try {
      response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    } catch (IOException | InterruptedException error) { // refused, reset, timed out
      throw new Transient(error.toString());
    }
    int status = response.statusCode();
    if (status == 409) throw new ClaimGone(response.body());
    if (status >= 500) throw new Transient("claimq answered " + status);
    if (status >= 400) {
      throw new IllegalStateException(
          "claimq refused " + path + ": " + status + " " + response.body());
    }
    return response;
  }

  /** The agent's trace, when the item carries one: continued by each call made for it. */
  static HttpRequest.Builder traced(HttpRequest.Builder request, String traceparent) {
    return traceparent == null ? request : request.header("traceparent", traceparent);
  }

  /** Full jitter: a random delay up to 0.5s * 2^attempt, so restarted workers spread out. */
  static double backoff(int attempt) {
    return ThreadLocalRandom.current().nextDouble() * Math.min(30, 0.5 * Math.pow(2, attempt));
  }

  static void sleep(double seconds) {
    try {
      Thread.sleep((long) (seconds * 1000));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  static void sleepUnlessStopping(double seconds) {
    long until = System.nanoTime() + (long) (seconds * 1e9);
    while (!stopping && System.nanoTime() < until) sleep(0.1);
  }

  static Map<String, String> configure(String[] args) {
    Map<String, String> config = new HashMap<>();
    config.put("url", env("CLAIMQ_URL", "http://localhost:8080"));
    config.put("queue", env("CLAIMQ_QUEUE", null));
    config.put(
        "worker", env("CLAIMQ_WORKER", "java-" + ProcessHandle.current().pid()));
    config.put("api-key", env("CLAIMQ_API_KEY", null));
    config.put("lease-seconds", env("CLAIMQ_LEASE_SECONDS", "60"));
    config.put("wait-seconds", env("CLAIMQ_WAIT_SECONDS", "20"));
    config.put("exit-when-empty", "1".equals(System.getenv("CLAIMQ_EXIT_WHEN_EMPTY")) ? "1" : null);
    for (int i = 0; i < args.length; i++) {
      String name = args[i].replaceFirst("^--", "");
      if (name.equals("exit-when-empty")) {
        config.put(name, "1");
      } else if (config.containsKey(name) && i + 1 < args.length) {
        config.put(name, args[++i]);
      } else {
        throw new IllegalArgumentException("unknown or incomplete option " + args[i]);
      }
    }
    return config;
  }

  static String env(String name, String fallback) {
    String value = System.getenv(name);
    return value == null || value.isEmpty() ? fallback : value;
  }

  static void log(String message) {
    for (String secret : new String[] {config.get("api-key"), claimToken}) {
      if (secret != null && !secret.isEmpty()) message = message.replace(secret, "<redacted>");
    }
    System.out.println(config.get("worker") + ": " + message);
  }

  // Just enough JSON for a worker, since the JDK has no parser: read top-level fields of an
  // object as raw JSON text, and quote strings for the bodies we write.

  /** The raw JSON text of a top-level field of a JSON object, or null if absent. */
  static String field(String json, String name) {
    int i = skipSpace(json, json.indexOf('{') + 1);
    while (i < json.length() && json.charAt(i) == '"') {
      int keyEnd = endOfValue(json, i);
      String key = text(json.substring(i, keyEnd));
      int valueStart = skipSpace(json, skipSpace(json, keyEnd) + 1); // past the colon
      int valueEnd = endOfValue(json, valueStart);
      if (key.equals(name)) return json.substring(valueStart, valueEnd);
      i = skipSpace(json, valueEnd);
      if (i < json.length() && json.charAt(i) == ',') i = skipSpace(json, i + 1);
    }
    return null;
  }

  static int endOfValue(String json, int start) {
    int depth = 0;
    boolean inString = false;
    for (int i = start; i < json.length(); i++) {
      char c = json.charAt(i);
      if (inString) {
        if (c == '\\') i++;
        else if (c == '"') {
          inString = false;
          if (depth == 0) return i + 1;
        }
      } else if (c == '"') inString = true;
      else if (c == '{' || c == '[') depth++;
      else if (c == '}' || c == ']') {
        if (depth == 0) return i;
        if (--depth == 0) return i + 1;
      } else if (depth == 0 && (c == ',' || Character.isWhitespace(c))) return i;
    }
    return json.length();
  }

  static int skipSpace(String json, int i) {
    while (i < json.length() && Character.isWhitespace(json.charAt(i))) i++;
    return i;
  }

  /** A raw JSON string as Java text (null for JSON null); other raw values as they are. */
  static String text(String raw) {
    if (raw == null || raw.equals("null")) return null;
    if (!raw.startsWith("\"")) return raw;
    StringBuilder out = new StringBuilder();
    for (int i = 1; i < raw.length() - 1; i++) {
      char c = raw.charAt(i);
      if (c != '\\') {
        out.append(c);
        continue;
      }
      char escaped = raw.charAt(++i);
      switch (escaped) {
        case 'n' -> out.append('\n');
        case 't' -> out.append('\t');
        case 'r' -> out.append('\r');
        case 'b' -> out.append('\b');
        case 'f' -> out.append('\f');
        case 'u' -> {
          out.append((char) Integer.parseInt(raw.substring(i + 1, i + 5), 16));
          i += 4;
        }
        default -> out.append(escaped); // \" \\ \/
      }
    }
    return out.toString();
  }

  static String quote(String text) {
    StringBuilder out = new StringBuilder("\"");
    for (char c : text.toCharArray()) {
      if (c == '"' || c == '\\') out.append('\\').append(c);
      else if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
      else out.append(c);
    }
    return out.append('"').toString();
  }
}
