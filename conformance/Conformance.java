// The claimq conformance kit: runs a worker, in any language, against a scripted claimq and a
// recording provider, and judges it against the MUSTs of openapi/worker-protocol.md.
//
//   java conformance/Conformance.java --worker "python3 my_worker.py"
//        [--level basic|heartbeat|intent] [--scenario NAME[,NAME...]] [--logs DIR] [--verbose]
//
// Only a JDK (17 or later) is needed, and the worker's own runtime: the kit plays claimq itself
// (in memory, on a loopback port), so it can misbehave on purpose in ways a real service rarely
// does on cue. The worker command runs through /bin/sh, once per scenario, with the usual env:
// CLAIMQ_URL, CLAIMQ_QUEUE, CLAIMQ_API_KEY, CLAIMQ_WORKER, PROVIDER_URL, and two hints that keep
// the run short, CLAIMQ_LEASE_SECONDS=3 and CLAIMQ_WAIT_SECONDS=2. A worker that ignores the hints
// is judged the same, more slowly.
//
// The provider at PROVIDER_URL records every send with its Idempotency-Key:
//   POST PROVIDER_URL         a send; 201 {"id": "snd_…"} unless the scenario scripts otherwise
//   GET  PROVIDER_URL/{key}   200 {"id": …} if a send with that idempotency key went through,
//                             else 404: how a worker asks before resending a possiblySent item
//
// It prints PASS or FAIL per scenario with a one-line reason, the requests seen for each failure,
// and "N passed, M failed"; it exits 1 if any scenario failed, 2 on a usage error.

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;

public class Conformance {

  /** What a worker claims to implement; each level includes the ones before it. */
  enum Level {
    BASIC,
    HEARTBEAT,
    INTENT
  }

  static final int LEASE_HINT = 3;
  static final int WAIT_HINT = 2;
  static final int GRACE_SECONDS = 10;

  public static void main(String[] args) throws Exception {
    Map<String, String> options = options(args);
    if (options == null || options.get("worker") == null) {
      System.err.println(
          "usage: java conformance/Conformance.java --worker \"COMMAND\" [--level"
              + " basic|heartbeat|intent] [--scenario NAME[,NAME...]] [--logs DIR] [--verbose]");
      System.err.println("scenarios: " + Scenario.ALL.stream().map(s -> s.name).toList());
      System.exit(2);
    }
    Level level;
    try {
      level = Level.valueOf(options.getOrDefault("level", "intent").toUpperCase());
    } catch (IllegalArgumentException e) {
      System.err.println("--level must be basic, heartbeat or intent");
      System.exit(2);
      return;
    }
    List<Scenario> chosen = Scenario.ALL;
    if (options.get("scenario") != null) {
      Set<String> names = Set.of(options.get("scenario").split(","));
      chosen = Scenario.ALL.stream().filter(s -> names.contains(s.name)).toList();
      if (chosen.size() != names.size()) {
        System.err.println("unknown scenario in " + names + "; the scenarios are "
            + Scenario.ALL.stream().map(s -> s.name).toList());
        System.exit(2);
      }
    }
    Path logs =
        options.get("logs") != null
            ? Path.of(options.get("logs"))
            : Files.createTempDirectory("claimq-conformance-");
    Files.createDirectories(logs);
    boolean verbose = options.containsKey("verbose");

    Kit kit = new Kit(options.get("worker"), logs);
    System.out.printf(
        "claimq conformance kit: worker \"%s\", level %s; worker logs in %s%n",
        options.get("worker"), level.name().toLowerCase(), logs);
    int passed = 0;
    int failed = 0;
    int skipped = 0;
    try {
      for (Scenario scenario : chosen) {
        if (scenario.level.compareTo(level) > 0) {
          skipped++;
          System.out.printf(
              "SKIP %2d %-34s above level %s%n",
              scenario.number, scenario.name, level.name().toLowerCase());
          continue;
        }
        Run run = kit.run(scenario);
        Verdict verdict = run.verdict;
        if (verdict.pass) {
          passed++;
        } else {
          failed++;
        }
        System.out.printf(
            "%s %2d %-34s %s%n",
            verdict.pass ? "PASS" : "FAIL", scenario.number, scenario.name, verdict.reason);
        if (!verdict.pass || verbose) {
          System.out.println("        MUST: " + scenario.must);
          run.timeline.print("        ");
          System.out.println("        worker log: " + run.logFile);
        }
      }
    } finally {
      kit.close();
    }
    System.out.printf(
        "%d passed, %d failed%s%n",
        passed, failed, skipped > 0 ? ", " + skipped + " above the level asked for" : "");
    System.exit(failed > 0 ? 1 : 0);
  }

  static Map<String, String> options(String[] args) {
    Map<String, String> options = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      if (!arg.startsWith("--")) {
        return null;
      }
      String name = arg.substring(2);
      if (name.equals("verbose")) {
        options.put(name, "true");
      } else if (i + 1 < args.length) {
        options.put(name, args[++i]);
      } else {
        return null;
      }
    }
    return options;
  }

  // ---------------------------------------------------------------------------------------------
  // The scenarios: each scripts the service and the provider, then judges what the worker did.

  record Verdict(boolean pass, String reason) {
    static Verdict pass(String reason) {
      return new Verdict(true, reason);
    }

    static Verdict fail(String reason, Object... args) {
      return new Verdict(false, String.format(reason, args));
    }
  }

  abstract static class Scenario {
    final int number;
    final String name;
    final Level level;
    final String must;

    Scenario(int number, String name, Level level, String must) {
      this.number = number;
      this.name = name;
      this.level = level;
      this.must = must;
    }

    /** Enqueues the scenario's items and scripts the provider. */
    abstract void setUp(Run run);

    /** True once there is enough to judge. */
    abstract boolean settled(Run run);

    /** How long the scenario may take before it is judged anyway. */
    int timeoutSeconds(Run run) {
      return 30;
    }

    /** How long to keep watching after it settled, to see a resend or a repeated report. */
    double quietSeconds() {
      return 1.0;
    }

    abstract Verdict judge(Run run);

    static final List<Scenario> ALL =
        List.of(
            new ClaimSendComplete(),
            new WaitsOnEmpty(),
            new StaleClaimNotResent(),
            new HeartbeatsLongSend(),
            new ReportsProviderFailures(),
            new BacksOffWhenClaimqIsDown(),
            new AsksProviderWhenPossiblySent(),
            new AlreadySentOnHeartbeat(),
            new DeclaresIntent(),
            new SigtermFinishes(),
            new KeepsSecrets(),
            new SaysWhenSendIsUnknown(),
            new SigtermMidReport(),
            new ReportsItsOwnSendAfterAlreadySent());
  }

  /** Whether a worker sent SIGTERM has exited, or had its grace and is judged anyway. */
  static boolean exitedOrOutOfGrace(Run run) {
    return run.exitedAt != null
        || (run.sigtermAt != null && run.now() > run.sigtermAt + GRACE_SECONDS);
  }

  /** Judgements most scenarios share: an item sent once with its key and completed with its ref. */
  static String sentOnceAndCompleted(Run run, Item item) {
    List<Send> sends = run.provider.sendsOf(item.idempotencyKey);
    if (sends.isEmpty()) {
      return "item " + item.id + " was never sent to the provider";
    }
    if (sends.size() > 1) {
      return "item " + item.id + " was sent " + sends.size() + " times";
    }
    if (!"done".equals(item.state)) {
      return "item " + item.id + " is " + item.state + ", not completed";
    }
    if (!Objects.equals(item.externalRef, sends.get(0).id)) {
      return String.format(
          "item %s was completed with externalRef %s; the provider answered %s",
          item.id, quoted(item.externalRef), quoted(sends.get(0).id));
    }
    return null;
  }

  /** An item sent once whose send did not go through (what says how), failed with a reason. */
  static String sentOnceAndFailed(Run run, Item item, String what) {
    int sends = run.provider.sendsOf(item.idempotencyKey).size();
    if (sends != 1) {
      return String.format("item %s was sent %d times, once expected", item.id, sends);
    }
    if (item.failure == null) {
      return String.format("item %s: %s, but the item was %s, not failed", item.id, what, item.state);
    }
    if (!(item.failure.get("error") instanceof String error) || error.isBlank()) {
      return "item " + item.id + ": its fail has no error text";
    }
    return null;
  }

  static String unknownKeys(Run run) {
    for (Send send : run.provider.sends()) {
      if (send.key == null) {
        return "a send reached the provider without an Idempotency-Key header";
      }
      if (run.claimq.itemByKey(send.key) == null) {
        return "a send carried an Idempotency-Key that is no item's idempotencyKey: "
            + quoted(send.key);
      }
    }
    return null;
  }

  static Verdict firstProblem(String... problems) {
    for (String problem : problems) {
      if (problem != null) {
        return Verdict.fail("%s", problem);
      }
    }
    return null;
  }

  static final class ClaimSendComplete extends Scenario {
    ClaimSendComplete() {
      super(
          1,
          "claim-send-complete",
          Level.BASIC,
          "claim, send with the item's idempotencyKey, complete with the provider's reference;"
              + " any 2xx is a send, even one whose body has no reference; a claim answered 200"
              + " without an item is claimed again");
    }

    void setUp(Run run) {
      for (int n = 1; n <= 3; n++) {
        run.claimq.enqueue(Map.of("to", "user" + n + "@example.com", "template", "welcome"));
      }
      // A 2xx without a JSON object to read is still a send: the reference is all that is lost,
      // whether the body is empty (the second item) or text (the third).
      run.provider.script(run.claimq.items().get(1).idempotencyKey, send -> Answer.accepted(""));
      run.provider.script(
          run.claimq.items().get(2).idempotencyKey, send -> Answer.accepted("queued for delivery"));
      // A claim answered 200 without an item is a failed claim: claim again, do not crash.
      run.claimq.answersWithoutItem = 2;
    }

    boolean settled(Run run) {
      return run.claimq.items().stream().allMatch(i -> i.finished());
    }

    Verdict judge(Run run) {
      if (run.exitedAt != null) {
        return Verdict.fail(
            "exited (status %d): a claim answered 200 without an item is a failed claim, not a"
                + " crash",
            run.exitCode);
      }
      for (Item item : run.claimq.items()) {
        Verdict problem = firstProblem(sentOnceAndCompleted(run, item));
        if (problem != null) {
          return problem;
        }
      }
      Verdict problem = firstProblem(unknownKeys(run));
      return problem != null
          ? problem
          : Verdict.pass(
              "3 items sent once each with their key and completed with the reference (none"
                  + " after a 202 with no body or a text one), after two claims answered 200"
                  + " without an item");
    }
  }

  static final class WaitsOnEmpty extends Scenario {
    static final double EMPTY_FOR = 5.0;
    static final int MAX_CLAIMS = 15; // 3 a second: a long-poll or a backoff, never a spin
    /** From then on in the empty stretch, claims are answered 200 without an item, at once. */
    static final double NO_ITEM_FROM = 2.5;

    WaitsOnEmpty() {
      super(
          2,
          "waits-on-empty",
          Level.BASIC,
          "a 204 means wait (long-poll or back off), not spin, and so does a claim answered 200"
              + " without an item (back off); new work is still picked up");
    }

    // The empty stretch starts at the worker's first claim, not at the run's start: a worker
    // whose own start-up is slow (a JVM, a loaded machine) is judged on its claims alone. Its
    // second half answers claims as a broken proxy may, at once and without an item: a worker
    // that claims again at once spins there, though it long-polls on 204.
    void setUp(Run run) {
      run.onceSettled(
          () -> run.firstClaimAsked != null,
          () -> {
            double first = run.firstClaimAsked;
            run.after(
                first + NO_ITEM_FROM - run.now(),
                () -> run.claimq.answersWithoutItem = Integer.MAX_VALUE);
            run.after(
                first + EMPTY_FOR - run.now(),
                () -> {
                  run.claimq.answersWithoutItem = 0;
                  run.claimq.enqueue(Map.of("to", "late@example.com"));
                });
          });
    }

    boolean settled(Run run) {
      return run.claimq.items().size() == 1 && run.claimq.items().get(0).finished();
    }

    int timeoutSeconds(Run run) {
      return (int) EMPTY_FOR + 30;
    }

    Verdict judge(Run run) {
      Double first = run.firstClaimAsked;
      if (first == null) {
        return Verdict.fail("no claim at all in %d s", timeoutSeconds(run));
      }
      // Asked before the item came: a long-polled claim is answered when it does.
      long claims = run.timeline.count(e -> e.isClaim() && e.asked < first + EMPTY_FOR);
      long withoutItem =
          run.timeline.count(
              e -> e.isClaim() && e.text.endsWith(Claimq.AS_A_PROXY) && e.asked < first + EMPTY_FOR);
      if (claims > MAX_CLAIMS) {
        return Verdict.fail(
            "%d claims in %.0f s on an empty queue, %d of them answered 200 without an item: it"
                + " spins on %s (at most %d allowed)",
            claims,
            EMPTY_FOR,
            withoutItem,
            withoutItem > claims / 2 ? "a claim answered without an item" : "204",
            MAX_CLAIMS);
      }
      Item late = run.claimq.items().isEmpty() ? null : run.claimq.items().get(0);
      if (late == null || late.claimedAt == null) {
        return Verdict.fail(
            "the item enqueued %.0f s after the first claim (at +%.2f s) was never claimed",
            EMPTY_FOR, first + EMPTY_FOR);
      }
      Verdict problem = firstProblem(sentOnceAndCompleted(run, late));
      return problem != null
          ? problem
          : Verdict.pass(
              String.format(
                  "%d claims in %.0f s of empty queue from the first at +%.2f s (%d answered"
                      + " 200 without an item); the item enqueued at +%.2f s was claimed at"
                      + " +%.2f s",
                  claims, EMPTY_FOR, first, withoutItem, first + EMPTY_FOR, late.claimedAt));
    }
  }

  static final class StaleClaimNotResent extends Scenario {
    StaleClaimNotResent() {
      super(
          3,
          "stale-claim-not-resent",
          Level.BASIC,
          "a 409 means the claim is gone: do not send again, do not repeat the call, carry on");
    }

    void setUp(Run run) {
      Item item = run.claimq.enqueue(Map.of("to", "stale@example.com"));
      // While the send is at the provider, another worker takes the item over.
      run.provider.script(
          item.idempotencyKey,
          send -> {
            run.claimq.takeOver(item);
            sleep(0.2);
            return Answer.created();
          });
    }

    boolean settled(Run run) {
      return run.timeline.count(e -> e.status == 409) > 0;
    }

    double quietSeconds() {
      return 3.0;
    }

    Verdict judge(Run run) {
      Item item = run.claimq.items().get(0);
      int sends = run.provider.sendsOf(item.idempotencyKey).size();
      if (sends == 0) {
        return Verdict.fail("the item was never sent");
      }
      if (sends > 1) {
        return Verdict.fail("sent %d times: it sent again after its claim was taken away", sends);
      }
      Event first = run.timeline.first(e -> e.status == 409);
      if (first == null) {
        return Verdict.fail("never reported on the item, so it never saw the 409");
      }
      for (String operation : List.of("heartbeat", "intent", "complete", "fail", "release")) {
        Event stale = run.timeline.first(e -> e.status == 409 && e.operation.equals(operation));
        if (stale != null) {
          long repeats =
              run.timeline.count(e -> e.at > stale.at && e.operation.equals(operation));
          if (repeats > 0) {
            return Verdict.fail(
                "repeated %s %d times after it was answered 409", operation, repeats);
          }
        }
      }
      if (run.exitedAt != null) {
        return Verdict.fail(
            "exited (status %d) after the 409: a lost claim is not a crash", run.exitCode);
      }
      if (run.timeline.count(e -> e.isClaim() && e.at > first.at) == 0) {
        return Verdict.fail("stopped claiming after the 409");
      }
      return Verdict.pass("sent once; after the 409 it left the item alone and claimed again");
    }
  }

  static final class HeartbeatsLongSend extends Scenario {
    HeartbeatsLongSend() {
      super(
          4,
          "heartbeats-long-send",
          Level.HEARTBEAT,
          "heartbeat about every third of the lease, so a send 3x the lease keeps its claim");
    }

    void setUp(Run run) {
      Item item = run.claimq.enqueue(Map.of("to", "slow@example.com"));
      run.provider.script(
          item.idempotencyKey,
          send -> {
            sleep(3.0 * item.leaseSeconds);
            return Answer.created();
          });
    }

    boolean settled(Run run) {
      Item item = run.claimq.items().get(0);
      return item.finished() || item.expiredAt != null;
    }

    int timeoutSeconds(Run run) {
      return 3 * lease(run) + 20;
    }

    static int lease(Run run) {
      Item item = run.claimq.items().get(0);
      return item.leaseSeconds > 0 ? item.leaseSeconds : LEASE_HINT;
    }

    Verdict judge(Run run) {
      Item item = run.claimq.items().get(0);
      if (item.claimedAt == null) {
        return Verdict.fail("never claimed the item");
      }
      double lease = item.leaseSeconds;
      List<Double> beats =
          run.timeline.events().stream()
              .filter(e -> e.operation.equals("heartbeat") && e.status == 200)
              .map(e -> e.at)
              .toList();
      if (item.expiredAt != null) {
        return Verdict.fail(
            "the %.0f s lease ran out at +%.1f s during a %.0f s send (%d heartbeats before)",
            lease, item.expiredAt, 3 * lease, beats.size());
      }
      if (beats.size() < 2) {
        return Verdict.fail(
            "%d heartbeats during a send of 3x the %.0f s lease", beats.size(), lease);
      }
      List<Double> gaps = new ArrayList<>();
      double previous = item.claimedAt;
      for (double beat : beats) {
        gaps.add(beat - previous);
        previous = beat;
      }
      for (double gap : gaps) {
        if (gap > lease / 2 + 0.3) {
          return Verdict.fail(
              "a gap of %.2f s between heartbeats with a %.0f s lease: one late heartbeat loses"
                  + " the claim (about every %.1f s expected)",
              gap, lease, lease / 3);
        }
      }
      for (double gap : gaps.subList(1, gaps.size())) {
        if (gap < lease / 6 - 0.1) {
          return Verdict.fail(
              "heartbeats %.2f s apart with a %.0f s lease: far more often than a third of it",
              gap, lease);
        }
      }
      Verdict problem = firstProblem(sentOnceAndCompleted(run, item));
      return problem != null
          ? problem
          : Verdict.pass(
              String.format(
                  "%d heartbeats %s s apart kept a %.0f s lease through a %.0f s send",
                  beats.size(), range(gaps), lease, 3 * lease));
    }
  }

  static final class ReportsProviderFailures extends Scenario {
    ReportsProviderFailures() {
      super(
          5,
          "reports-provider-failures",
          Level.BASIC,
          "429 with Retry-After: fail with retryAfterSeconds, at most 86400; 503 and 408:"
              + " retryable; a permanent 4xx: retryable false");
    }

    void setUp(Run run) {
      Item busy = run.claimq.enqueue(Map.of("to", "busy@example.com"));
      Item invalid = run.claimq.enqueue(Map.of("to", "not an address"));
      Item away = run.claimq.enqueue(Map.of("to", "away@example.com"));
      Item down = run.claimq.enqueue(Map.of("to", "down@example.com"));
      Item slow = run.claimq.enqueue(Map.of("to", "slow@example.com"));
      run.provider.script(busy.idempotencyKey, send -> Answer.tooManyRequests(7));
      run.provider.script(invalid.idempotencyKey, send -> Answer.unprocessable());
      run.provider.script(away.idempotencyKey, send -> Answer.tooManyRequests(172800));
      run.provider.script(down.idempotencyKey, send -> Answer.unavailable(1));
      run.provider.script(slow.idempotencyKey, send -> Answer.requestTimeout());
    }

    boolean settled(Run run) {
      return run.claimq.items().stream().allMatch(Item::finished);
    }

    Verdict judge(Run run) {
      Item busy = run.claimq.items().get(0);
      Item invalid = run.claimq.items().get(1);
      Item away = run.claimq.items().get(2);
      Item down = run.claimq.items().get(3);
      Item slow = run.claimq.items().get(4);
      for (Item item : List.of(busy, invalid, away, down, slow)) {
        Verdict problem =
            firstProblem(sentOnceAndFailed(run, item, "the provider refused the send"));
        if (problem != null) {
          return problem;
        }
      }
      Object retryAfter = busy.failure.get("retryAfterSeconds");
      for (Item item : List.of(busy, down, slow)) {
        if (Boolean.FALSE.equals(item.failure.get("retryable"))) {
          return Verdict.fail(
              "the provider answered %s; the fail said retryable: false, and it is retryable",
              run.provider.sendsOf(item.idempotencyKey).get(0).status());
        }
      }
      if (!(retryAfter instanceof BigDecimal seconds) || seconds.compareTo(BigDecimal.valueOf(7)) != 0) {
        return Verdict.fail(
            "the provider answered 429 with Retry-After: 7; the fail said retryAfterSeconds %s",
            Json.write(retryAfter));
      }
      Object capped = away.failure.get("retryAfterSeconds");
      if (!(capped instanceof BigDecimal most) || most.compareTo(BigDecimal.valueOf(86400)) != 0) {
        return Verdict.fail(
            "the provider answered 429 with Retry-After: 172800; the fail said retryAfterSeconds %s,"
                + " not claimq's maximum 86400",
            Json.write(capped));
      }
      if (!Boolean.FALSE.equals(invalid.failure.get("retryable"))) {
        return Verdict.fail(
            "the provider answered 422; the fail said retryable %s, not false",
            Json.write(invalid.failure.get("retryable")));
      }
      return Verdict.pass(
          "429 failed with retryAfterSeconds 7 (86400 for a Retry-After of 172800); 503 and 408"
              + " retryable; 422 failed with retryable false");
    }
  }

  static final class BacksOffWhenClaimqIsDown extends Scenario {
    static final double ERRORS_FOR = 2.5;
    static final double DOWN_FOR = 2.5;
    static final int MAX_CALLS_IN_ERRORS = 10; // 4 a second
    static final double IDLE_ERRORS_FOR = 3.0;
    static final int MAX_CLAIMS_IN_ERRORS = 12;
    /** How long claims are answered 503 in the second outage, to see the backoff grow. */
    static final double IDLE_OUTAGE = 10.0;
    static final double GROWN_GAP = 2.0;
    static final int MIN_GAPS_FOR_JITTER = 4;
    static final double SAME_GAP = 0.05;

    BacksOffWhenClaimqIsDown() {
      super(
          6,
          "backs-off-when-claimq-is-down",
          Level.BASIC,
          "on 503s and refused connections back off with jitter, finish the item in hand, recover");
    }

    void setUp(Run run) {
      Item item = run.claimq.enqueue(Map.of("to", "outage@example.com"));
      run.onceSettled(
          () -> item.finished(),
          () -> {
            // Then a second outage while the worker is only claiming; new work after it.
            run.idleOutageAt = run.now();
            run.claimq.failing = true;
            run.after(
                IDLE_OUTAGE,
                () -> {
                  run.claimq.failing = false;
                  run.claimq.enqueue(Map.of("to", "after-outage@example.com"));
                });
          });
      // The worker is in the middle of its send when claimq starts answering 503, then stops
      // accepting connections, then comes back: its report must survive all three.
      run.provider.script(
          item.idempotencyKey,
          send -> {
            run.outageStartedAt = run.now();
            run.claimq.failing = true;
            run.after(ERRORS_FOR, run.claimq::stop);
            run.after(
                ERRORS_FOR + DOWN_FOR,
                () -> {
                  run.claimq.failing = false;
                  run.claimq.start();
                  run.outageEndedAt = run.now();
                });
            return Answer.created();
          });
    }

    boolean settled(Run run) {
      return run.claimq.items().size() == 2 && run.claimq.items().get(1).finished();
    }

    int timeoutSeconds(Run run) {
      return 90;
    }

    Verdict judge(Run run) {
      Item item = run.claimq.items().get(0);
      if (run.outageStartedAt == null) {
        return Verdict.fail("the item never reached the provider, so claimq never went down");
      }
      double from = run.outageStartedAt;
      List<Double> during =
          run.timeline.events().stream()
              .filter(e -> e.status == 503 && e.at >= from && e.at < from + ERRORS_FOR)
              .map(e -> e.at)
              .toList();
      if (during.size() > MAX_CALLS_IN_ERRORS) {
        return Verdict.fail(
            "%d calls in %.1f s while claimq answered 503: no backoff", during.size(), ERRORS_FOR);
      }
      if (run.exitedAt != null) {
        return Verdict.fail("exited (status %d) during the outage", run.exitCode);
      }
      if (run.outageEndedAt == null || !item.finished()) {
        return Verdict.fail(
            "the item in hand was never reported after claimq came back (it is %s)", item.state);
      }
      Verdict problem = firstProblem(sentOnceAndCompleted(run, item));
      if (problem != null) {
        return problem;
      }
      double idle = run.idleOutageAt;
      long claims =
          run.timeline.count(
              e -> e.isClaim() && e.status == 503 && e.at >= idle && e.at < idle + IDLE_ERRORS_FOR);
      if (claims > MAX_CLAIMS_IN_ERRORS) {
        return Verdict.fail(
            "%d claims in the first %.0f s of 503s on claim: no backoff", claims, IDLE_ERRORS_FOR);
      }
      // Jitter is judged on the gaps of both outages together: with full jitter and the few calls
      // an outage holds, two gaps within a few hundredths of a second of each other happen by
      // chance about once in fifty runs, four or more almost never. A fixed delay gives four
      // equal gaps as long as it is under about 1.2 s.
      List<Double> idleClaims =
          run.timeline.events().stream()
              .filter(e -> e.isClaim() && e.status == 503 && e.at >= idle)
              .map(e -> e.at)
              .toList();
      List<Double> gaps = gaps(during);
      gaps.addAll(gaps(idleClaims));
      if (gaps.size() >= MIN_GAPS_FOR_JITTER && max(gaps) - min(gaps) < SAME_GAP) {
        return Verdict.fail(
            "retried every %.2f s exactly (%d gaps within %.2f s): no jitter",
            gaps.get(0), gaps.size(), SAME_GAP);
      }
      Item next = run.claimq.items().size() == 2 ? run.claimq.items().get(1) : null;
      if (next == null || !next.finished()) {
        return Verdict.fail("did not pick up new work after claimq came back from 503s on claim");
      }
      // The backoff must grow: with the delay's ceiling doubling per failure (0.5 s x 2^n, full
      // jitter), 10 s of failed claims all but surely hold a gap of 2 s or more, twice the
      // shortest (the chance of none is below one in a hundred thousand). A fixed delay, or a
      // random one under 2 s, never does. The claim that got the new work ends the last gap.
      List<Double> growth = new ArrayList<>(idleClaims);
      growth.add(next.claimedAt);
      List<Double> idleGaps = gaps(growth);
      if (idleGaps.isEmpty() || max(idleGaps) < GROWN_GAP || max(idleGaps) < 2 * min(idleGaps)) {
        return Verdict.fail(
            "claims %s s apart through %.0f s of 503s: the backoff does not grow (a gap of %.0f s"
                + " or more, twice the shortest, expected)",
            range(idleGaps), IDLE_OUTAGE, GROWN_GAP);
      }
      problem = firstProblem(sentOnceAndCompleted(run, next));
      return problem != null
          ? problem
          : Verdict.pass(
              String.format(
                  "%d calls in %.1f s of 503s, completed %.1f s after claimq came back;"
                      + " %d claims in the first %.0f s of 503s on claim, then new work done",
                  during.size(), ERRORS_FOR, item.finishedAt - run.outageEndedAt,
                  claims, IDLE_ERRORS_FOR));
    }
  }

  static final class AsksProviderWhenPossiblySent extends Scenario {
    AsksProviderWhenPossiblySent() {
      super(
          7,
          "asks-provider-when-possibly-sent",
          Level.INTENT,
          "possiblySent: ask the provider by idempotencyKey first; complete with its send if any");
    }

    void setUp(Run run) {
      Item sent = run.claimq.enqueue(Map.of("to", "maybe-sent@example.com"));
      Item unsent = run.claimq.enqueue(Map.of("to", "maybe-not@example.com"));
      for (Item item : List.of(sent, unsent)) {
        item.earlierAttempt(run.claimq.instant(-120), "expired", null);
        item.possiblySent = true;
      }
      // The earlier attempt's send went through; this provider does not dedupe, so a blind
      // resend is a real second send.
      run.provider.recordEarlierSend(sent.idempotencyKey, "snd_earlier_" + sent.id);
      run.provider.dedupes = false;
    }

    boolean settled(Run run) {
      return run.claimq.items().stream().allMatch(Item::finished);
    }

    Verdict judge(Run run) {
      Item sent = run.claimq.items().get(0);
      Item unsent = run.claimq.items().get(1);
      for (Item item : List.of(sent, unsent)) {
        Event lookup =
            run.timeline.first(e -> e.isLookup() && item.idempotencyKey.equals(e.key));
        Event post = run.timeline.first(e -> e.isSend() && item.idempotencyKey.equals(e.key));
        if (lookup == null) {
          return Verdict.fail(
              "item %s was flagged possiblySent and the worker never asked the provider"
                  + " (GET PROVIDER_URL/{idempotencyKey})%s",
              item.id, post != null ? "; it sent blindly" : "");
        }
        if (post != null && post.at < lookup.at) {
          return Verdict.fail("item %s was sent before the provider was asked", item.id);
        }
      }
      int resends = run.provider.sendsOf(sent.idempotencyKey).size();
      if (resends > 0) {
        return Verdict.fail(
            "the provider said item %s was sent already, and it was sent again", sent.id);
      }
      if (!"done".equals(sent.state) || !("snd_earlier_" + sent.id).equals(sent.externalRef)) {
        return Verdict.fail(
            "item %s: the provider had its send snd_earlier_%s, but the item is %s with"
                + " externalRef %s",
            sent.id, sent.id, sent.state, quoted(sent.externalRef));
      }
      Verdict problem = firstProblem(sentOnceAndCompleted(run, unsent));
      return problem != null
          ? problem
          : Verdict.pass("asked first; completed the sent one with its ref, sent the other once");
    }
  }

  /**
   * An item whose earlier attempt's late complete arrives while this attempt's send hangs:
   * heartbeats say alreadySent from then on, and the send then ends with this answer.
   */
  static void alreadySentWhileSending(Run run, String to, Answer then) {
    Item item = run.claimq.enqueue(Map.of("to", to));
    item.earlierAttempt(run.claimq.instant(-120), "expired", null);
    item.alreadySentOnHeartbeat = alreadySent(1, "snd_earlier_" + item.id);
    run.provider.script(
        item.idempotencyKey,
        send -> {
          double until = run.now() + 3.0 * Math.max(1, item.leaseSeconds);
          while (run.timeline.count(e -> e.operation.equals("heartbeat") && e.status == 200) == 0
              && run.now() < until) {
            sleep(0.05);
          }
          sleep(0.3);
          return then;
        });
  }

  static final class AlreadySentOnHeartbeat extends Scenario {
    AlreadySentOnHeartbeat() {
      super(
          8,
          "already-sent-on-heartbeat",
          Level.INTENT,
          "alreadySent on a heartbeat, its own send failed: complete with that externalRef,"
              + " never send again");
    }

    void setUp(Run run) {
      // The send in flight fails, as a provider's timeout would.
      alreadySentWhileSending(run, "late-success@example.com", Answer.unavailable(1));
    }

    boolean settled(Run run) {
      return run.claimq.items().get(0).finished();
    }

    Verdict judge(Run run) {
      Item item = run.claimq.items().get(0);
      String ref = "snd_earlier_" + item.id;
      if (run.timeline.count(e -> e.operation.equals("heartbeat") && e.status == 200) == 0) {
        return Verdict.fail("no heartbeat during a send of 3x the lease, so it never saw alreadySent");
      }
      int sends = run.provider.sendsOf(item.idempotencyKey).size();
      if (sends > 1) {
        return Verdict.fail("sent %d times after a heartbeat said alreadySent", sends);
      }
      if (item.failure != null) {
        return Verdict.fail(
            "failed the item after a heartbeat said alreadySent (%s): it would be sent again",
            Json.write(item.failure.get("error")));
      }
      if (!"done".equals(item.state) || !ref.equals(item.externalRef)) {
        return Verdict.fail(
            "a heartbeat said alreadySent with externalRef %s; the item is %s with externalRef %s",
            ref, item.state, quoted(item.externalRef));
      }
      return Verdict.pass("completed with the earlier send's externalRef " + ref);
    }
  }

  static final class ReportsItsOwnSendAfterAlreadySent extends Scenario {
    ReportsItsOwnSendAfterAlreadySent() {
      super(
          14,
          "reports-its-own-send-after-already-sent",
          Level.INTENT,
          "alreadySent on a heartbeat while its own send goes out: complete with its own"
              + " externalRef, so that the second send is counted");
    }

    void setUp(Run run) {
      // The send in flight goes through all the same: the provider took two.
      alreadySentWhileSending(run, "twice@example.com", Answer.created());
    }

    boolean settled(Run run) {
      return run.claimq.items().get(0).finished();
    }

    Verdict judge(Run run) {
      Item item = run.claimq.items().get(0);
      String earlier = "snd_earlier_" + item.id;
      if (run.timeline.count(e -> e.operation.equals("heartbeat") && e.status == 200) == 0) {
        return Verdict.fail("no heartbeat during a send of 3x the lease, so it never saw alreadySent");
      }
      List<Send> sends = run.provider.sendsOf(item.idempotencyKey);
      if (sends.size() != 1) {
        return Verdict.fail("sent %d times: its own send, once, was all there was to make", sends.size());
      }
      String own = sends.get(0).id();
      if (!"done".equals(item.state) || !own.equals(item.externalRef)) {
        return Verdict.fail(
            "its own send went out as %s after a heartbeat said attempt 1 sent it as %s; the item"
                + " is %s with externalRef %s%s",
            own,
            earlier,
            item.state,
            quoted(item.externalRef),
            earlier.equals(item.externalRef) ? ": the second send is hidden, counted nowhere" : "");
      }
      return Verdict.pass("completed with its own send's externalRef " + own + ": claimq counts it");
    }
  }

  static final class DeclaresIntent extends Scenario {
    DeclaresIntent() {
      super(
          9,
          "declares-intent",
          Level.INTENT,
          "declare the intent before each send, again when its answer is lost; alreadySent on it:"
              + " complete with it, do not send");
    }

    void setUp(Run run) {
      // Its first intent is taken, but the answer is cut off mid-body: lost like any other.
      run.claimq.enqueue(Map.of("to", "intent@example.com")).intentAnswersCut = 1;
      Item sent = run.claimq.enqueue(Map.of("to", "intent-sent@example.com"));
      sent.earlierAttempt(run.claimq.instant(-120), "expired", null);
      sent.alreadySentOnIntent = alreadySent(1, "snd_earlier_" + sent.id);
      // Its first intent's answer is cut off before alreadySent: what arrived reads as "go
      // ahead", but a cut-off answer is lost, so the intent is declared again.
      sent.intentAnswersCut = 1;
    }

    boolean settled(Run run) {
      return run.claimq.items().stream().allMatch(Item::finished);
    }

    Verdict judge(Run run) {
      Item plain = run.claimq.items().get(0);
      Item sent = run.claimq.items().get(1);
      Event post = run.timeline.first(e -> e.isSend() && plain.idempotencyKey.equals(e.key));
      Event intent =
          run.timeline.first(
              e -> e.operation.equals("intent") && e.status == 200 && plain.id.equals(e.itemId));
      if (post == null) {
        return Verdict.fail("item %s was never sent", plain.id);
      }
      if (intent == null || intent.at > post.at) {
        return Verdict.fail("item %s was sent without declaring the intent first", plain.id);
      }
      Verdict problem = firstProblem(sentOnceAndCompleted(run, plain));
      if (problem != null) {
        return problem;
      }
      if (plain.attempts != 1) {
        return Verdict.fail(
            "item %s's intent answer was cut off mid-body and the intent was not declared again:"
                + " the claim was left to expire (done on attempt %d, not 1)",
            plain.id, plain.attempts);
      }
      int sends = run.provider.sendsOf(sent.idempotencyKey).size();
      if (sends > 0) {
        return Verdict.fail(
            "item %s was sent although its intent was answered with alreadySent (the first such"
                + " answer was cut off before alreadySent: a lost answer, not a go-ahead)",
            sent.id);
      }
      String ref = "snd_earlier_" + sent.id;
      if (!"done".equals(sent.state) || !ref.equals(sent.externalRef)) {
        return Verdict.fail(
            "item %s's intent said alreadySent with externalRef %s; the item is %s with %s",
            sent.id, ref, sent.state, quoted(sent.externalRef));
      }
      return Verdict.pass(
          "intent before the send, declared again when its answer was cut off (also when the"
              + " part lost held alreadySent); alreadySent on intent completed without a send");
    }
  }

  static final class SigtermFinishes extends Scenario {
    SigtermFinishes() {
      super(
          10,
          "sigterm-finishes",
          Level.BASIC,
          "on SIGTERM stop claiming, finish (or release) the item in hand, exit 0 in the grace");
    }

    void setUp(Run run) {
      for (int n = 1; n <= 3; n++) {
        run.claimq.enqueue(Map.of("to", "shutdown" + n + "@example.com"));
      }
      // The second send is where the worker gets its SIGTERM: mid-send, the hard case, with an
      // item finished before it whose outcome must not be taken for this one's. The signal goes
      // to every process of the worker, as systemd's default KillMode=control-group or a
      // kill -- -PGID sends it: a helper process that does the send must survive it too.
      AtomicInteger sends = new AtomicInteger();
      for (Item item : run.claimq.items()) {
        run.provider.script(
            item.idempotencyKey,
            send -> {
              if (sends.incrementAndGet() == 2) {
                run.inHand = item;
                run.sigterm();
                sleep(1.0);
              }
              return Answer.created();
            });
      }
    }

    boolean settled(Run run) {
      return exitedOrOutOfGrace(run);
    }

    // The provider records the send the signal came in when it answers it, a second later.
    double quietSeconds() {
      return 1.5;
    }

    Verdict judge(Run run) {
      if (run.sigtermAt == null) {
        return Verdict.fail("no item reached the provider, so no SIGTERM was sent");
      }
      if (run.exitedAt == null) {
        return Verdict.fail("still running %d s after SIGTERM", GRACE_SECONDS);
      }
      Item item = run.inHand;
      if (!item.finished()) {
        return Verdict.fail(
            "exited (status %d) with the item in hand still %s: it waits for its lease instead",
            run.exitCode, item.state);
      }
      if (item.released) {
        return Verdict.fail("released item %s after it had called the provider", item.id);
      }
      double at = run.sigtermAt;
      long claims = run.timeline.count(e -> e.isClaim() && e.at > at);
      if (claims > 0) {
        return Verdict.fail("claimed %d more times after SIGTERM", claims);
      }
      if (run.exitCode != 0) {
        return Verdict.fail("exited with status %d after SIGTERM, not 0", run.exitCode);
      }
      Verdict problem = firstProblem(sentOnceAndCompleted(run, item));
      return problem != null
          ? problem
          : Verdict.pass(
              String.format(
                  "finished the item in hand, claimed nothing more, exited 0 %.1f s after SIGTERM",
                  run.exitedAt - at));
    }
  }

  static final class SigtermMidReport extends Scenario {
    SigtermMidReport() {
      super(
          13,
          "sigterm-mid-report",
          Level.BASIC,
          "on SIGTERM while a complete is in flight, see that report through (repeated after a"
              + " 503), ask for no next item, claim nothing more, exit 0 in the grace");
    }

    void setUp(Run run) {
      for (int n = 1; n <= 2; n++) {
        run.claimq.enqueue(Map.of("to", "report" + n + "@example.com"));
      }
      // The first complete is where the signal comes, to every process of the worker, while
      // the call waits for its answer; the answer is then a 503, so the report has to be made
      // again after the signal: a worker that drops it leaves the item to its lease.
      run.claimq.interceptor =
          call -> {
            if (!call.operation.equals("complete") || run.inHand != null) {
              return null;
            }
            run.inHand =
                run.claimq.items().stream()
                    .filter(item -> item.id.equals(call.itemId))
                    .findFirst()
                    .orElse(null);
            run.sigterm();
            sleep(1.0);
            return Claimq.Reply.problem(503, "unavailable", "the database cannot be reached");
          };
    }

    boolean settled(Run run) {
      return exitedOrOutOfGrace(run);
    }

    Verdict judge(Run run) {
      if (run.sigtermAt == null || run.inHand == null) {
        return Verdict.fail("no complete of a claimed item came, so no SIGTERM was sent");
      }
      if (run.exitedAt == null) {
        return Verdict.fail("still running %d s after SIGTERM", GRACE_SECONDS);
      }
      Item item = run.inHand;
      if (!item.finished()) {
        return Verdict.fail(
            "exited (status %d) with item %s still %s: its complete, answered 503 after the"
                + " SIGTERM, was not made again, so the item waits for its lease",
            run.exitCode, item.id, item.state);
      }
      double at = run.sigtermAt;
      long claims = run.timeline.count(e -> e.isClaim() && e.at > at);
      if (claims > 0) {
        return Verdict.fail(
            "claimed %d more times after SIGTERM (a complete made again after the signal asks for"
                + " no next item)",
            claims);
      }
      if (run.exitCode != 0) {
        return Verdict.fail("exited with status %d after SIGTERM, not 0", run.exitCode);
      }
      Verdict problem = firstProblem(sentOnceAndCompleted(run, item));
      return problem != null
          ? problem
          : Verdict.pass(
              String.format(
                  "completed the item whose complete was answered 503 after the signal, claimed"
                      + " nothing more, exited 0 %.1f s after SIGTERM",
                  run.exitedAt - at));
    }
  }

  static final class KeepsSecrets extends Scenario {
    KeepsSecrets() {
      super(
          11,
          "keeps-secrets",
          Level.BASIC,
          "never log the claim token or the API key, nor pass them to the provider");
    }

    void setUp(Run run) {
      Item stale = run.claimq.enqueue(Map.of("to", "secret1@example.com"));
      Item broken = run.claimq.enqueue(Map.of("to", "secret2@example.com"));
      run.claimq.enqueue(Map.of("to", "secret3@example.com"));
      // A 409 and a failure: the paths where a worker is most tempted to log its whole request.
      run.provider.script(
          stale.idempotencyKey,
          send -> {
            run.claimq.takeOver(stale);
            return Answer.created();
          });
      run.provider.script(broken.idempotencyKey, send -> Answer.unavailable(1));
    }

    boolean settled(Run run) {
      Item stale = run.claimq.items().get(0);
      return run.timeline.count(e -> e.status == 409) > 0
          && run.claimq.items().stream().skip(1).allMatch(Item::finished)
          && stale.claimedAt != null;
    }

    Verdict judge(Run run) {
      // Every log of this kit run so far, this scenario's included.
      for (Path log : run.kit.logFiles) {
        String text;
        try {
          text = Files.readString(log, StandardCharsets.ISO_8859_1);
        } catch (IOException e) {
          return Verdict.fail("cannot read %s: %s", log, e);
        }
        if (text.contains(run.kit.apiKey)) {
          return Verdict.fail("%s contains the API key", log.getFileName());
        }
        for (String token : run.kit.tokens) {
          if (text.contains(token)) {
            return Verdict.fail("%s contains a claim token", log.getFileName());
          }
        }
      }
      for (Send send : run.kit.everySend) {
        if (send.raw.contains(run.kit.apiKey)) {
          return Verdict.fail("the API key was passed to the provider");
        }
        for (String token : run.kit.tokens) {
          if (send.raw.contains(token)) {
            return Verdict.fail("a claim token was passed to the provider");
          }
        }
      }
      return Verdict.pass(
          String.format(
              "%d logs and %d provider requests hold neither the API key nor any of %d tokens",
              run.kit.logFiles.size(), run.kit.everySend.size(), run.kit.tokens.size()));
    }
  }

  static final class SaysWhenSendIsUnknown extends Scenario {
    SaysWhenSendIsUnknown() {
      super(
          12,
          "says-when-send-is-unknown",
          Level.INTENT,
          "a send whose answer is lost after the request went out (a dropped connection, a"
              + " timeout): fail retryable with sent: unknown, not as a send that never happened");
    }

    void setUp(Run run) {
      Item item = run.claimq.enqueue(Map.of("to", "lost-answer@example.com"));
      // The provider reads the whole request, takes the send, and closes the connection without
      // a word: the worker cannot tell whether it acted.
      run.provider.script(item.idempotencyKey, send -> Answer.dropped());
    }

    boolean settled(Run run) {
      return run.claimq.items().get(0).finished();
    }

    Verdict judge(Run run) {
      Item item = run.claimq.items().get(0);
      Verdict problem =
          firstProblem(
              sentOnceAndFailed(
                  run, item, "the provider dropped the connection after taking the send"));
      if (problem != null) {
        return problem;
      }
      if (Boolean.FALSE.equals(item.failure.get("retryable"))) {
        return Verdict.fail("a dropped connection was reported retryable: false; it is retryable");
      }
      if (!"unknown".equals(item.failure.get("sent"))) {
        return Verdict.fail(
            "the provider dropped the connection after the request reached it; the fail said"
                + " sent %s, not \"unknown\": the next claim would not say possiblySent",
            item.failure.containsKey("sent") ? Json.write(item.failure.get("sent")) : "(left out: no)");
      }
      return Verdict.pass("a connection dropped after the request failed retryable, sent unknown");
    }
  }

  static Map<String, Object> alreadySent(int attempt, String externalRef) {
    Map<String, Object> sent = new LinkedHashMap<>();
    sent.put("attempt", attempt);
    sent.put("externalRef", externalRef);
    return sent;
  }

  // ---------------------------------------------------------------------------------------------
  // One scenario's run: the worker process, the scripted service and provider, the timeline.

  static final class Kit implements AutoCloseable {
    final String command;
    final Path logs;
    final String apiKey = "cq_conformance_" + hex(16);
    final Claimq claimq;
    final Provider provider;
    final List<Path> logFiles = new ArrayList<>();
    final Set<String> tokens = ConcurrentHashMap.newKeySet();
    final List<Send> everySend = new ArrayList<>();

    Kit(String command, Path logs) throws IOException {
      this.command = command;
      this.logs = logs;
      this.claimq = new Claimq(this);
      this.provider = new Provider();
      claimq.start();
      provider.start();
    }

    Run run(Scenario scenario) throws Exception {
      Run run = new Run(this, scenario);
      claimq.reset(run);
      provider.reset(run);
      scenario.setUp(run);
      run.start();
      while (!scenario.settled(run) && run.now() < scenario.timeoutSeconds(run)) {
        run.poll();
        sleep(0.05);
      }
      double quietUntil = run.now() + scenario.quietSeconds();
      while (run.now() < quietUntil) {
        run.poll();
        sleep(0.05);
      }
      run.stop();
      everySend.addAll(provider.sends());
      run.verdict = scenario.judge(run);
      return run;
    }

    public void close() {
      claimq.stop();
      provider.stop();
    }
  }

  static final class Run {
    final Kit kit;
    final Scenario scenario;
    final Claimq claimq;
    final Provider provider;
    final Timeline timeline;
    final long startNanos = System.nanoTime();
    final Path logFile;
    Process process;
    volatile Double sigtermAt;
    volatile Double exitedAt;
    volatile Integer exitCode;
    volatile Double outageStartedAt;
    volatile Double outageEndedAt;
    volatile Double idleOutageAt;
    /** When the worker's first claim arrived (a long-polled one is answered later). */
    volatile Double firstClaimAsked;
    private final List<Map.Entry<BooleanSupplier, Runnable>> watches = new ArrayList<>();
    volatile Item inHand;
    Verdict verdict;

    Run(Kit kit, Scenario scenario) {
      this.kit = kit;
      this.scenario = scenario;
      this.claimq = kit.claimq;
      this.provider = kit.provider;
      this.timeline = new Timeline(this);
      this.logFile = kit.logs.resolve(String.format("%02d-%s.log", scenario.number, scenario.name));
    }

    double now() {
      return (System.nanoTime() - startNanos) / 1e9;
    }

    String queue() {
      return "conformance-" + scenario.name;
    }

    void start() throws IOException {
      ProcessBuilder builder =
          new ProcessBuilder("/bin/sh", "-c", "exec " + kit.command)
              .redirectErrorStream(true)
              .redirectOutput(logFile.toFile());
      Map<String, String> env = builder.environment();
      env.keySet().removeIf(name -> name.startsWith("CLAIMQ_") || name.equals("PROVIDER_URL"));
      env.put("CLAIMQ_URL", "http://127.0.0.1:" + claimq.port);
      env.put("CLAIMQ_QUEUE", queue());
      env.put("CLAIMQ_API_KEY", kit.apiKey);
      env.put("CLAIMQ_WORKER", "conformance-worker");
      env.put("CLAIMQ_LEASE_SECONDS", String.valueOf(LEASE_HINT));
      env.put("CLAIMQ_WAIT_SECONDS", String.valueOf(WAIT_HINT));
      env.put("PROVIDER_URL", "http://127.0.0.1:" + provider.port + "/sends");
      kit.logFiles.add(logFile);
      process = builder.start();
    }

    /** Runs action this many seconds from now, on a timer thread. */
    void after(double seconds, Runnable action) {
      double at = now() + seconds;
      Thread timer =
          new Thread(
              () -> {
                sleep(Math.max(0, at - now()));
                action.run();
              });
      timer.setDaemon(true);
      timer.start();
    }

    /** SIGTERM to the worker and to every process it started, at once, as systemd sends it. */
    void sigterm() {
      sigtermAt = now();
      List<ProcessHandle> group =
          Stream.concat(Stream.of(process.toHandle()), process.descendants()).toList();
      timeline.note(
          "kit", "SIGTERM to the worker and its " + (group.size() - 1) + " child processes");
      group.forEach(ProcessHandle::destroy);
    }

    /** Runs action, once, from the kit's loop as soon as condition holds. */
    void onceSettled(BooleanSupplier condition, Runnable action) {
      watches.add(Map.entry(condition, action));
    }

    void poll() {
      for (var watch : List.copyOf(watches)) {
        if (watch.getKey().getAsBoolean()) {
          watches.remove(watch);
          watch.getValue().run();
        }
      }
      if (exitedAt == null && process != null && !process.isAlive()) {
        exitedAt = now();
        exitCode = process.exitValue();
        timeline.note("kit", "the worker exited with status " + exitCode);
      }
    }

    void stop() throws InterruptedException {
      claimq.draining = true;
      poll();
      if (process.isAlive()) {
        process.destroy();
        if (!process.waitFor(GRACE_SECONDS, TimeUnit.SECONDS)) {
          timeline.note("kit", "the worker did not exit within " + GRACE_SECONDS + " s of SIGTERM");
          process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
      }
      // Restore a service left down by a scenario that was cut short.
      claimq.failing = false;
      claimq.start();
    }
  }

  /** What the worker did, in order: every call to claimq and to the provider. */
  static final class Event {
    final double at;
    /** When the request arrived; a long-polled claim is answered (at) later. */
    final double asked;
    final String who;
    final String operation;
    final String itemId;
    final String key;
    final int status;
    final String text;

    Event(
        double at,
        double asked,
        String who,
        String operation,
        String itemId,
        String key,
        int status,
        String text) {
      this.at = at;
      this.asked = asked;
      this.who = who;
      this.operation = operation;
      this.itemId = itemId;
      this.key = key;
      this.status = status;
      this.text = text;
    }

    boolean isClaim() {
      return operation.equals("claim");
    }

    boolean isSend() {
      return operation.equals("send");
    }

    boolean isLookup() {
      return operation.equals("lookup");
    }
  }

  static final class Timeline {
    private final Run run;
    private final List<Event> events = new ArrayList<>();

    Timeline(Run run) {
      this.run = run;
    }

    void add(String who, String operation, String itemId, String key, int status, String text) {
      add(run.now(), who, operation, itemId, key, status, text);
    }

    synchronized void add(
        double asked,
        String who,
        String operation,
        String itemId,
        String key,
        int status,
        String text) {
      events.add(new Event(run.now(), asked, who, operation, itemId, key, status, text));
    }

    void note(String who, String text) {
      add(who, "note", null, null, 0, text);
    }

    synchronized List<Event> events() {
      return List.copyOf(events);
    }

    long count(java.util.function.Predicate<Event> test) {
      return events().stream().filter(test).count();
    }

    Event first(java.util.function.Predicate<Event> test) {
      return events().stream().filter(test).findFirst().orElse(null);
    }

    /** The evidence: consecutive identical lines (a spin) are folded into one. */
    void print(String indent) {
      List<Event> all = events();
      int shown = 0;
      for (int i = 0; i < all.size(); ) {
        Event event = all.get(i);
        int j = i + 1;
        while (j < all.size() && all.get(j).text.equals(event.text)) {
          j++;
        }
        String repeat = j - i > 1 ? String.format("  (x%d, to +%.3fs)", j - i, all.get(j - 1).at) : "";
        if (shown++ < 60) {
          System.out.printf("%s+%7.3fs %-8s %s%s%n", indent, event.at, event.who, event.text, repeat);
        }
        i = j;
      }
      if (shown > 60) {
        System.out.printf("%s... %d more lines%n", indent, shown - 60);
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // The scripted claimq: the worker's side of the API, in memory, with faults on cue.

  static final class Item {
    final String id;
    final String queue;
    final String dedupeKey;
    final String idempotencyKey;
    final Object payload;
    final String createdAt;
    String state = "pending";
    String token;
    String finishedToken;
    final Set<String> pastTokens = ConcurrentHashMap.newKeySet();
    String claimedBy;
    int attempts;
    int leaseSeconds;
    long leaseEndsNanos;
    Double claimedAt;
    Double finishedAt;
    Double expiredAt;
    double dueAt;
    String externalRef;
    String lastError;
    Map<String, Object> failure;
    boolean released;
    boolean possiblySent;
    final List<Map<String, Object>> priorAttempts = new ArrayList<>();
    Map<String, Object> alreadySentOnHeartbeat;
    Map<String, Object> alreadySentOnIntent;
    /** How many of its intents are taken but answered with a body cut off halfway. */
    int intentAnswersCut;

    Item(String id, String queue, Object payload, String createdAt) {
      this.id = id;
      this.queue = queue;
      this.dedupeKey = "conformance/" + id;
      this.idempotencyKey = "claimq-conformance-" + id + "-" + hex(6);
      this.payload = payload;
      this.createdAt = createdAt;
    }

    boolean finished() {
      return finishedAt != null;
    }

    void earlierAttempt(String at, String outcome, String error) {
      attempts++;
      Map<String, Object> attempt = new LinkedHashMap<>();
      attempt.put("attempt", attempts);
      attempt.put("worker", "an-earlier-worker");
      attempt.put("claimedAt", at);
      attempt.put("intentAt", at);
      attempt.put("finishedAt", at);
      attempt.put("outcome", outcome);
      attempt.put("sentUnknown", false);
      attempt.put("error", error);
      attempt.put("finishedBy", null);
      priorAttempts.add(attempt);
    }

    Map<String, Object> view(boolean claimed, Map<String, Object> alreadySent) {
      Map<String, Object> view = new LinkedHashMap<>();
      view.put("id", id);
      view.put("queue", queue);
      view.put("dedupeKey", dedupeKey);
      view.put("state", state);
      view.put("payload", payload);
      view.put("priority", 0);
      view.put("attempts", attempts);
      view.put("maxAttempts", 5);
      view.put("runAt", createdAt);
      view.put("idempotencyKey", idempotencyKey);
      view.put("claimedBy", claimedBy);
      view.put(
          "leaseExpiresAt",
          state.equals("sending")
              ? Instant.now().plusNanos(leaseEndsNanos - System.nanoTime()).toString()
              : null);
      view.put("externalRef", externalRef);
      view.put("lastError", lastError);
      view.put("enqueuedBy", "conformance-kit");
      view.put("createdAt", createdAt);
      view.put("updatedAt", Instant.now().toString());
      if (alreadySent != null) {
        view.put("alreadySent", alreadySent);
      }
      view.put("duplicateSends", 0);
      view.put("pruned", false);
      view.put("traceparent", null); // the kit's agent sends none
      if (claimed) {
        // Not last, as a worker must not rely on the order of an answer's fields.
        view.put("claimToken", token);
        view.put("possiblySent", possiblySent);
        view.put("priorAttempts", priorAttempts);
      }
      // A field this worker does not know, as a newer claimq or a proxy may add: it must be
      // ignored. Its escaped quotes and its claimToken catch a worker that reads answers by
      // pattern rather than as JSON.
      Map<String, Object> unknown = new LinkedHashMap<>();
      unknown.put("note", "a \"quoted\" hop, \"claimToken\":\"x\"}");
      unknown.put("claimToken", "not-this-one");
      view.put("addedByAProxy", unknown);
      return view;
    }
  }

  static final class Claimq {
    final Kit kit;
    int port;
    private HttpServer server;
    private Run run;
    private final List<Item> items = new ArrayList<>();
    private int nextId = 4700;
    volatile boolean failing;
    volatile boolean draining;
    static final String AS_A_PROXY = ", as a proxy may answer";
    /** How many claims are still to be answered 200 without an item, as a proxy may answer. */
    volatile int answersWithoutItem;
    /** A scenario's own answer to a call, before any other; null to answer it as usual. */
    volatile java.util.function.Function<Call, Reply> interceptor;

    Claimq(Kit kit) {
      this.kit = kit;
    }

    synchronized void reset(Run run) {
      this.run = run;
      items.clear();
      failing = false;
      draining = false;
      answersWithoutItem = 0;
      interceptor = null;
    }

    synchronized Item enqueue(Object payload) {
      Item item = new Item(String.valueOf(++nextId), run.queue(), payload, Instant.now().toString());
      items.add(item);
      return item;
    }

    synchronized List<Item> items() {
      return List.copyOf(items);
    }

    synchronized boolean cutsAnswer(String itemId) {
      for (Item item : items) {
        if (item.id.equals(itemId) && item.intentAnswersCut > 0) {
          item.intentAnswersCut--;
          return true;
        }
      }
      return false;
    }

    synchronized Item itemByKey(String key) {
      return items.stream().filter(i -> i.idempotencyKey.equals(key)).findFirst().orElse(null);
    }

    String instant(int secondsFromNow) {
      return Instant.now().plusSeconds(secondsFromNow).toString();
    }

    /** Another worker now holds the item: the worker's token is stale from here on. */
    synchronized void takeOver(Item item) {
      item.pastTokens.add(item.token);
      item.token = newToken();
      item.claimedBy = "another-worker";
      item.attempts++;
      run.timeline.note("kit", "item " + item.id + " taken over by another worker");
    }

    synchronized void start() {
      if (server != null) {
        return;
      }
      for (int tries = 0; ; tries++) {
        try {
          server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 64);
          break;
        } catch (BindException e) {
          if (tries > 40) {
            throw new IllegalStateException("cannot listen on port " + port + " again", e);
          }
          sleep(0.05);
        } catch (IOException e) {
          throw new IllegalStateException(e);
        }
      }
      port = server.getAddress().getPort();
      server.setExecutor(Executors.newCachedThreadPool(daemons()));
      server.createContext("/", this::handle);
      server.start();
    }

    synchronized void stop() {
      if (server != null) {
        server.stop(0);
        server = null;
        if (run != null) {
          run.timeline.note("kit", "claimq stops accepting connections");
        }
      }
    }

    private void handle(HttpExchange exchange) throws IOException {
      try (exchange) {
        double asked = run.now();
        byte[] raw = exchange.getRequestBody().readAllBytes();
        Call call = new Call(exchange, raw);
        if (call.operation.equals("claim") && run.firstClaimAsked == null) {
          run.firstClaimAsked = asked;
        }
        Reply reply = answer(call);
        run.timeline.add(
            asked,
            "claimq",
            call.operation,
            call.itemId,
            null,
            reply.status,
            call.describe(reply));
        byte[] body = reply.body == null ? new byte[0] : Json.write(reply.body).getBytes(StandardCharsets.UTF_8);
        if (reply.status == 200 && call.operation.equals("intent") && cutsAnswer(call.itemId)) {
          exchange.getResponseHeaders().set("Content-Type", "application/json");
          // Halfway, or before alreadySent if it carries one: the part that arrives then reads
          // as a go-ahead.
          String json = new String(body, StandardCharsets.UTF_8);
          int cut = json.indexOf("\"alreadySent\"");
          int kept =
              cut >= 0 ? json.substring(0, cut).getBytes(StandardCharsets.UTF_8).length : body.length / 2;
          run.timeline.note(
              "kit",
              "the answer to that intent is cut off "
                  + (cut >= 0 ? "before its alreadySent" : "halfway through its body"));
          exchange.sendResponseHeaders(200, body.length);
          exchange.getResponseBody().write(body, 0, kept);
          exchange.getResponseBody().flush();
          return; // closing an exchange with bytes still owed closes its connection
        }
        if (reply.body != null) {
          exchange
              .getResponseHeaders()
              .set("Content-Type", reply.status >= 400 ? "application/problem+json" : "application/json");
        }
        exchange.sendResponseHeaders(reply.status, body.length == 0 ? -1 : body.length);
        if (body.length > 0) {
          exchange.getResponseBody().write(body);
        }
      }
    }

    record Reply(int status, Object body, String note) {
      static Reply problem(int status, String type, String detail) {
        Map<String, Object> problem = new LinkedHashMap<>();
        problem.put("type", "https://claimq.dev/problems/" + type);
        problem.put("title", type.replace('-', ' '));
        problem.put("status", status);
        problem.put("detail", detail);
        return new Reply(status, problem, detail);
      }
    }

    /** One request as the worker sent it. */
    final class Call {
      final String method;
      final String path;
      final String operation;
      final String itemId;
      final String auth;
      final String contentType;
      final String raw;
      Object body;

      Call(HttpExchange exchange, byte[] bytes) {
        method = exchange.getRequestMethod();
        path = exchange.getRequestURI().getRawPath();
        auth = exchange.getRequestHeaders().getFirst("Authorization");
        contentType = exchange.getRequestHeaders().getFirst("Content-Type");
        raw = new String(bytes, StandardCharsets.UTF_8);
        String[] parts = path.split("/");
        if (parts.length == 5 && parts[1].equals("v1") && parts[2].equals("queues")) {
          operation = parts[4];
          itemId = null;
        } else if (parts.length == 5 && parts[1].equals("v1") && parts[2].equals("items")) {
          operation = parts[4];
          itemId = parts[3];
        } else {
          operation = "other";
          itemId = null;
        }
      }

      String describe(Reply reply) {
        String shown = raw;
        for (String token : kit.tokens) {
          shown = shown.replace(token, "…");
        }
        shown = shown.replaceAll("\\s+", " ");
        if (shown.length() > 160) {
          shown = shown.substring(0, 160) + "…";
        }
        return String.format(
            "%s %s %s -> %d%s",
            method, path, shown, reply.status, reply.note == null ? "" : " " + reply.note);
      }
    }

    private Reply answer(Call call) {
      if (failing) {
        return Reply.problem(503, "unavailable", "the database cannot be reached");
      }
      java.util.function.Function<Call, Reply> scripted = interceptor;
      Reply reply = scripted == null ? null : scripted.apply(call);
      if (reply != null) {
        return reply;
      }
      if (!("Bearer " + kit.apiKey).equals(call.auth)) {
        return Reply.problem(
            401,
            "unauthorized",
            call.auth == null ? "no Authorization header" : "that API key is not known");
      }
      if (!call.method.equals("POST")) {
        return Reply.problem(405, "method-not-allowed", call.method + " is not served here");
      }
      if (!call.raw.isEmpty()) {
        if (call.contentType == null || !call.contentType.startsWith("application/json")) {
          return Reply.problem(415, "unsupported-media-type", "a body must be application/json");
        }
        try {
          call.body = Json.parse(call.raw);
        } catch (IllegalArgumentException e) {
          return Reply.problem(400, "invalid-request", "the body is not JSON: " + e.getMessage());
        }
      }
      Map<String, Object> body = call.body instanceof Map<?, ?> m ? cast(m) : Map.of();
      if (call.body != null && !(call.body instanceof Map)) {
        return Reply.problem(400, "invalid-request", "the body must be a JSON object");
      }
      Set<String> allowed =
          switch (call.operation) {
            case "claim" -> Set.of("worker", "leaseSeconds", "waitSeconds");
            case "heartbeat" -> Set.of("claimToken", "leaseSeconds");
            case "intent" -> Set.of("claimToken");
            case "complete" -> Set.of("claimToken", "externalRef", "next");
            case "fail" ->
                Set.of("claimToken", "error", "retryable", "sent", "retryAfterSeconds", "next");
            case "release" -> Set.of("claimToken", "delaySeconds");
            default -> null;
          };
      if (allowed == null || (call.itemId == null) != call.operation.equals("claim")) {
        return Reply.problem(
            404, "not-found", "the conformance kit serves claim, heartbeat, intent, complete,"
                + " fail and release; not " + call.path);
      }
      for (String field : body.keySet()) {
        if (!allowed.contains(field)) {
          return Reply.problem(400, "invalid-request", "unknown field " + field);
        }
      }
      if (call.operation.equals("claim")) {
        return claim(call.path.split("/")[3], body);
      }
      if (body.containsKey("next") && body.get("next") != null) {
        return reportAndClaim(call, body);
      }
      return report(call, body);
    }

    /**
     * As claimq does for a complete or fail with next: the report, then, only when it was taken
     * now (not a repeat, not a refusal), a claim of the queue's next item as claim-next makes it,
     * answered as the report's item plus next (null when nothing was claimable in time).
     */
    private Reply reportAndClaim(Call call, Map<String, Object> body) {
      if (!(body.get("next") instanceof Map<?, ?> nextBody)) {
        return Reply.problem(400, "invalid-request", "next must be a JSON object");
      }
      Map<String, Object> next = cast(nextBody);
      for (String field : next.keySet()) {
        if (!Set.of("worker", "leaseSeconds", "waitSeconds").contains(field)) {
          return Reply.problem(400, "invalid-request", "unknown field next." + field);
        }
      }
      Integer lease = integer(next, "leaseSeconds", 1, 43200);
      Integer wait = integer(next, "waitSeconds", 0, 20);
      if (Objects.equals(lease, Integer.MIN_VALUE) || Objects.equals(wait, Integer.MIN_VALUE)) {
        return Reply.problem(
            400,
            "invalid-request",
            "next.leaseSeconds or next.waitSeconds is null or out of range" + LEAVE_IT_OUT);
      }
      Map<String, Object> report = new LinkedHashMap<>(body);
      report.remove("next");
      Reply reply = report(call, report);
      if (reply.status != 200) {
        return reply;
      }
      Map<String, Object> answer = new LinkedHashMap<>(cast((Map<?, ?>) reply.body));
      if (REPEAT.equals(reply.note)) {
        answer.put("next", null);
        return new Reply(200, answer, REPEAT + ", next: null");
      }
      Reply claimed = claim(run.queue(), next);
      run.timeline.add(
          "claimq",
          "claim",
          claimed.status == 200 ? (String) cast((Map<?, ?>) claimed.body).get("id") : null,
          null,
          claimed.status,
          "the next claim of " + call.operation + " " + call.itemId + " -> " + claimed.status);
      answer.put("next", claimed.status == 200 ? claimed.body : null);
      return new Reply(
          200, answer, claimed.status == 200 ? "next: " + claimed.note : "next: null");
    }

    private Reply claim(String queue, Map<String, Object> body) {
      if (!queue.equals(run.queue())) {
        return Reply.problem(
            403, "forbidden", "this key may claim only from queue " + run.queue() + ", not " + queue);
      }
      Integer lease = integer(body, "leaseSeconds", 1, 43200);
      Integer wait = integer(body, "waitSeconds", 0, 20);
      if (Objects.equals(lease, Integer.MIN_VALUE) || Objects.equals(wait, Integer.MIN_VALUE)) {
        return Reply.problem(
            400,
            "invalid-request",
            "leaseSeconds or waitSeconds is null or out of range" + LEAVE_IT_OUT);
      }
      synchronized (this) {
        if (answersWithoutItem > 0) {
          // First no body at all, then an object that is no item.
          return --answersWithoutItem > 0
              ? new Reply(200, null, "no body" + AS_A_PROXY)
              : new Reply(200, Map.of("status", "ok"), "no item" + AS_A_PROXY);
        }
      }
      double deadline = run.now() + (wait == null ? 0 : wait);
      while (true) {
        synchronized (this) {
          expireLeases();
          for (Item item : items) {
            if (item.state.equals("pending") && item.dueAt <= run.now()) {
              item.state = "sending";
              item.token = newToken();
              item.claimedBy = body.get("worker") instanceof String w ? w : null;
              item.attempts++;
              item.leaseSeconds = lease == null ? 60 : lease;
              item.leaseEndsNanos = System.nanoTime() + item.leaseSeconds * 1_000_000_000L;
              item.claimedAt = run.now();
              kit.tokens.add(item.token);
              return new Reply(200, item.view(true, null), "item " + item.id);
            }
          }
        }
        if (draining || run.now() >= deadline) {
          return new Reply(204, null, null);
        }
        sleep(0.02);
      }
    }

    private static final String REPEAT = "(a repeat)";

    private synchronized Reply report(Call call, Map<String, Object> body) {
      expireLeases();
      Item item = items.stream().filter(i -> i.id.equals(call.itemId)).findFirst().orElse(null);
      if (item == null) {
        return Reply.problem(404, "not-found", "no item " + call.itemId);
      }
      if (!(body.get("claimToken") instanceof String token)) {
        return Reply.problem(400, "invalid-request", "claimToken is required");
      }
      String op = call.operation;
      boolean replay =
          token.equals(item.finishedToken)
              && ((op.equals("complete") && item.state.equals("done"))
                  || (op.equals("fail") && item.failure != null));
      if (replay) {
        return new Reply(200, item.view(false, null), REPEAT);
      }
      if (op.equals("complete")
          && item.pastTokens.contains(token)
          && body.get("externalRef") instanceof String ref) {
        return lateSuccess(item, token, ref);
      }
      if (!item.state.equals("sending") || !token.equals(item.token)) {
        return Reply.problem(
            409, "stale-claim", "this claim is no longer current: item " + item.id + " is "
                + (item.state.equals("sending") ? "held by " + item.claimedBy : item.state));
      }
      switch (op) {
        case "heartbeat" -> {
          Integer lease = integer(body, "leaseSeconds", 1, 43200);
          if (lease != null && lease == Integer.MIN_VALUE) {
            return Reply.problem(
                400, "invalid-request", "leaseSeconds is null or out of range" + LEAVE_IT_OUT);
          }
          item.leaseEndsNanos =
              System.nanoTime() + (lease == null ? item.leaseSeconds : lease) * 1_000_000_000L;
          return new Reply(
              200,
              item.view(false, item.alreadySentOnHeartbeat),
              item.alreadySentOnHeartbeat != null ? "with alreadySent" : null);
        }
        case "intent" -> {
          return new Reply(
              200,
              item.view(false, item.alreadySentOnIntent),
              item.alreadySentOnIntent != null ? "with alreadySent" : null);
        }
        case "complete" -> {
          Object ref = body.get("externalRef");
          if (ref != null && !(ref instanceof String)) {
            return Reply.problem(400, "invalid-request", "externalRef must be a string");
          }
          item.state = "done";
          item.externalRef = (String) ref;
          return finish(item, token);
        }
        case "fail" -> {
          if (!(body.get("error") instanceof String error) || error.isEmpty()) {
            return Reply.problem(400, "invalid-request", "error is required");
          }
          Object retryable = body.getOrDefault("retryable", true);
          if (!(retryable instanceof Boolean)) {
            return Reply.problem(400, "invalid-request", "retryable must be true or false");
          }
          Object sent = body.getOrDefault("sent", "no");
          if (!"no".equals(sent) && !"unknown".equals(sent)) {
            return Reply.problem(
                400, "invalid-request", "sent must be no or unknown, or left out for no");
          }
          // No default, so null is none, as claimq takes it.
          Integer after =
              body.get("retryAfterSeconds") == null
                  ? null
                  : integer(body, "retryAfterSeconds", 0, 86400);
          if (after != null && after == Integer.MIN_VALUE) {
            return Reply.problem(400, "invalid-request", "retryAfterSeconds is out of range");
          }
          item.failure = body;
          item.lastError = error;
          // A retried item comes back later than any scenario lasts.
          item.state = (Boolean) retryable ? "pending" : "failed";
          item.dueAt = Double.MAX_VALUE;
          return finish(item, token);
        }
        default -> { // release
          Integer delay = integer(body, "delaySeconds", 0, 86400);
          if (delay != null && delay == Integer.MIN_VALUE) {
            return Reply.problem(
                400, "invalid-request", "delaySeconds is null or out of range" + LEAVE_IT_OUT);
          }
          item.released = true;
          item.pastTokens.add(item.token);
          item.state = "pending";
          item.dueAt = run.now() + (delay == null ? 0 : delay);
          item.token = null;
          item.finishedAt = run.now();
          return new Reply(200, item.view(false, null), null);
        }
      }
    }

    /** As claimq does: a complete from an earlier claim, with its reference, is not lost. */
    private Reply lateSuccess(Item item, String token, String ref) {
      String what;
      if (item.state.equals("sending")) {
        item.alreadySentOnHeartbeat = alreadySent(item.attempts - 1, ref);
        what = "the current claim is told";
      } else if (item.state.equals("done")) {
        what =
            "item "
                + item.id
                + (ref.equals(item.externalRef)
                    ? " was done already with that reference: the same send"
                    : " was done already: a duplicate send");
      } else {
        item.state = "done";
        item.externalRef = ref;
        item.finishedToken = token;
        item.finishedAt = run.now();
        what = "item " + item.id + " is done";
      }
      return Reply.problem(
          409,
          "stale-claim",
          "this claim is no longer current; the report was recorded as a late success: " + what);
    }

    private Reply finish(Item item, String token) {
      item.pastTokens.add(token);
      item.finishedToken = token;
      item.token = null;
      item.finishedAt = run.now();
      return new Reply(200, item.view(false, null), null);
    }

    /** The reaper, run on every call: a claim past its lease is gone at once. */
    private void expireLeases() {
      for (Item item : items) {
        if (item.state.equals("sending")
            && item.token != null
            && !"another-worker".equals(item.claimedBy)
            && System.nanoTime() > item.leaseEndsNanos + 250_000_000L) {
          item.state = "pending";
          item.pastTokens.add(item.token);
          item.token = null;
          item.expiredAt = (item.leaseEndsNanos - run.startNanos) / 1e9;
          item.dueAt = Double.MAX_VALUE;
          run.timeline.note("kit", "item " + item.id + ": its lease ran out");
        }
      }
    }

    /** The end of a refusal of a field with a default, as claimq words it. */
    private static final String LEAVE_IT_OUT = ": leave a field out to take its default";

    /**
     * null when left out; Integer.MIN_VALUE when not a whole number in range, null included:
     * claimq takes a field's default only when it is left out, and answers an explicit null 400.
     */
    private static Integer integer(Map<String, Object> body, String field, int min, int max) {
      if (!body.containsKey(field)) {
        return null;
      }
      Object value = body.get(field);
      if (value instanceof BigDecimal number) {
        try {
          int n = number.intValueExact();
          if (n >= min && n <= max) {
            return n;
          }
        } catch (ArithmeticException e) {
          // falls through
        }
      }
      return Integer.MIN_VALUE;
    }

    private String newToken() {
      String token = "ctk_" + hex(20);
      kit.tokens.add(token);
      return token;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // The provider: records every send by its Idempotency-Key; scenarios script its answers.

  /** A send as the provider took it; id is the reference it told the worker, if any. */
  record Send(double at, String key, String id, int status, String raw) {}

  /** A scripted answer; a 2xx with a null body answers {"id": …} with the send's reference. */
  record Answer(int status, Map<String, String> headers, String body) {
    static Answer created() {
      return new Answer(201, Map.of(), null);
    }

    /** Takes the send, then closes the connection without answering. */
    static Answer dropped() {
      return new Answer(0, Map.of(), null);
    }

    /** A 202 that takes the send but tells no reference: an empty body, or text. */
    static Answer accepted(String body) {
      return new Answer(202, Map.of("Content-Type", "text/plain"), body);
    }

    static Answer tooManyRequests(int retryAfter) {
      return new Answer(
          429, Map.of("Retry-After", String.valueOf(retryAfter)), "{\"error\":\"slow down\"}");
    }

    static Answer unavailable(int retryAfter) {
      return new Answer(
          503, Map.of("Retry-After", String.valueOf(retryAfter)), "{\"error\":\"unavailable\"}");
    }

    static Answer requestTimeout() {
      return new Answer(408, Map.of(), "{\"error\":\"request timeout\"}");
    }

    static Answer unprocessable() {
      return new Answer(422, Map.of(), "{\"error\":\"invalid recipient\"}");
    }
  }

  interface Script {
    Answer answer(Send send);
  }

  static final class Provider {
    int port;
    private HttpServer server;
    private Run run;
    private final List<Send> sends = new ArrayList<>();
    private final Map<String, String> accepted = new ConcurrentHashMap<>();
    private final Map<String, Script> scripts = new ConcurrentHashMap<>();
    volatile boolean dedupes = true;
    private int nextId;

    synchronized void reset(Run run) {
      this.run = run;
      sends.clear();
      accepted.clear();
      scripts.clear();
      dedupes = true;
    }

    void script(String key, Script script) {
      scripts.put(key, script);
    }

    void recordEarlierSend(String key, String id) {
      accepted.put(key, id);
    }

    synchronized List<Send> sends() {
      return List.copyOf(sends);
    }

    List<Send> sendsOf(String key) {
      return sends().stream().filter(s -> key.equals(s.key)).toList();
    }

    void start() throws IOException {
      server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
      port = server.getAddress().getPort();
      server.setExecutor(Executors.newCachedThreadPool(daemons()));
      server.createContext("/sends", this::handle);
      server.start();
    }

    void stop() {
      server.stop(0);
    }

    private void handle(HttpExchange exchange) throws IOException {
      try (exchange) {
        String raw = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        String path = exchange.getRequestURI().getRawPath();
        String headers =
            exchange.getRequestHeaders().entrySet().stream()
                .map(h -> h.getKey() + ": " + String.join(",", h.getValue()))
                .collect(Collectors.joining("\n"));
        if (exchange.getRequestMethod().equals("GET") && path.startsWith("/sends/")) {
          String key = URLDecoder.decode(path.substring("/sends/".length()), StandardCharsets.UTF_8);
          String id = accepted.get(key);
          run.timeline.add(
              "provider", "lookup", null, key, id == null ? 404 : 200,
              "GET lookup " + key + " -> " + (id == null ? "404" : "200 " + id));
          reply(exchange, id == null ? 404 : 200, Map.of(),
              id == null ? "{\"error\":\"no send with that key\"}" : "{\"id\":\"" + id + "\"}");
          return;
        }
        if (!exchange.getRequestMethod().equals("POST") || !path.equals("/sends")) {
          reply(exchange, 404, Map.of(), "{\"error\":\"POST /sends or GET /sends/{key}\"}");
          return;
        }
        String key = exchange.getRequestHeaders().getFirst("Idempotency-Key");
        Send arrived = new Send(run.now(), key, null, 0, headers + "\n" + raw);
        Script script = key == null ? null : scripts.get(key);
        Answer answer = script == null ? Answer.created() : script.answer(arrived);
        String id = null;
        int status = answer.status;
        boolean told = answer.body == null; // a 2xx of the script's own body tells no reference
        synchronized (this) {
          if (status / 100 == 2 || status == 0) {
            id = dedupes && key != null ? accepted.get(key) : null;
            if (id == null) {
              id = String.format("snd_%04d", ++nextId);
            } else if (told) {
              status = 200;
            }
            if (key != null) {
              accepted.putIfAbsent(key, id);
            }
          }
          sends.add(new Send(arrived.at, key, told ? id : null, status, arrived.raw));
        }
        run.timeline.add(
            "provider", "send", null, key, status,
            "POST send Idempotency-Key: " + key + " -> " + status + (id == null ? "" : " " + id)
                + (id != null && !told ? " (not told: " + Json.write(answer.body) + ")" : "")
                + (status == 0 ? " (connection closed without an answer)" : ""));
        if (status == 0) {
          return; // closing an exchange that sent no headers closes its connection
        }
        reply(exchange, status, answer.headers, id != null && told ? "{\"id\":\"" + id + "\"}" : answer.body);
      }
    }

    private static void reply(HttpExchange exchange, int status, Map<String, String> headers, String body)
        throws IOException {
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", "application/json");
      headers.forEach((name, value) -> exchange.getResponseHeaders().set(name, value));
      if (bytes.length == 0) {
        exchange.getResponseHeaders().remove("Content-Type");
      }
      exchange.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
      exchange.getResponseBody().write(bytes);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // JSON, small enough to read: the kit must run with nothing but a JDK.

  static final class Json {
    private final String text;
    private int at;

    private Json(String text) {
      this.text = text;
    }

    /** Objects become maps, arrays lists, numbers BigDecimal; a repeated field is refused. */
    static Object parse(String text) {
      Json json = new Json(text);
      Object value = json.value();
      json.space();
      if (json.at != text.length()) {
        throw json.error("unexpected text after the value");
      }
      return value;
    }

    private Object value() {
      space();
      if (at >= text.length()) {
        throw error("unexpected end");
      }
      char c = text.charAt(at);
      switch (c) {
        case '{':
          return object();
        case '[':
          return array();
        case '"':
          return string();
        case 't':
          return word("true", Boolean.TRUE);
        case 'f':
          return word("false", Boolean.FALSE);
        case 'n':
          return word("null", null);
        default:
          return number();
      }
    }

    private Map<String, Object> object() {
      Map<String, Object> object = new LinkedHashMap<>();
      at++;
      space();
      if (peek('}')) {
        at++;
        return object;
      }
      while (true) {
        space();
        if (!peek('"')) {
          throw error("a field name expected");
        }
        String name = string();
        space();
        expect(':');
        if (object.containsKey(name)) {
          throw error("field " + name + " given twice");
        }
        object.put(name, value());
        space();
        if (peek(',')) {
          at++;
        } else {
          expect('}');
          return object;
        }
      }
    }

    private List<Object> array() {
      List<Object> array = new ArrayList<>();
      at++;
      space();
      if (peek(']')) {
        at++;
        return array;
      }
      while (true) {
        array.add(value());
        space();
        if (peek(',')) {
          at++;
        } else {
          expect(']');
          return array;
        }
      }
    }

    private String string() {
      StringBuilder out = new StringBuilder();
      at++;
      while (at < text.length()) {
        char c = text.charAt(at++);
        if (c == '"') {
          return out.toString();
        }
        if (c == '\\') {
          char e = text.charAt(at++);
          switch (e) {
            case 'n' -> out.append('\n');
            case 't' -> out.append('\t');
            case 'r' -> out.append('\r');
            case 'b' -> out.append('\b');
            case 'f' -> out.append('\f');
            case 'u' -> {
              out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
              at += 4;
            }
            default -> out.append(e);
          }
        } else if (c < 0x20) {
          throw error("a control character inside a string");
        } else {
          out.append(c);
        }
      }
      throw error("an unterminated string");
    }

    private BigDecimal number() {
      int start = at;
      while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) {
        at++;
      }
      try {
        return new BigDecimal(text.substring(start, at));
      } catch (NumberFormatException e) {
        throw error("a value expected");
      }
    }

    private Object word(String word, Object value) {
      if (!text.startsWith(word, at)) {
        throw error("a value expected");
      }
      at += word.length();
      return value;
    }

    private void space() {
      while (at < text.length() && " \t\r\n".indexOf(text.charAt(at)) >= 0) {
        at++;
      }
    }

    private boolean peek(char c) {
      return at < text.length() && text.charAt(at) == c;
    }

    private void expect(char c) {
      if (!peek(c)) {
        throw error("'" + c + "' expected");
      }
      at++;
    }

    private IllegalArgumentException error(String what) {
      return new IllegalArgumentException(what + " at character " + at);
    }

    /** Compact, fields in insertion order, as claimq writes it. */
    static String write(Object value) {
      if (value == null) {
        return "null";
      }
      if (value instanceof String s) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
          switch (c) {
            case '"' -> out.append("\\\"");
            case '\\' -> out.append("\\\\");
            case '\n' -> out.append("\\n");
            case '\t' -> out.append("\\t");
            case '\r' -> out.append("\\r");
            default -> {
              if (c < 0x20) {
                out.append(String.format("\\u%04x", (int) c));
              } else {
                out.append(c);
              }
            }
          }
        }
        return out.append('"').toString();
      }
      if (value instanceof Map<?, ?> map) {
        return map.entrySet().stream()
            .map(e -> write(String.valueOf(e.getKey())) + ":" + write(e.getValue()))
            .collect(Collectors.joining(",", "{", "}"));
      }
      if (value instanceof List<?> list) {
        return list.stream().map(Json::write).collect(Collectors.joining(",", "[", "]"));
      }
      if (value instanceof BigDecimal number) {
        return number.toPlainString();
      }
      return value.toString(); // Boolean, Integer
    }
  }

  // ---------------------------------------------------------------------------------------------

  @SuppressWarnings("unchecked")
  static Map<String, Object> cast(Map<?, ?> map) {
    return (Map<String, Object>) map;
  }

  static final SecureRandom RANDOM = new SecureRandom();

  static String hex(int bytes) {
    byte[] b = new byte[bytes];
    RANDOM.nextBytes(b);
    return HexFormat.of().formatHex(b);
  }

  static String quoted(String text) {
    return text == null ? "null" : "\"" + text + "\"";
  }

  static double max(List<Double> values) {
    return values.stream().mapToDouble(Double::doubleValue).max().orElse(0);
  }

  static double min(List<Double> values) {
    return values.stream().mapToDouble(Double::doubleValue).min().orElse(0);
  }

  /** The time between each call and the one before it. */
  static List<Double> gaps(List<Double> times) {
    List<Double> gaps = new ArrayList<>();
    for (int i = 1; i < times.size(); i++) {
      gaps.add(times.get(i) - times.get(i - 1));
    }
    return gaps;
  }

  static String range(List<Double> values) {
    return String.format("%.1f–%.1f", min(values), max(values));
  }

  static void sleep(double seconds) {
    try {
      Thread.sleep((long) (seconds * 1000));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  static java.util.concurrent.ThreadFactory daemons() {
    return runnable -> {
      Thread thread = new Thread(runnable);
      thread.setDaemon(true);
      return thread;
    };
  }
}
