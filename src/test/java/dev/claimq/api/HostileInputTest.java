package dev.claimq.api;

import static dev.claimq.Api.uniqueQueue;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.MissingNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.claimq.AsAdmin;
import dev.claimq.api.HostileRequests.Against;
import dev.claimq.api.HostileRequests.Draft;
import dev.claimq.api.HostileRequests.Hostile;
import dev.claimq.api.HostileRequests.Json;
import dev.claimq.api.HostileRequests.Operation;
import dev.claimq.api.HostileRequests.Request;
import dev.claimq.api.HostileRequests.Targets;
import dev.claimq.store.ItemFilter;
import dev.claimq.store.ItemState;
import io.agroal.api.AgroalDataSource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublisher;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Hostile input for every operation, body field and parameter of the committed OpenAPI document
 * (the requests come from {@link HostileRequests}): NUL and lone surrogates, bytes that are not
 * UTF-8, numbers a double would round, duplicate keys, times PostgreSQL cannot hold, wrong types,
 * huge and deeply nested values, empty bodies, odd content types, methods, paths and query strings.
 * For every request: no 5xx, every 4xx a problem+json with its own status and a detail, no stack
 * trace or Java class name in any body, and no ERROR in the service's log. The valid ones among
 * them (RTL and zero-width marks, exact numbers) must be stored exactly as sent.
 *
 * <p>Hostile requests aim at a snapshot queue with an item in every state, the held one with its
 * real claim token, so that one which slipped through would change an item: whenever a request may
 * have got through, and at the end, the snapshot must be unchanged. Valid requests go to a scratch
 * queue. Every violation is collected and reported at the end, grouped by class and operation.
 * -Dhostile.seed repeats a run; -Dhostile.scale=full sends at least 20,000 requests instead of
 * 2,000, with random positions, lengths, values and combinations.
 */
@QuarkusTest
class HostileInputTest extends AsAdmin {
  /** What no response may show: a stack trace, or the name of a Java class or package. */
  private static final Pattern LEAKED_INTERNALS =
      Pattern.compile("\\bjava\\.|\\bio\\.quarkus|\\bcom\\.fasterxml|Exception\\b|\\tat ");

  private static final int EXAMPLES = 3;

  /** Every request that broke a rule, one a line, for when three examples are not enough. */
  private static final Path ALL_FINDINGS = Path.of("target", "hostile-input.txt");

  /** Equal JSON, where 1 and 1L are the same number (Jackson's nodes tell them apart). */
  private static final Comparator<JsonNode> SAME_NUMBERS_BY_VALUE =
      (a, b) ->
          a.equals(b)
                  || a.isNumber()
                      && b.isNumber()
                      && a.decimalValue().compareTo(b.decimalValue()) == 0
              ? 0
              : 1;

  @TestHTTPResource("/")
  URI root;

  @Inject AgroalDataSource database;

  private final ObjectMapper json = new ObjectMapper();

  /** Reads answers as they come: numbers of any length, values nested any depth. */
  private final ObjectMapper lenient =
      new ObjectMapper(
          JsonFactory.builder()
              .streamReadConstraints(
                  StreamReadConstraints.builder()
                      .maxNumberLength(Integer.MAX_VALUE)
                      .maxNestingDepth(Integer.MAX_VALUE)
                      .build())
              .build());

  private final HttpClient http =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(10))
          .build();

  private final Findings findings = new Findings();
  private HostileRequests generator;
  private ErrorLog errorLog;
  private Fixture snapshot;
  private String scratchQueue;
  private Targets scratch;
  private int keys;
  private int sent;
  private int serverErrors;
  private int errorLines;
  private int changedItems;
  private int exchanges;

  @Test
  void hostile_requests_are_refused_cleanly_and_change_nothing() throws Exception {
    long seed = Long.getLong("hostile.seed", 42);
    String scale = System.getProperty("hostile.scale", "short");
    boolean full =
        switch (scale) {
          case "short" -> false;
          case "full" -> true;
          default -> throw new IllegalArgumentException("hostile.scale is short or full: " + scale);
        };
    JsonNode document = json.readTree(Files.readString(Path.of("openapi", "openapi.json")));
    generator = new HostileRequests(document, new Random(seed), full);
    List<Hostile> hostiles = generator.generate();
    assertThat(hostiles).as("hostile requests").hasSizeGreaterThanOrEqualTo(full ? 20_000 : 2_000);
    System.out.printf(
        "hostile input: seed %d, scale %s, %d requests (-Dhostile.seed=%d -Dhostile.scale=%s"
            + " repeats this run)%n",
        seed, scale, hostiles.size(), seed, scale);

    long started = System.nanoTime();
    try (ErrorLog log = new ErrorLog()) {
      errorLog = log;
      scratchQueue = uniqueQueue("scratch");
      assertThat(invalidBaseRequests())
          .as("base requests the service refuses: the generator must start from valid ones")
          .isEmpty();
      snapshot = new Fixture(uniqueQueue("hostile"));
      for (Hostile hostile : hostiles) {
        send(hostile);
      }
      afterwards();
    }
    long seconds = Duration.ofNanos(System.nanoTime() - started).toSeconds();

    String figures =
        String.format(
            "hostile input: %d requests, %d 5xx, %d ERROR lines, %d stored items changed (seed %d,"
                + " %s)",
            sent, serverErrors, errorLines, changedItems, seed, scale);
    Files.createDirectories(ALL_FINDINGS.getParent());
    Files.write(ALL_FINDINGS, findings.all(), UTF_8);
    System.out.printf(
        "hostile input: %d s, %d HTTP requests in all (with setup and checks); every violation"
            + " in %s%n",
        seconds, exchanges, ALL_FINDINGS);
    System.out.println(figures);
    if (!findings.isEmpty()) {
      fail(findings.summary(sent, seconds) + figures);
    }
  }

  /** Sends one hostile request and judges its answer. */
  private void send(Hostile hostile) throws Exception {
    Targets targets = hostile.against() == Against.SNAPSHOT ? snapshot.targets : scratch();
    Draft draft = generator.draft(hostile.operation(), targets, "hostile-" + ++keys);
    hostile.mutation().accept(draft);
    Request request = draft.build();
    errorsBetweenRequests();
    Answer answer = exchange(request);
    sent++;

    Verdict verdict = new Verdict();
    judge(hostile, draft, answer, verdict);
    List<String> logged = errorLog.drain();
    if (!logged.isEmpty()) {
      errorLines += logged.size();
      verdict.broke("ERROR log", logged.get(0));
    }
    boolean mayHaveChanged = !request.method().equals("GET") && !answer.clientError();
    if (mayHaveChanged && hostile.against() == Against.SNAPSHOT) {
      List<String> changes = snapshot.changes(false);
      if (!changes.isEmpty()) {
        changedItems += changes.size();
        verdict.broke("changed stored items", String.join(", ", changes));
        // The requests still to come must meet the states they were written for.
        snapshot = new Fixture(uniqueQueue("hostile"));
      }
    } else if (mayHaveChanged && !hostile.operation().enqueues()) {
      scratch = null; // its items may be used up: the next request gets fresh ones
    }
    findings.record(
        hostile.hostileClass(),
        hostile.operation().label(),
        hostile.what() + " -> " + answer.summary(),
        verdict);
  }

  private void judge(Hostile hostile, Draft draft, Answer answer, Verdict verdict)
      throws Exception {
    if (answer.failure() != null) {
      verdict.broke("no answer", answer.failure().toString());
      return;
    }
    int status = answer.status();
    if (status >= 500) {
      serverErrors++;
      verdict.broke("5xx", null);
    }
    if (answer.clientError() && !answer.method().equals("HEAD")) {
      problemShape(answer, verdict);
    }
    Matcher leak = LEAKED_INTERNALS.matcher(answer.text());
    if (leak.find()) {
      String text = answer.text();
      verdict.broke(
          "stack trace or class name",
          Json.show(
              text.substring(
                  Math.max(0, leak.start() - 30), Math.min(text.length(), leak.end() + 50))));
    }
    Operation op = hostile.operation();
    switch (hostile.expect()) {
      case REFUSED -> {
        if (answer.success()) {
          boolean everyEntryRefused =
              op.batch() && status == 200 && entryStatuses(answer).stream().allMatch(s -> s >= 400);
          if (!everyEntryRefused) {
            verdict.broke("accepted", null);
          }
        } else if (status < 500 && !hostile.refusals().contains(status)) {
          verdict.broke("answered " + status, "expected " + new TreeSet<>(hostile.refusals()));
        }
      }
      case ACCEPTED -> {
        boolean accepted =
            answer.success()
                && (!op.batch() || entryStatuses(answer).stream().allMatch(s -> s < 300));
        if (!accepted) {
          verdict.broke("valid request refused", null);
        }
      }
      case STORED_EXACTLY -> storedExactly(op, draft, answer, verdict);
      case STORED_AS_JSONB -> storedAsJsonb(op, draft, answer, verdict);
      case WELL_FORMED -> {
        // nothing more than the checks above
      }
    }
  }

  /** A 4xx must be a problem+json that says its own status and what went wrong. */
  private void problemShape(Answer answer, Verdict verdict) {
    if (!answer.contentType().startsWith("application/problem+json")) {
      verdict.broke(
          "4xx not problem+json",
          "Content-Type '" + answer.contentType() + "', body " + Json.show(cut(answer.text(), 60)));
      return;
    }
    JsonNode problem;
    try {
      problem = json.readTree(answer.body());
    } catch (IOException unreadable) {
      verdict.broke("4xx not problem+json", "unreadable body " + Json.show(cut(answer.text(), 60)));
      return;
    }
    if (problem.path("status").asInt() != answer.status()) {
      verdict.broke("problem status differs", "status " + problem.path("status"));
    }
    if (problem.path("detail").asText("").isBlank()) {
      verdict.broke("problem without detail", null);
    }
  }

  /** Marks are valid characters: the item must read back with exactly what was sent. */
  private void storedExactly(Operation op, Draft draft, Answer answer, Verdict verdict)
      throws Exception {
    // An equal payload under a key enqueued before is a replay (200): as valid, and as exact.
    String id = storedId(op, answer, true);
    if (id == null) {
      verdict.broke("valid request refused", null);
      return;
    }
    JsonNode item = lenient.readTree(get("/v1/items/" + id));
    JsonNode meant = Json.meaning(Json.get(draft.body, op.entry()));
    for (String field : List.of("dedupeKey", "payload")) {
      if (!item.path(field).equals(SAME_NUMBERS_BY_VALUE, meant.path(field))) {
        verdict.broke(
            "read back differs",
            field
                + " sent "
                + Json.show(meant.path(field).toString())
                + ", read back "
                + Json.show(item.path(field).toString()));
      }
    }
  }

  /**
   * jsonb keeps numbers as written (to arbitrary precision): an accepted payload must read back as
   * what jsonb stores for the literal sent. PostgreSQL says what that is; a literal it cannot hold
   * must be refused with 400.
   */
  private void storedAsJsonb(Operation op, Draft draft, Answer answer, Verdict verdict)
      throws Exception {
    Object payload = Json.get(draft.body, HostileRequests.append(op.entry(), "payload"));
    String literal = new String(Json.write(payload), UTF_8);
    String jsonbKeeps = jsonb(literal);
    String id = storedId(op, answer, false);
    if (id == null) {
      if (answer.status() < 500 && answer.status() != 400) {
        verdict.broke("answered " + answer.status(), "expected 201 or 400");
      }
      return;
    }
    if (jsonbKeeps == null) {
      verdict.broke("stored a number jsonb cannot hold", Json.show(literal));
      return;
    }
    String readBack = jsonb(rawValue(get("/v1/items/" + id), "payload"));
    if (!jsonbKeeps.equals(readBack)) {
      verdict.broke(
          "number changed",
          "jsonb keeps "
              + Json.show(jsonbKeeps)
              + ", read back "
              + Json.show(String.valueOf(readBack)));
    }
  }

  /** What jsonb stores for this JSON text, as PostgreSQL writes it; null if it cannot hold it. */
  private String jsonb(String text) {
    if (text == null) {
      return null;
    }
    try (Connection connection = database.getConnection();
        PreparedStatement statement =
            connection.prepareStatement("SELECT CAST(? AS jsonb)::text")) {
      statement.setString(1, text);
      try (ResultSet result = statement.executeQuery()) {
        result.next();
        return result.getString(1);
      }
    } catch (SQLException cannotHold) {
      return null;
    }
  }

  /** The text of one top-level value of a JSON document, exactly as the service wrote it. */
  private String rawValue(String document, String field) throws IOException {
    try (JsonParser parser = lenient.getFactory().createParser(document)) {
      if (parser.nextToken() != JsonToken.START_OBJECT) {
        return null;
      }
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        String name = parser.currentName();
        parser.nextToken();
        int start = (int) parser.currentTokenLocation().getCharOffset();
        if (parser.currentToken().isScalarValue()) {
          parser.getText(); // reads a string to its end
        } else {
          parser.skipChildren();
        }
        if (name.equals(field)) {
          return document.substring(start, (int) parser.currentLocation().getCharOffset());
        }
      }
    }
    return null;
  }

  /** The item's id, if this enqueue (or the batch's first entry) created it, or replayed it. */
  private String storedId(Operation op, Answer answer, boolean orReplayed) throws IOException {
    Set<Integer> stored = orReplayed ? Set.of(201, 200) : Set.of(201);
    if (!op.batch()) {
      boolean ok = stored.contains(answer.status());
      return ok ? lenient.readTree(answer.body()).path("id").asText(null) : null;
    }
    if (answer.status() != 200) {
      return null;
    }
    JsonNode first = lenient.readTree(answer.body()).path("results").path(0);
    boolean ok = stored.contains(first.path("status").asInt());
    return ok ? first.path("item").path("id").asText(null) : null;
  }

  private List<Integer> entryStatuses(Answer answer) {
    List<Integer> statuses = new ArrayList<>();
    try {
      JsonNode results = lenient.readTree(answer.body()).path("results");
      results.forEach(result -> statuses.add(result.path("status").asInt()));
      if (statuses.isEmpty()) {
        statuses.add(0);
      }
    } catch (IOException unreadable) {
      statuses.add(0);
    }
    return statuses;
  }

  /** Every operation's base request must be valid, or the refusals would prove nothing. */
  private List<String> invalidBaseRequests() throws Exception {
    List<String> invalid = new ArrayList<>();
    for (Operation op : generator.operations()) {
      scratch = null;
      // A queue of its own for each: a valid pause would otherwise refuse the next one's claims.
      scratchQueue = uniqueQueue("scratch");
      Request request = generator.draft(op, scratch(), "base-" + ++keys).build();
      Answer answer = exchange(request);
      boolean valid =
          answer.success()
              && (!op.batch() || entryStatuses(answer).stream().allMatch(s -> s < 300));
      if (!valid) {
        invalid.add(op.label() + ": " + answer.status() + " " + Json.show(answer.text()));
      }
    }
    scratch = null;
    errorsBetweenRequests();
    return invalid;
  }

  private void afterwards() throws Exception {
    List<String> changes = snapshot.changes(true);
    changedItems += changes.size();
    Verdict unchanged = new Verdict();
    if (!changes.isEmpty()) {
      unchanged.broke("changed stored items", String.join(", ", changes));
    }
    findings.record("afterwards", "the snapshot items", "compared with the snapshot", unchanged);

    Answer ready = exchange(new Request("GET", "/q/health/ready", null, null, false));
    Verdict up = new Verdict();
    if (ready.status() != 200 || !"UP".equals(readOrMissing(ready).path("status").asText())) {
      up.broke("not ready", ready.summary() + " " + Json.show(cut(ready.text(), 100)));
    }
    findings.record("afterwards", "GET /q/health/ready", "readiness", up);
    errorsBetweenRequests();
  }

  /** ERROR records logged while no hostile request was in flight: setup, checks, late logs. */
  private void errorsBetweenRequests() {
    List<String> logged = errorLog.drain();
    if (!logged.isEmpty()) {
      errorLines += logged.size();
      Verdict verdict = new Verdict();
      verdict.broke("ERROR log", logged.get(0));
      findings.record(
          "between hostile requests", "setup and checks", logged.size() + " ERROR lines", verdict);
    }
  }

  private Targets scratch() throws Exception {
    if (scratch == null) {
      scratch = items(scratchQueue);
    }
    return scratch;
  }

  // ---- HTTP --------------------------------------------------------------------------------

  /**
   * Sends the bytes as built: no re-encoding of the target, no normalising of its path. A
   * connection the server closed after an earlier answer (a 413, a 414) may still sit in the
   * client's pool; a request that found it dead is sent once more on a fresh one.
   */
  private Answer exchange(Request request) {
    Answer answer = exchangeOnce(request);
    return answer.failure() == null ? answer : exchangeOnce(request);
  }

  private Answer exchangeOnce(Request request) {
    exchanges++;
    HttpRequest.Builder builder =
        HttpRequest.newBuilder(
                URI.create(root.getScheme() + "://" + root.getRawAuthority() + request.target()))
            .timeout(Duration.ofSeconds(60))
            .header("Authorization", "Bearer " + AsAdmin.ADMIN);
    if (request.contentType() != null) {
      builder.header("Content-Type", request.contentType());
    }
    request.headers().forEach(builder::header);
    BodyPublisher body =
        request.body() == null
            ? BodyPublishers.noBody()
            : request.chunked()
                ? BodyPublishers.fromPublisher(BodyPublishers.ofByteArray(request.body()))
                : BodyPublishers.ofByteArray(request.body());
    builder.method(request.method(), body);
    try {
      HttpResponse<byte[]> response =
          http.send(builder.build(), HttpResponse.BodyHandlers.ofByteArray());
      return new Answer(
          request.method(),
          response.statusCode(),
          response.headers().firstValue("Content-Type").orElse(""),
          response.body(),
          null);
    } catch (IOException e) {
      return new Answer(request.method(), 0, "", new byte[0], e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private JsonNode call(String method, String target, Object body, int expected)
      throws IOException {
    Answer answer =
        exchange(
            new Request(
                method,
                target,
                body == null ? null : "application/json",
                body == null ? null : json.writeValueAsBytes(body),
                false));
    if (answer.status() != expected) {
      throw new AssertionError(
          method
              + " "
              + target
              + ": "
              + answer.status()
              + " "
              + answer.text()
              + ", not "
              + expected);
    }
    return readOrMissing(answer);
  }

  private String get(String target) {
    Answer answer = exchange(new Request("GET", target, null, null, false));
    if (answer.status() != 200) {
      throw new AssertionError("GET " + target + ": " + answer.status() + " " + answer.text());
    }
    return answer.text();
  }

  private JsonNode readOrMissing(Answer answer) {
    try {
      return answer.body().length == 0
          ? MissingNode.getInstance()
          : lenient.readTree(answer.body());
    } catch (IOException unreadable) {
      return MissingNode.getInstance();
    }
  }

  private record Answer(
      String method, int status, String contentType, byte[] body, IOException failure) {
    String text() {
      return new String(body, UTF_8);
    }

    boolean success() {
      return status >= 200 && status < 300;
    }

    boolean clientError() {
      return status >= 400 && status < 500;
    }

    /** The status and, for a problem, its type and detail: enough to tell answers apart. */
    String summary() {
      if (failure != null) {
        return "no answer";
      }
      if (success() || body.length == 0) {
        return String.valueOf(status);
      }
      if (contentType.startsWith("application/problem+json")) {
        try {
          JsonNode problem = new ObjectMapper().readTree(body);
          String type = problem.path("type").asText("");
          String slug = type.substring(type.lastIndexOf('/') + 1);
          String detail = Json.show(cut(problem.path("detail").asText(""), 70));
          return status + " " + slug + (status >= 500 ? "" : ": " + detail);
        } catch (IOException unreadable) {
          // shown as text below
        }
      }
      return status + " " + contentType + " " + Json.show(cut(text(), 50));
    }
  }

  // ---- the items requests aim at -----------------------------------------------------------

  /** One item in every state, made through the API, and the held item's claim token. */
  private Targets items(String queue) throws IOException {
    // A request of an earlier round may have paused the queue (a valid pause is a valid answer):
    // these claims need it running.
    call("POST", "/v1/queues/" + queue + "/resume", null, 200);
    // And a valid policy change may have asked for approval, which would hold these items.
    call("PUT", "/v1/queues/" + queue + "/policy", Map.of(), 200);
    List<Map<String, Object>> entries = new ArrayList<>();
    for (String state : List.of("pending", "sending", "done", "failed", "cancelled")) {
      entries.add(Map.of("dedupeKey", state + "-" + ++keys, "payload", Map.of("state", state)));
    }
    JsonNode results =
        call("POST", "/v1/queues/" + queue + "/items:batch", Map.of("items", entries), 200)
            .path("results");
    List<String> ids = new ArrayList<>();
    results.forEach(result -> ids.add(result.path("item").path("id").asText()));
    String token = claim(ids.get(1));
    call(
        "POST",
        "/v1/items/" + ids.get(2) + "/complete",
        Map.of("claimToken", claim(ids.get(2))),
        200);
    Map<String, Object> permanent =
        Map.of("claimToken", claim(ids.get(3)), "error", "permanent", "retryable", false);
    call("POST", "/v1/items/" + ids.get(3) + "/fail", permanent, 200);
    call("POST", "/v1/items/" + ids.get(4) + "/cancel", null, 200);
    // One held for approval: enqueued while the queue's policy asked for it, which it then no
    // longer does, so that the other requests' enqueues are not held.
    call("PUT", "/v1/queues/" + queue + "/policy", Map.of("requireApproval", true), 200);
    String awaiting =
        call(
                "POST",
                "/v1/queues/" + queue + "/items",
                Map.of("dedupeKey", "held-" + ++keys, "payload", Map.of("state", "held")),
                201)
            .path("id")
            .asText();
    call("PUT", "/v1/queues/" + queue + "/policy", Map.of(), 200);
    // A cursor of the listing the base request asks for, with every filter set (HostileRequests
    // draft: state held, reason boom, all of time), which has no second page to take one from:
    // made as the service makes it.
    String cursor =
        Params.cursor(
            Long.parseLong(ids.get(4)),
            "items "
                + new ItemFilter(
                        Set.of(queue),
                        ItemState.HELD,
                        "boom",
                        Instant.parse("1970-01-01T00:00:00Z"),
                        Instant.parse("9999-12-31T23:59:59Z"))
                    .canonical());
    // And one of the queue listing as this test's key (every queue) reads it, after the queue.
    String queuesCursor = Params.cursorAfter(queue, "queues []");
    return new Targets(
        queue,
        ids.get(0),
        ids.get(1),
        token,
        ids.get(2),
        ids.get(3),
        ids.get(4),
        awaiting,
        cursor,
        queuesCursor);
  }

  private String claim(String id) throws IOException {
    Map<String, Object> body = Map.of("worker", "hostile-setup", "leaseSeconds", 43_200);
    return call("POST", "/v1/items/" + id + "/claim", body, 200).path("claimToken").asText();
  }

  /** Items in every state in a queue of their own, and what the service shows of them. */
  private final class Fixture {
    final Targets targets;
    private final Map<String, JsonNode> before;
    private final String policy; // as a read shows it: any change moves its updatedAt

    Fixture(String queue) throws IOException {
      targets = items(queue);
      before = shown(queue, true);
      policy = get("/v1/queues/" + queue + "/policy");
      Set<String> states = new TreeSet<>();
      before.values().forEach(item -> states.add(item.path("item").path("state").asText()));
      assertThat(states)
          .containsExactly("cancelled", "done", "failed", "held", "pending", "sending");
    }

    /**
     * What changed since the snapshot: items changed, gone or new. Between requests the listing
     * tells (every change of state shows in an item's fields); at the end, attempts are compared
     * too.
     */
    List<String> changes(boolean withAttempts) throws IOException {
      Map<String, JsonNode> now = shown(targets.queue(), withAttempts);
      List<String> changes = new ArrayList<>();
      before.forEach(
          (id, was) -> {
            JsonNode is = now.get(id);
            String state = was.path("item").path("state").asText();
            if (!withAttempts && is != null) {
              is = ((ObjectNode) is.deepCopy()).set("attempts", was.path("attempts"));
            }
            if (is == null) {
              changes.add("item " + id + " (" + state + ") is gone");
            } else if (!is.equals(was)) {
              changes.add("item " + id + " (" + state + ") changed " + differences(was, is));
            }
          });
      now.forEach(
          (id, is) -> {
            if (!before.containsKey(id)) {
              String dedupeKey = Json.show(is.path("item").path("dedupeKey").asText());
              changes.add("item " + id + " appeared (dedupeKey " + dedupeKey + ")");
            }
          });
      String policyNow = get("/v1/queues/" + targets.queue() + "/policy");
      if (!policyNow.equals(policy)) {
        changes.add("the queue's policy changed to " + cut(policyNow, 200));
      }
      return changes;
    }

    private Map<String, JsonNode> shown(String queue, boolean withAttempts) throws IOException {
      Map<String, JsonNode> items = new TreeMap<>();
      String listing = "/v1/items?queue=" + queue + "&limit=500";
      for (JsonNode item : call("GET", listing, null, 200).path("items")) {
        String id = item.path("id").asText();
        ObjectNode shown = json.createObjectNode();
        shown.set("item", item);
        if (withAttempts) {
          String attempts = "/v1/items/" + id + "/attempts";
          shown.set("attempts", call("GET", attempts, null, 200).path("attempts"));
        }
        items.put(id, shown);
      }
      return items;
    }
  }

  private static String differences(JsonNode was, JsonNode is) {
    Set<String> fields = new LinkedHashSet<>();
    was.path("item")
        .properties()
        .forEach(
            field -> {
              JsonNode now = is.path("item").path(field.getKey());
              if (!now.equals(field.getValue())) {
                fields.add(
                    field.getKey().equals("state") ? "state to " + now.asText() : field.getKey());
              }
            });
    if (!was.path("attempts").equals(is.path("attempts"))) {
      fields.add("attempts history");
    }
    return String.join(", ", fields);
  }

  // ---- the report --------------------------------------------------------------------------

  /** What one request broke: the kinds of rule, with what there is to say about each. */
  private static final class Verdict {
    final Set<String> kinds = new LinkedHashSet<>();
    final Set<String> notes = new LinkedHashSet<>();

    void broke(String kind, String note) {
      kinds.add(kind);
      if (note != null) {
        notes.add(kind + ": " + note);
      }
    }
  }

  /** Every request's verdict, grouped by hostile class and operation, with a few examples. */
  private static final class Findings {
    private final Map<String, Map<String, Group>> groups = new LinkedHashMap<>();
    private final List<String> all = new ArrayList<>();
    private int broken;

    private static final class Group {
      int sent;
      int broken;
      final Map<String, Integer> kinds = new LinkedHashMap<>();
      final Map<String, String> examples = new LinkedHashMap<>(); // by what they differ in
    }

    void record(String hostileClass, String operation, String example, Verdict verdict) {
      Group group =
          groups
              .computeIfAbsent(hostileClass, name -> new LinkedHashMap<>())
              .computeIfAbsent(operation, name -> new Group());
      group.sent++;
      if (verdict.kinds.isEmpty()) {
        return;
      }
      broken++;
      group.broken++;
      String notes = String.join("; ", verdict.notes);
      all.add(
          String.join(
              " | ", hostileClass, operation, example, String.join(", ", verdict.kinds), notes));
      verdict.kinds.forEach(kind -> group.kinds.merge(kind, 1, Integer::sum));
      // Examples that differ in the field or parameter, or in what they broke, say the most.
      String[] words = example.split(" ", 3);
      String differsIn = words[0] + " " + (words.length > 1 ? words[1] : "") + verdict.kinds;
      if (group.examples.size() < EXAMPLES) {
        String line = cut(example, 140) + (notes.isEmpty() ? "" : "  [" + cut(notes, 160) + "]");
        group.examples.putIfAbsent(differsIn, line);
      }
    }

    boolean isEmpty() {
      return broken == 0;
    }

    List<String> all() {
      return all;
    }

    String summary(int sent, long seconds) {
      StringBuilder summary = new StringBuilder();
      summary
          .append(broken)
          .append(" of ")
          .append(sent)
          .append(" hostile requests broke a rule (")
          .append(seconds)
          .append(" s). By class, then operation: requests that broke one of those sent, how:\n");
      groups.forEach(
          (hostileClass, operations) -> {
            int classSent = operations.values().stream().mapToInt(group -> group.sent).sum();
            int classBroken = operations.values().stream().mapToInt(group -> group.broken).sum();
            if (classBroken == 0) {
              return;
            }
            summary
                .append(hostileClass)
                .append(": ")
                .append(classBroken)
                .append(" of ")
                .append(classSent)
                .append('\n');
            operations.forEach(
                (operation, group) -> {
                  if (group.broken == 0) {
                    return;
                  }
                  List<String> kinds = new ArrayList<>();
                  group.kinds.forEach((kind, count) -> kinds.add(kind + " " + count));
                  summary
                      .append("  ")
                      .append(operation)
                      .append(": ")
                      .append(group.broken)
                      .append(" of ")
                      .append(group.sent)
                      .append(" (")
                      .append(String.join(", ", kinds))
                      .append(")\n");
                  group
                      .examples
                      .values()
                      .forEach(example -> summary.append("      ").append(example).append('\n'));
                });
          });
      return summary.toString();
    }
  }

  private static String cut(String text, int length) {
    return text.length() <= length ? text : text.substring(0, length) + "…";
  }

  /**
   * The service's ERROR records while the test runs: a JUL handler on the root logger, since JBoss
   * LogManager is the JUL log manager in tests and its ERROR is JUL's SEVERE.
   */
  private static final class ErrorLog extends Handler implements AutoCloseable {
    private final Logger rootLogger = Logger.getLogger("");
    private final List<String> records = new ArrayList<>();

    ErrorLog() {
      rootLogger.addHandler(this);
    }

    @Override
    public synchronized void publish(LogRecord record) {
      if (record.getLevel().intValue() >= Level.SEVERE.intValue()) {
        Throwable cause = record.getThrown();
        while (cause != null && cause.getCause() != null && cause.getCause() != cause) {
          cause = cause.getCause();
        }
        String because =
            cause == null
                ? ""
                : " (" + cause.getClass().getSimpleName() + ": " + cause.getMessage() + ")";
        String logger = String.valueOf(record.getLoggerName());
        String line =
            logger.substring(logger.lastIndexOf('.') + 1) + ": " + record.getMessage() + because;
        records.add(line.replaceAll("\\s*\\R\\s*", " / ")); // one line per record
      }
    }

    synchronized List<String> drain() {
      List<String> drained = List.copyOf(records);
      records.clear();
      return drained;
    }

    @Override
    public void flush() {}

    @Override
    public void close() {
      rootLogger.removeHandler(this);
    }
  }
}
