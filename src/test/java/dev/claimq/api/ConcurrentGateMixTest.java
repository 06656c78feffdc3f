package dev.claimq.api;

import static dev.claimq.Api.claim;
import static dev.claimq.Api.claimNext;
import static dev.claimq.Api.complete;
import static dev.claimq.Api.enqueue;
import static dev.claimq.Api.fail;
import static dev.claimq.Api.heartbeat;
import static dev.claimq.Api.json;
import static dev.claimq.Api.release;
import static dev.claimq.Api.uniqueQueue;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import dev.claimq.AsAdmin;
import dev.claimq.LogCapture;
import dev.claimq.Race;
import dev.claimq.mcp.McpClients;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.net.URI;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.logging.Level;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * What ConcurrentMixTest leaves out, in its spirit: the approval gate and the agents' MCP tools, on
 * real threads, on a few items of one queue. The queue requires approval most of the time:
 * operators approve and reject held items one at a time and in bulk (dry runs too), retry rejected
 * proposals (back to held) and cancel, and change the queue's policy (the gate switched off and on,
 * the other settings changed) while agents enqueue, one at a time, in batches and over MCP, and
 * workers claim, report and release the same items. MCP agents also follow their work
 * (get_work_status, list_my_work). No answer is a 5xx or undocumented, nothing is logged as an
 * ERROR, and afterwards the items are consistent: one per key, sending exactly when an attempt is
 * open, and no item was ever claimed while held: every attempt of an item that was held comes after
 * its one approval, and a held item has never been claimed since.
 */
@QuarkusTest
class ConcurrentGateMixTest extends AsAdmin {
  private static final int ITEMS = 20;
  private static final int THREADS = 10;
  private static final int AGENTS = 3;
  private static final Duration ROUND = Duration.ofSeconds(2);
  private static final int ROUNDS = 6;
  private static final Set<String> STATES =
      Set.of("held", "pending", "sending", "done", "failed", "cancelled");

  @Inject DataSource dataSource;

  @TestHTTPResource("/")
  URI root;

  record Claim(String id, String token) {}

  private final ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
  private final Map<String, Integer> calls = new ConcurrentHashMap<>();
  private final Map<String, Integer> answers = new ConcurrentHashMap<>();

  /** Items whose creating answer said held, and those it said pending (the gate was off). */
  private final Set<String> createdHeld = ConcurrentHashMap.newKeySet();

  private final Set<String> createdPending = ConcurrentHashMap.newKeySet();

  @Test
  void the_gate_and_mcp_amid_every_call_answer_as_documented_and_no_held_item_is_ever_claimed()
      throws Exception {
    String queue = uniqueQueue("gate-mix");
    json()
        .body(
            Map.of(
                "maxAttempts", 100,
                "crashLoopAfter", 100,
                "maxReleases", 1000,
                "requireApproval", true))
        .put("/v1/queues/{q}/policy", queue)
        .then()
        .statusCode(200);
    Map<Integer, List<String>> known = new ConcurrentHashMap<>();
    for (int round = 0; round < ROUNDS; round++) {
      known.put(round, Collections.synchronizedList(new ArrayList<>()));
    }
    for (int i = 0; i < ITEMS / 2; i++) {
      String key = key(0, i);
      Response created = enqueue(queue, Map.of("dedupeKey", key, "payload", payload(key)));
      created.then().statusCode(201);
      createdHeld.add(created.path("id"));
      known.get(0).add(created.path("id"));
    }
    List<Claim> claims = Collections.synchronizedList(new ArrayList<>());
    List<McpSyncClient> agents = new ArrayList<>();
    for (int i = 0; i < AGENTS; i++) {
      agents.add(McpClients.client(root, "dev-agent-key"));
    }

    try (LogCapture log = LogCapture.start(Level.SEVERE)) {
      Instant start = Instant.now();
      Instant until = start.plus(ROUND.multipliedBy(ROUNDS));
      Race.of(
          THREADS + AGENTS,
          thread -> {
            Random random = new Random(20_261_206L + thread);
            if (thread >= THREADS) {
              Agent agent = new Agent(queue, start, known, agents.get(thread - THREADS), random);
              while (Instant.now().isBefore(until)) {
                agent.step();
              }
              return null;
            }
            Mix mix = new Mix(queue, start, known, claims, random, "w" + thread);
            while (Instant.now().isBefore(until)) {
              mix.step();
            }
            return null;
          });
      given().post("/v1/queues/{q}/resume", queue).then().statusCode(200);
      assertThat(log.errors()).as("ERROR log records during the mix").isEmpty();
    } finally {
      agents.forEach(McpSyncClient::closeGracefully);
    }

    assertThat(wrong).as("answers not documented for their calls").isEmpty();
    assertThat(calls.keySet())
        .as("the kinds of call that ran")
        .containsAll(Mix.KINDS)
        .containsAll(Agent.KINDS);
    assertThat(createdHeld).as("items created held").isNotEmpty();
    assertThat(createdPending).as("items created while the gate was off").isNotEmpty();

    List<Map<String, Object>> every = new ArrayList<>();
    for (int round = 0; round < ROUNDS; round++) {
      for (int i = 0; i < ITEMS; i++) {
        every.add(Map.of("dedupeKey", key(round, i), "payload", payload(key(round, i))));
      }
    }
    json()
        .body(Map.of("items", every))
        .post("/v1/queues/{q}/items:batch", queue)
        .then()
        .statusCode(200);
    ItemRows.consistent(dataSource, queue, ROUNDS * ITEMS);

    // The gate. An item is held only from its enqueue, or from a retry of its rejection, until an
    // approval or a rejection; once approved, it is not held again. So an item is approved once at
    // most, never rejected after its approval, and every attempt comes after the approval.
    Map<String, String> approvals =
        rows(
            "SELECT x.item_id, count(*) FROM item_action x JOIN item i ON i.id = x.item_id"
                + " WHERE i.queue = ? AND x.action = 'approve' GROUP BY x.item_id",
            queue,
            row -> Map.entry(row.getString(1), row.getString(2)));
    assertThat(approvals).as("approvals per item").isNotEmpty().allSatisfy((k, n) -> "1".equals(n));
    assertThat(
            rows(
                "SELECT x.item_id, x.action FROM item_action x JOIN item i ON i.id = x.item_id"
                    + " WHERE i.queue = ? AND x.action = 'reject'"
                    + " AND EXISTS (SELECT FROM item_action y WHERE y.item_id = x.item_id"
                    + "             AND y.action = 'approve' AND y.id < x.id)",
                queue,
                row -> Map.entry(row.getString(1), row.getString(2))))
        .as("items rejected after their approval")
        .isEmpty();
    // A claim sees the item pending only in a snapshot taken after the approval committed; the
    // claim's time is taken as its statement starts, just before that snapshot, and the approval's
    // before it writes and commits: every attempt of an item that was ever held (approved or
    // rejected) is claimed at or after its approval's time.
    assertThat(
            rows(
                "SELECT a.item_id, a.attempt || ' at ' || a.claimed_at FROM attempt a"
                    + " JOIN item i ON i.id = a.item_id WHERE i.queue = ?"
                    + " AND EXISTS (SELECT FROM item_action x WHERE x.item_id = i.id"
                    + "             AND x.action IN ('approve', 'reject'))"
                    + " AND NOT EXISTS (SELECT FROM item_action x WHERE x.item_id = i.id"
                    + "                 AND x.action = 'approve' AND x.at <= a.claimed_at)",
                queue,
                row -> Map.entry(row.getString(1), row.getString(2))))
        .as("attempts of an item that was held, not after its approval")
        .isEmpty();
    Map<String, String> gate =
        rows(
            "SELECT i.id, i.state || ' attempts=' || i.attempts"
                + " || ' tries=' || (SELECT count(*) FROM attempt a WHERE a.item_id = i.id)"
                + " || ' token=' || (i.claim_token IS NOT NULL)"
                + " || ' approved=' || EXISTS (SELECT FROM item_action x WHERE x.item_id = i.id"
                + "                            AND x.action = 'approve')"
                + " || ' last=' || coalesce((SELECT x.action FROM item_action x"
                + "                          WHERE x.item_id = i.id ORDER BY x.id DESC LIMIT 1),"
                + "                         '-')"
                + " || ' before=' || coalesce((SELECT x.action FROM item_action x"
                + "                            WHERE x.item_id = i.id"
                + "                            ORDER BY x.id DESC OFFSET 1 LIMIT 1), '-')"
                + " FROM item i WHERE i.queue = ?",
            queue,
            row -> Map.entry(row.getString(1), row.getString(2)));
    for (Map.Entry<String, String> item : gate.entrySet()) {
      String id = item.getKey();
      String facts = item.getValue();
      if (facts.startsWith("held ")) {
        // Held from its enqueue (no action) or from a retry of its rejection; never claimed since.
        assertThat(facts)
            .as("held item %s", id)
            .contains(" attempts=0 ", " token=false ", " approved=false ")
            .matches(".* last=(- before=-|retry before=reject)$");
      }
      if (createdHeld.contains(id) && !facts.contains(" approved=true ")) {
        assertThat(facts).as("item %s created held, never approved", id).contains(" tries=0 ");
      }
      if (createdPending.contains(id)) {
        assertThat(facts)
            .as("item %s created pending", id)
            .doesNotContain(" approved=true ", "=reject");
      }
      if (facts.contains(" last=reject ")) {
        assertThat(facts).as("item %s rejected last", id).startsWith("cancelled ");
      }
    }
    System.out.printf("ConcurrentGateMixTest: %s%n", new TreeMap<>(answers));
  }

  /** One REST thread's calls: a worker's, an agent's and an operator's, at random. */
  final class Mix {
    static final List<String> KINDS =
        List.of(
            "enqueue",
            "enqueue:batch",
            "claim",
            "claim-next",
            "claim:batch",
            "heartbeat",
            "release",
            "complete",
            "fail",
            "items:complete",
            "approve",
            "reject",
            "items:approve",
            "items:reject",
            "retry",
            "cancel",
            "items:retry",
            "items:cancel",
            "policy",
            "pause",
            "resume");

    private final String queue;
    private final Instant start;
    private final Map<Integer, List<String>> known;
    private final List<Claim> claims;
    private final Random random;
    private final String worker;
    private final List<Claim> mine = new ArrayList<>();

    Mix(
        String queue,
        Instant start,
        Map<Integer, List<String>> known,
        List<Claim> claims,
        Random random,
        String worker) {
      this.queue = queue;
      this.start = start;
      this.known = known;
      this.claims = claims;
      this.random = random;
      this.worker = worker;
    }

    void step() {
      int roll = random.nextInt(100);
      if (roll < 6) {
        String key = key();
        Response answer =
            enqueue(
                queue,
                Map.of(
                    "dedupeKey", key, "payload", random.nextInt(10) == 0 ? "other" : payload(key)));
        check("enqueue", answer, Set.of(200, 201, 422));
        if (answer.statusCode() < 300) {
          created(answer.path("id"), answer.path("state"), answer.statusCode() == 201);
        }
      } else if (roll < 11) {
        List<Map<String, Object>> entries = new ArrayList<>();
        for (int n = 1 + random.nextInt(8); n > 0; n--) {
          String key = key();
          entries.add(Map.of("dedupeKey", key, "payload", payload(key)));
        }
        Response answer =
            json().body(Map.of("items", entries)).post("/v1/queues/{q}/items:batch", queue);
        if (check("enqueue:batch", answer, Set.of(200))) {
          entryStatuses("enqueue:batch", answer, Set.of(200, 201, 422));
          List<Integer> statuses = answer.path("results.status");
          for (int i = 0; i < statuses.size(); i++) {
            if (statuses.get(i) < 300) {
              created(
                  answer.path("results[" + i + "].item.id"),
                  answer.path("results[" + i + "].item.state"),
                  statuses.get(i) == 201);
            }
          }
        }
      } else if (roll < 17) {
        Response answer = claim(id(), Map.of("worker", worker, "leaseSeconds", lease()));
        if (check("claim", answer, Set.of(200, 204))) {
          claimed(answer.path("id"), answer.path("claimToken"));
        }
      } else if (roll < 24) {
        Response answer = claimNext(queue, Map.of("worker", worker, "leaseSeconds", lease()));
        if (check("claim-next", answer, Set.of(200, 204))) {
          claimed(answer.path("id"), answer.path("claimToken"));
        }
      } else if (roll < 28) {
        Response answer =
            json()
                .body(
                    Map.of("worker", worker, "leaseSeconds", lease(), "max", 1 + random.nextInt(5)))
                .post("/v1/queues/{q}/claim:batch", queue);
        if (check("claim:batch", answer, Set.of(200, 204))) {
          List<String> ids = answer.path("items.id");
          List<String> tokens = answer.path("items.claimToken");
          for (int i = 0; i < ids.size(); i++) {
            claimed(ids.get(i), tokens.get(i));
          }
        }
      } else if (roll < 30) {
        Claim c = claimToReport();
        check(
            "heartbeat",
            heartbeat(c.id(), Map.of("claimToken", c.token(), "leaseSeconds", lease())),
            Set.of(200, 409));
      } else if (roll < 32) {
        Claim c = claimToReport();
        check("release", release(c.id(), Map.of("claimToken", c.token())), Set.of(200, 409));
      } else if (roll < 39) {
        Claim c = claimToReport();
        Map<String, Object> body = new HashMap<>();
        body.put("claimToken", c.token());
        if (random.nextBoolean()) {
          body.put("externalRef", "ref-" + random.nextInt(3));
        }
        check("complete", complete(c.id(), body), Set.of(200, 409));
      } else if (roll < 44) {
        Claim c = claimToReport();
        Map<String, Object> body = new HashMap<>();
        body.put("claimToken", c.token());
        body.put("error", "boom " + random.nextInt(3));
        body.put("retryable", random.nextInt(3) > 0);
        body.put("sent", random.nextInt(3) == 0 ? "unknown" : "no");
        body.put("retryAfterSeconds", 0);
        check("fail", fail(c.id(), body), Set.of(200, 409));
      } else if (roll < 48) {
        List<Map<String, Object>> entries = new ArrayList<>();
        for (int n = 1 + random.nextInt(5); n > 0; n--) {
          Claim c = claimToReport();
          entries.add(Map.of("id", c.id(), "claimToken", c.token()));
        }
        Response answer = json().body(Map.of("items", entries)).post("/v1/items:complete");
        if (check("items:complete", answer, Set.of(200))) {
          entryStatuses("items:complete", answer, Set.of(200, 409));
        }
      } else if (roll < 58) {
        Map<String, Object> body = new HashMap<>();
        if (random.nextBoolean()) {
          body.put("note", "ok " + random.nextInt(3));
        }
        check("approve", json().body(body).post("/v1/items/{id}/approve", id()), Set.of(200, 409));
      } else if (roll < 64) {
        check(
            "reject",
            json()
                .body(Map.of("reason", "no " + random.nextInt(3)))
                .post("/v1/items/{id}/reject", id()),
            Set.of(200, 409));
      } else if (roll < 68) {
        check("items:approve", json().body(bulk()).post("/v1/items:approve"), Set.of(200));
      } else if (roll < 71) {
        Map<String, Object> body = bulk();
        body.put("reason", "bulk no");
        check("items:reject", json().body(body).post("/v1/items:reject"), Set.of(200));
      } else if (roll < 79) {
        check("retry", given().post("/v1/items/{id}/retry", id()), Set.of(200, 409));
      } else if (roll < 81) {
        check("cancel", given().post("/v1/items/{id}/cancel", id()), Set.of(200, 409));
      } else if (roll < 86) {
        Map<String, Object> body = bulk();
        body.put("state", random.nextInt(3) == 0 ? "failed" : "cancelled");
        check("items:retry", json().body(body).post("/v1/items:retry"), Set.of(200));
      } else if (roll < 88) {
        Map<String, Object> body = bulk();
        body.put("state", random.nextBoolean() ? "failed" : "pending");
        check("items:cancel", json().body(body).post("/v1/items:cancel"), Set.of(200));
      } else if (roll < 95) {
        check(
            "policy", json().body(policy()).put("/v1/queues/{q}/policy", queue), Set.of(200, 422));
      } else if (roll < 97) {
        check("pause", given().post("/v1/queues/{q}/pause", queue), Set.of(200));
      } else {
        check("resume", given().post("/v1/queues/{q}/resume", queue), Set.of(200));
      }
    }

    /** The gate mostly on, now and then off or left out; the other settings at random. */
    private Map<String, Object> policy() {
      Map<String, Object> body = new LinkedHashMap<>();
      int gate = random.nextInt(10);
      if (gate < 7) {
        body.put("requireApproval", true);
      } else if (gate < 9) {
        body.put("requireApproval", false);
      }
      body.put("maxAttempts", 50 + random.nextInt(51));
      body.put("crashLoopAfter", 100);
      body.put("maxReleases", 1000);
      if (random.nextBoolean()) {
        body.put("leaseSeconds", 20 + random.nextInt(40));
      }
      if (random.nextBoolean()) {
        body.put("onUnknownOutcome", random.nextBoolean() ? "hold" : "retry");
      }
      if (random.nextInt(3) == 0) {
        body.put("backoffBaseSeconds", 1);
        body.put("backoffCapSeconds", 1 + random.nextInt(3));
      }
      if (random.nextInt(4) == 0) {
        // Often too short for the worst case of 50 to 100 attempts: 422, documented.
        body.put("providerKeyTtl", random.nextBoolean() ? "PT24H" : "PT87600H");
      }
      return body;
    }

    private Map<String, Object> bulk() {
      Map<String, Object> body = new LinkedHashMap<>();
      body.put("queue", queue);
      body.put("limit", 1 + random.nextInt(4));
      if (random.nextInt(4) == 0) {
        body.put("dryRun", true);
      }
      return body;
    }

    private void created(String id, String state, boolean isNew) {
      if (!STATES.contains(state)) {
        wrong.add("enqueue answered state " + state + " for " + id);
      }
      if (isNew) {
        (switch (state) {
              case "held" -> createdHeld;
              case "pending" -> createdPending;
              default -> {
                wrong.add("a new item " + id + " in state " + state);
                yield createdPending;
              }
            })
            .add(id);
      }
      learn(known, start, id);
    }

    private String key() {
      return ConcurrentGateMixTest.key(start, random);
    }

    private String id() {
      return ConcurrentGateMixTest.id(known, start, random);
    }

    private int lease() {
      return random.nextInt(4) == 0 ? 1 + random.nextInt(2) : 30;
    }

    private void claimed(String id, String token) {
      if (id == null || token == null) {
        return;
      }
      Claim c = new Claim(id, token);
      mine.add(c);
      claims.add(c);
    }

    private Claim claimToReport() {
      int pick = random.nextInt(10);
      if (!mine.isEmpty() && pick < 6) {
        return mine.remove(mine.size() - 1);
      }
      synchronized (claims) {
        if (!claims.isEmpty() && pick < 9) {
          int size = claims.size();
          return claims.get(size - 1 - random.nextInt(Math.min(size, 40)));
        }
      }
      return new Claim(id(), "never-issued-" + random.nextInt(1000));
    }

    private boolean check(String kind, Response answer, Set<Integer> documented) {
      return ConcurrentGateMixTest.this.check(
          kind, answer.statusCode(), documented, answer::asString);
    }

    private void entryStatuses(String kind, Response answer, Set<Integer> documented) {
      List<Integer> statuses = answer.path("results.status");
      for (int i = 0; i < statuses.size(); i++) {
        answers.merge(kind + " entry " + statuses.get(i), 1, Integer::sum);
        if (!documented.contains(statuses.get(i))) {
          wrong.add(kind + " entry " + i + " " + statuses.get(i) + " " + answer.asString());
        }
      }
    }
  }

  /** One MCP agent's calls on the same keys and items, through its own session. */
  final class Agent {
    static final List<String> KINDS =
        List.of("mcp:enqueue_work", "mcp:get_work_status", "mcp:list_my_work");

    private final String queue;
    private final Instant start;
    private final Map<Integer, List<String>> known;
    private final McpSyncClient client;
    private final Random random;
    private String cursor;
    private String cursorState;

    Agent(
        String queue,
        Instant start,
        Map<Integer, List<String>> known,
        McpSyncClient client,
        Random random) {
      this.queue = queue;
      this.start = start;
      this.known = known;
      this.client = client;
      this.random = random;
    }

    void step() {
      int roll = random.nextInt(10);
      if (roll < 4) {
        String key = key(start, random);
        Map<String, Object> arguments = new LinkedHashMap<>();
        arguments.put("queue", queue);
        arguments.put("dedupeKey", key);
        arguments.put("payload", random.nextInt(10) == 0 ? "other" : payload(key));
        Map<String, Object> answer = call("enqueue_work", arguments, Set.of(422));
        if (answer != null && answer.get("item") instanceof Map<?, ?> item) {
          String id = (String) item.get("id");
          String state = (String) item.get("state");
          if (!STATES.contains(state)) {
            wrong.add("enqueue_work answered state " + state);
          }
          if ("created".equals(answer.get("result"))) {
            if ("held".equals(state)) {
              createdHeld.add(id);
            } else if ("pending".equals(state)) {
              createdPending.add(id);
            } else {
              wrong.add("enqueue_work created " + id + " in state " + state);
            }
          }
          learn(known, start, id);
        }
      } else if (roll < 8) {
        Map<String, Object> arguments =
            random.nextBoolean()
                ? Map.of("id", id(known, start, random))
                : Map.of("queue", queue, "dedupeKey", key(start, random));
        Map<String, Object> answer = call("get_work_status", arguments, Set.of(404));
        if (answer != null && !STATES.contains(answer.get("state"))) {
          wrong.add("get_work_status answered " + answer);
        }
      } else {
        Map<String, Object> arguments = new LinkedHashMap<>();
        String state =
            random.nextBoolean() ? List.copyOf(STATES).get(random.nextInt(STATES.size())) : null;
        if (cursor != null && random.nextBoolean()) {
          // The next page of the listing the cursor came from: the same state (another is 400).
          state = cursorState;
          arguments.put("cursor", cursor);
        }
        if (state != null) {
          arguments.put("state", state);
        }
        arguments.put("limit", 1 + random.nextInt(20));
        Map<String, Object> answer = call("list_my_work", arguments, Set.of());
        cursor = answer == null ? null : (String) answer.get("nextCursor");
        cursorState = state;
      }
    }

    /** The structured answer, or null after a documented refusal (recorded when not). */
    @SuppressWarnings("unchecked")
    private Map<String, Object> call(
        String tool, Map<String, Object> arguments, Set<Integer> refusals) {
      String kind = "mcp:" + tool;
      CallToolResult result;
      try {
        result = client.callTool(new McpSchema.CallToolRequest(tool, arguments));
      } catch (RuntimeException e) {
        calls.merge(kind, 1, Integer::sum);
        wrong.add(kind + " " + arguments + " threw " + e);
        return null;
      }
      Map<String, Object> structured = (Map<String, Object>) result.structuredContent();
      if (Boolean.TRUE.equals(result.isError())) {
        Object status = structured == null ? null : structured.get("status");
        int code = status instanceof Number n ? n.intValue() : 0;
        check(kind, code, refusals, result::toString);
        return null;
      }
      check(kind, 200, Set.of(200), result::toString);
      return structured;
    }
  }

  private boolean check(
      String kind, int status, Set<Integer> documented, java.util.function.Supplier<String> body) {
    calls.merge(kind, 1, Integer::sum);
    answers.merge(kind + " " + status, 1, Integer::sum);
    if (documented.contains(status)) {
      return status == 200 || status == 201;
    }
    wrong.add(kind + " " + status + " " + body.get());
    return false;
  }

  private static int round(Instant start) {
    long round = Duration.between(start, Instant.now()).toMillis() / ROUND.toMillis();
    return (int) Math.min(round, ROUNDS - 1);
  }

  /** A key of this round, now and then of the one before. */
  private static String key(Instant start, Random random) {
    int round = round(start);
    return key(round > 0 && random.nextInt(10) == 0 ? round - 1 : round, random.nextInt(ITEMS));
  }

  /** The id of an item of this round, now and then of an earlier one. */
  private static String id(Map<Integer, List<String>> known, Instant start, Random random) {
    for (int round = round(start); round >= 0; round--) {
      List<String> ids = known.get(round);
      synchronized (ids) {
        if (!ids.isEmpty() && (round == 0 || random.nextInt(6) > 0)) {
          return ids.get(random.nextInt(ids.size()));
        }
      }
    }
    throw new IllegalStateException("no item known");
  }

  private static void learn(Map<Integer, List<String>> known, Instant start, String id) {
    List<String> ids = known.get(round(start));
    synchronized (ids) {
      if (id != null && known.values().stream().noneMatch(list -> list.contains(id))) {
        ids.add(id);
      }
    }
  }

  private static String key(int round, int i) {
    return "r" + round + "-k" + i;
  }

  private static Map<String, Object> payload(String key) {
    return Map.of("key", key);
  }

  private <K, V> Map<K, V> rows(
      String sql, String queue, ItemRows.RowReader<Map.Entry<K, V>> reader) throws SQLException {
    return ItemRows.rows(dataSource, sql, queue, reader);
  }
}
