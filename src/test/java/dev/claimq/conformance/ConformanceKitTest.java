package dev.claimq.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The conformance kit, run as a worker author runs it (one command, a real worker process), on both
 * sides of its judgement: each reference worker passes every scenario of the level the worker
 * protocol promises for it, and copies of the Python worker with one behaviour broken each fail the
 * one scenario that checks that behaviour. The second half is what proves the kit can fail; each
 * mutant also shows the unbroken worker passing that scenario is no accident.
 *
 * <p>The runs are independent processes with ports of their own, so they start together, a few at a
 * time, and each test waits for its own.
 */
class ConformanceKitTest {
  static final Path KIT = Path.of("conformance", "Conformance.java");
  static final Path OUT = Path.of("target", "conformance");
  static final String JAVA = Path.of(System.getProperty("java.home"), "bin", "java").toString();

  /** The reference workers, with the protocol level worker-protocol.md says each reaches. */
  enum Reference {
    PYTHON("python3 examples/workers/worker.py", "intent", 14),
    NODE("node examples/workers/worker.mjs", "intent", 14),
    JAVA(ConformanceKitTest.JAVA + " examples/workers/Worker.java", "intent", 14),
    BASH("bash examples/workers/worker.sh", "intent", 14),
    BASH_WITHOUT_JQ("env CLAIMQ_NO_JQ=1 bash examples/workers/worker.sh", "intent", 14);

    final String command;
    final String level;
    final int scenarios;

    Reference(String command, String level, int scenarios) {
      this.command = command;
      this.level = level;
      this.scenarios = scenarios;
    }
  }

  /**
   * The Python reference worker with one behaviour broken: a textual edit that must match exactly
   * once, so a change to the worker that moves the code fails here loudly instead of testing an
   * unbroken copy.
   */
  enum Mutant {
    SPINS_ON_204(
        "waits-on-empty",
        "claims without waiting and at once again on 204",
        "\"waitSeconds\": args.wait_seconds}",
        "\"waitSeconds\": 0}"),
    SPINS_ON_A_CLAIM_WITHOUT_AN_ITEM(
        "waits-on-empty",
        "claims again at once after a claim answered 200 without an item",
        "raise Transient(\"claim answered 200 without an item (%s)\" % what_it_holds(answer))",
        "continue") {
      @Override
      String reason() {
        return "spins on a claim answered without an item";
      }
    },
    CHOKES_ON_A_2XX_WITHOUT_JSON(
        "claim-send-complete",
        "lets a 2xx whose body is no JSON object throw, so the send is failed and sent again",
        "    except (ValueError, AttributeError):\n        return None",
        "    except ():\n        return None"),
    SENDS_NULL_FOR_A_DEFAULT(
        "claim-send-complete",
        "claims with leaseSeconds: null, which claimq refuses, instead of leaving it out",
        "\"leaseSeconds\": args.lease_seconds,",
        "\"leaseSeconds\": None,"),
    RESENDS_AFTER_409(
        "stale-claim-not-resent",
        "sends again when its complete is answered 409",
        "log(\"item %s: claim gone; leaving the item to its current claim\" % item[\"id\"])",
        "send(item)"),
    NEVER_HEARTBEATS(
        "heartbeats-long-send",
        "heartbeats every three leases instead of every third of one",
        "finished.wait(lease_seconds / 3)",
        "finished.wait(lease_seconds * 3)"),
    IGNORES_RETRY_AFTER(
        "reports-provider-failures",
        "drops the provider's Retry-After",
        "retry(reason, retry_after_seconds(retry_after))",
        "retry(reason, None)"),
    PASSES_RETRY_AFTER_UNCAPPED(
        "reports-provider-failures",
        "passes a Retry-After of two days on as it came, which claimq refuses",
        "min(int(header), MAX_RETRY_AFTER_SECONDS)",
        "int(header)"),
    RETRIES_PERMANENT_ERRORS(
        "reports-provider-failures",
        "reports a 422 as retryable",
        "return permanent(reason)  # any other 4xx",
        "return retry(reason)  # any other 4xx"),
    RETRIES_WITHOUT_BACKOFF(
        "backs-off-when-claimq-is-down",
        "repeats a complete every 50 ms while claimq answers 503",
        "def finish(self, path, body, tries=10, headers=None, timeout=10):",
        "def finish(self, path, body, tries=1000, headers=None, timeout=10):",
        "threading.Event().wait(delay)",
        "threading.Event().wait(0.05)"),
    RETRIES_WITHOUT_JITTER(
        "backs-off-when-claimq-is-down",
        "waits a fixed 0.6 s before each retry while claimq answers 503",
        "return random.uniform(0, min(cap, 0.5 * 2.0 ** min(attempt, 16)))",
        "return 0.6") {
      // A fixed delay neither varies nor grows; on a loaded machine its gaps can spread past
      // what the jitter check calls equal, and then the growth check is the one that fails it.
      @Override
      String reason() {
        return "no jitter|does not grow";
      }
    },
    RETRIES_WITHOUT_GROWTH(
        "backs-off-when-claimq-is-down",
        // At most 1 s: the kit wants a gap of 2 s, so only a stall of over a second on a loaded
        // machine could make this mutant's gaps look grown.
        "backs off a random 0 to 1 s however many claims failed in a row",
        "return random.uniform(0, min(cap, 0.5 * 2.0 ** min(attempt, 16)))",
        "return random.uniform(0, 1.0)") {
      // Its waits, 0.5 s on average, spend a report's ten tries within the 5 s outage, and then
      // the item in hand is never reported: the same fault, caught before the growth check.
      @Override
      String reason() {
        return "does not grow|never reported after claimq came back";
      }
    },
    GIVES_UP_ON_503_AND_408(
        "reports-provider-failures",
        "reports a provider's 503 or 408 as permanent",
        "if error.code in (408, 429) or error.code >= 500:",
        "if error.code == 429:"),
    IGNORES_POSSIBLY_SENT(
        "asks-provider-when-possibly-sent",
        "sends a possiblySent item without asking the provider",
        "if item.get(\"possiblySent\"):",
        "if False:"),
    IGNORES_ALREADY_SENT_ON_HEARTBEAT(
        "already-sent-on-heartbeat",
        "ignores alreadySent in a heartbeat answer",
        "earlier_send.append(sent)",
        "pass"),
    HIDES_ITS_OWN_SEND_AFTER_ALREADY_SENT(
        "reports-its-own-send-after-already-sent",
        "completes with the earlier send's reference though its own send went out too",
        "if earlier_send and outcome == \"done\":",
        "if False:"),
    SKIPS_THE_INTENT(
        "declares-intent",
        "sends without declaring its intent",
        "if not declare_intent(claimq, item):",
        "if False:"),
    DIES_ON_SIGTERM(
        "sigterm-finishes",
        "lets SIGTERM kill it mid-send",
        "signal.signal(signum, lambda *_: stopping.set())",
        "signal.signal(signum, signal.SIG_DFL)"),
    CLAIMS_NEXT_WHEN_STOPPING(
        "sigterm-finishes",
        "asks for the next item on the report it makes after SIGTERM",
        "wants_next = not stopping.is_set()",
        "wants_next = True",
        "                body.pop(\"next\", None)",
        "                pass"),
    CLAIMS_NEXT_WHEN_REPORTING_AGAIN_AFTER_SIGTERM(
        "sigterm-mid-report",
        "asks for the next item on a complete it makes again after SIGTERM",
        "                body.pop(\"next\", None)",
        "                pass"),
    SAYS_A_LOST_ANSWER_WAS_NOT_SENT(
        "says-when-send-is-unknown",
        "fails a send whose connection dropped after the request without sent: unknown",
        "body[\"sent\"] = \"unknown\"",
        "pass"),
    LOGS_THE_CLAIM(
        "keeps-secrets",
        "logs each claimed item whole, token included",
        "message = message.replace(secret, \"<redacted>\")",
        "pass",
        "    secrets[\"claim_token\"] = item[\"claimToken\"]\n",
        "    log(\"claimed %r\" % item)\n");

    final String scenario;
    final String broken;

    /** Pairs: the text to find (exactly once), and what replaces it. */
    final List<String> edits;

    Mutant(String scenario, String broken, String... edits) {
      this.scenario = scenario;
      this.broken = broken;
      this.edits = List.of(edits);
    }

    /**
     * What the failing verdict must say (a regular expression), where more than one rule of a
     * scenario could fail.
     */
    String reason() {
      return "";
    }
  }

  record KitRun(int exitCode, String output) {}

  static ExecutorService lanes;
  static Map<Reference, CompletableFuture<KitRun>> references;
  static Map<Mutant, CompletableFuture<KitRun>> mutants;
  static CompletableFuture<KitRun> slowToStart;

  @BeforeAll
  static void startEveryRun() throws IOException {
    Files.createDirectories(OUT.resolve("mutants"));
    lanes = Executors.newFixedThreadPool(3);
    references =
        Stream.of(Reference.values())
            .collect(
                Collectors.toMap(
                    Function.identity(),
                    r ->
                        start(
                            "reference-" + r.name().toLowerCase(),
                            List.of("--worker", r.command, "--level", r.level))));
    // Longer than the empty stretch waits-on-empty watches, as a JVM on a loaded machine can be.
    slowToStart =
        start(
            "slow-to-start",
            List.of(
                "--worker",
                "sh -c 'sleep 6; exec python3 examples/workers/worker.py'",
                "--scenario",
                "waits-on-empty"));
    String worker = Files.readString(Path.of("examples", "workers", "worker.py"));
    mutants =
        Stream.of(Mutant.values())
            .collect(
                Collectors.toMap(
                    Function.identity(),
                    m -> {
                      Path copy = OUT.resolve("mutants").resolve(m.name().toLowerCase() + ".py");
                      write(copy, mutate(worker, m));
                      return start(
                          "mutant-" + m.name().toLowerCase(),
                          List.of("--worker", "python3 " + copy, "--scenario", m.scenario));
                    }));
  }

  @AfterAll
  static void stopLanes() {
    lanes.shutdownNow();
  }

  @ParameterizedTest
  @EnumSource(Reference.class)
  void a_reference_worker_passes_every_scenario_of_its_level(Reference worker) throws Exception {
    KitRun run = references.get(worker).get(10, TimeUnit.MINUTES);

    assertThat(run.output).as(run.output).contains(worker.scenarios + " passed, 0 failed");
    assertThat(run.exitCode).as(run.output).isZero();
  }

  @Test
  void a_worker_slow_to_start_is_judged_from_its_first_claim() throws Exception {
    KitRun run = slowToStart.get(10, TimeUnit.MINUTES);

    assertThat(run.output).as(run.output).contains("1 passed, 0 failed");
    assertThat(run.exitCode).as(run.output).isZero();
  }

  @ParameterizedTest
  @EnumSource(Mutant.class)
  void a_worker_that_breaks_one_rule_fails_the_scenario_for_it(Mutant mutant) throws Exception {
    KitRun run = mutants.get(mutant).get(10, TimeUnit.MINUTES);

    assertThat(run.exitCode)
        .as("a worker that %s; kit said:%n%s", mutant.broken, run.output)
        .isEqualTo(1);
    Matcher verdict =
        Pattern.compile(
                "^(PASS|FAIL) +\\d+ " + Pattern.quote(mutant.scenario) + " +(.*)$",
                Pattern.MULTILINE)
            .matcher(run.output);
    assertThat(verdict.find()).as(run.output).isTrue();
    assertThat(verdict.group(1)).as(run.output).isEqualTo("FAIL");
    assertThat(verdict.group(2)).as(run.output).containsPattern(mutant.reason());
    assertThat(run.output).contains("0 passed, 1 failed");
  }

  static String mutate(String source, Mutant mutant) {
    for (int i = 0; i < mutant.edits.size(); i += 2) {
      String find = mutant.edits.get(i);
      int at = source.indexOf(find);
      assertThat(at).as("%s: worker.py holds %s", mutant, find).isNotNegative();
      assertThat(source.indexOf(find, at + 1))
          .as("%s: worker.py holds %s once", mutant, find)
          .isNegative();
      source = source.replace(find, mutant.edits.get(i + 1));
    }
    return source;
  }

  static CompletableFuture<KitRun> start(String name, List<String> arguments) {
    return CompletableFuture.supplyAsync(
        () -> {
          try {
            Path output = OUT.resolve(name + ".txt");
            List<String> command =
                Stream.concat(
                        Stream.of(JAVA, KIT.toString(), "--logs", OUT.resolve(name).toString()),
                        arguments.stream())
                    .toList();
            Process kit =
                new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(output.toFile())
                    .start();
            if (!kit.waitFor(8, TimeUnit.MINUTES)) {
              kit.destroyForcibly().waitFor();
            }
            return new KitRun(kit.exitValue(), Files.readString(output));
          } catch (IOException | InterruptedException e) {
            throw new IllegalStateException(e);
          }
        },
        lanes);
  }

  static void write(Path file, String text) {
    try {
      Files.writeString(file, text);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
