package dev.claimq.faults;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * What every fault scenario stands on: the suite's own PostgreSQL cluster, the fake provider and
 * two claimq instances (made once for the suite), and the steps the scenarios share: run one
 * scenario and check it, start and stop workers, enqueue, probe the instances while the database is
 * away, and read the database behind them. {@link FaultScenariosIT} holds the scenarios.
 */
abstract class FaultHarness {
  static final boolean FULL = "full".equals(System.getProperty("faults.scale", "short"));
  static final int ITEMS = FULL ? 3000 : 200;
  static final Path LOGS = Path.of("target", "faults");

  /** Every instance's settings: a fast reaper, short backoff, a quick long-poll fallback. */
  static final Map<String, String> KNOBS =
      Map.of(
          "CLAIMQ_REAPER_INTERVAL", "1s",
          "CLAIMQ_RETRY_BACKOFF_BASE", "1s",
          "CLAIMQ_RETRY_BACKOFF_CAP", "2s",
          "CLAIMQ_LONG_POLL_FALLBACK_INTERVAL", "1s",
          // Idle worker threads go after 5 s, not 30 s: scenario 14's leak check waits 15 s for
          // the thread count to come back after 2,000 hostile clients grew the pool.
          "QUARKUS_THREAD_POOL_KEEP_ALIVE_TIME", "5s");

  static Map<String, String> withKnobs(Map<String, String> more) {
    Map<String, String> all = new HashMap<>(KNOBS);
    all.putAll(more);
    return all;
  }

  static Cluster cluster;
  static Provider provider;
  static final List<ServiceInstance> instances = new ArrayList<>();
  static final Map<String, String> summary = new LinkedHashMap<>();
  static int passed;
  static int failed;

  // Per scenario
  History history;
  Http http;
  final AtomicBoolean stopping = new AtomicBoolean();
  final List<Thread> javaWorkers = new ArrayList<>();
  final List<Process> processes = new ArrayList<>();
  Map<Path, Long> logOffsets;

  @BeforeAll
  static void startCluster() throws Exception {
    Files.createDirectories(LOGS);
    cluster = Cluster.create(LOGS);
    provider = new Provider(LOGS);
    for (String name : List.of("a", "b")) {
      ServiceInstance instance =
          new ServiceInstance(
              name,
              Cluster.freePort(name.equals("a") ? 18181 : 18281),
              cluster.jdbcUrl(),
              LOGS,
              KNOBS);
      Files.deleteIfExists(instance.log);
      instances.add(instance); // first, so that it is stopped even if it fails to start
    }
    ServiceInstance.startAll(instances);
    System.out.printf(
        "faults: scale %s, PostgreSQL on 127.0.0.1:%d, claimq on %s%n",
        FULL ? "full" : "short", cluster.port, urls());
  }

  @AfterAll
  static void stopCluster() throws Exception {
    for (ServiceInstance instance : instances) {
      instance.close();
    }
    if (provider != null) {
      provider.close();
    }
    if (cluster != null) {
      cluster.close();
    }
    System.out.println();
    System.out.printf(
        "%-26s %7s %7s %11s %7s  %s%n",
        "scenario", "items", "faults", "violations", "secs", "end states");
    summary.values().forEach(System.out::println);
    System.out.printf("%d passed, %d failed%n", passed, failed);
  }

  static List<String> urls() {
    return instances.stream().map(ServiceInstance::url).toList();
  }

  static int parked(ServiceInstance instance) throws Exception {
    return (int) metric(instance.url(), "claimq_longpolls_parked");
  }

  /**
   * One client for every look at the metrics and readiness. A client made per look keeps its
   * keep-alive connection open in the service until the client is collected, which scenario 14's
   * leak check counted as the service's open files (70 to 138 of them, as the GC pleased).
   */
  private static final java.net.http.HttpClient PROBES =
      java.net.http.HttpClient.newBuilder()
          .version(java.net.http.HttpClient.Version.HTTP_1_1)
          .build();

  /**
   * The sum of a metric's series on the instance's /q/metrics; -1 when it is not there, or when the
   * instance does not answer within 20 s (a starved instance: the caller's bound judges it).
   */
  static double metric(String url, String name) throws Exception {
    String text;
    try {
      text =
          PROBES
              .send(
                  java.net.http.HttpRequest.newBuilder(java.net.URI.create(url + "/q/metrics"))
                      .timeout(Duration.ofSeconds(20))
                      .build(),
                  java.net.http.HttpResponse.BodyHandlers.ofString())
              .body();
    } catch (java.net.http.HttpTimeoutException e) {
      return -1;
    }
    double sum = 0;
    boolean found = false;
    for (String line : text.split("\n")) {
      if (line.startsWith(name + " ") || line.startsWith(name + "{")) {
        sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
        found = true;
      }
    }
    return found ? sum : -1;
  }

  /** Sessions of the fault cluster running a statement or inside a transaction, but ours. */
  static int busyBackends() throws Exception {
    return (int)
        queryDouble(
            "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'"
                + " AND pid <> pg_backend_pid() AND state <> 'idle'");
  }

  static double queryDouble(String sql) throws Exception {
    try (var c = cluster.connect();
        var s = c.createStatement();
        var r = s.executeQuery(sql)) {
      return r.next() ? r.getDouble(1) : Double.NaN;
    }
  }

  static String queryString(String sql) throws Exception {
    try (var c = cluster.connect();
        var s = c.createStatement();
        var r = s.executeQuery(sql)) {
      r.next();
      return r.getString(1);
    }
  }

  void enqueueOne(String url, String queue, String key, Map<String, Object> extra)
      throws Exception {
    Map<String, Object> body = new HashMap<>(extra);
    body.put("dedupeKey", key);
    body.put("payload", Map.of("key", key));
    Http.Answer answer =
        http.claimq(
            url,
            "POST",
            "/v1/queues/" + queue + "/items",
            Http.AGENT,
            body,
            Duration.ofSeconds(10));
    if (answer.status() != 201) {
      throw new AssertionError("the enqueue of " + key + " answered " + answer.status());
    }
  }

  /** The harness's own call, as a worker or an operator would make it, to the first instance. */
  Http.Answer onFirst(String method, String path, String key, Object body) throws Exception {
    return http.claimq(urls().get(0), method, path, key, body, Duration.ofSeconds(10));
  }

  void setPolicy(String queue, Map<String, Object> policy) throws Exception {
    Http.Answer answer = onFirst("PUT", "/v1/queues/" + queue + "/policy", Http.OPERATOR, policy);
    assertThat(answer.status()).as("PUT policy: %s", answer.body()).isEqualTo(200);
  }

  static String lastError(long id) throws Exception {
    try (var c = cluster.connect();
        var s = c.prepareStatement("SELECT last_error FROM claimq.item WHERE id = ?")) {
      s.setLong(1, id);
      try (var r = s.executeQuery()) {
        return r.next() ? r.getString(1) : null;
      }
    }
  }

  // ---------------------------------------------------------------------------------------------

  interface Body {
    void run(String queue, Set<String> keys) throws Exception;
  }

  /** Runs one scenario: load and faults, drain, stop the workers, then check. */
  void scenario(String title, String prefix, Body body) throws Exception {
    scenario(title, prefix, ITEMS, body);
  }

  /** A scenario over its own number of dedupe keys. */
  void scenario(String title, String prefix, int items, Body body) throws Exception {
    String queue = prefix + "-" + System.currentTimeMillis() % 100000;
    history = new History();
    http = new Http(history);
    stopping.set(false);
    for (ServiceInstance instance : instances) {
      if (!instance.alive()) {
        instance.start();
      }
      instance.awaitReady(Duration.ofSeconds(60));
    }
    logOffsets = new HashMap<>();
    for (ServiceInstance instance : instances) {
      logOffsets.put(instance.log, Files.size(instance.log));
    }
    Set<String> keys = new LinkedHashSet<>();
    for (int n = 0; n < items; n++) {
      keys.add(queue + "/" + n);
    }
    long started = System.nanoTime();
    List<String> violations = new ArrayList<>();
    Checker checker = new Checker();
    try {
      body.run(queue, keys);
      awaitDrained(queue);
    } catch (Exception | AssertionError e) {
      violations.add("the scenario itself failed: " + e);
    } finally {
      stopWorkers();
    }
    for (ServiceInstance instance : instances) {
      if (instance.unexpectedExit() != null) {
        violations.add(instance.unexpectedExit());
      }
    }
    violations.addAll(checker.check(cluster, queue, keys, provider, history, logOffsets));
    long errors = 0;
    for (Map.Entry<Path, Long> log : logOffsets.entrySet()) {
      errors += Checker.errorLines(log.getKey(), log.getValue());
    }
    long seconds = (System.nanoTime() - started) / 1_000_000_000L;
    summary.put(
        title,
        String.format(
            "%-26s %7d %7d %11d %7d  %s; 503s %d, 409s %d, ERROR log lines %d",
            title,
            checker.itemsByKey.size(),
            history.faults.get(),
            violations.size(),
            seconds,
            checker.states,
            history.unavailable.get(),
            history.staleClaims.get(),
            errors));
    System.out.println("faults: " + summary.get(title));
    violations.stream().limit(50).forEach(v -> System.out.println("  violation: " + v));
    if (violations.isEmpty()) {
      passed++;
    } else {
      failed++;
    }
    assertThat(violations).as(title + ": violations").isEmpty();
  }

  // --- load -------------------------------------------------------------------------------------

  /** Enqueues every key, a third of them three times over, from 8 clients across the instances. */
  void enqueueWithDuplicates(String queue, Set<String> keys, Map<String, Object> extra)
      throws Exception {
    List<String> work = new ArrayList<>();
    for (String key : keys) {
      work.add(key);
      if (key.hashCode() % 3 == 0) {
        work.add(key);
        work.add(key);
      }
    }
    Collections.shuffle(work);
    ExecutorService pool = Executors.newFixedThreadPool(8);
    List<Future<?>> calls = new ArrayList<>();
    for (String key : work) {
      calls.add(pool.submit(() -> enqueueUntilAnswered(queue, key, extra, null)));
    }
    for (Future<?> call : calls) {
      call.get(2, TimeUnit.MINUTES);
    }
    pool.shutdown();
  }

  void enqueueQuietly(String queue, Set<String> keys) {
    try {
      enqueueWithDuplicates(queue, keys, Map.of());
    } catch (Exception e) {
      history.violation("enqueue failed: " + e);
    }
  }

  /**
   * Enqueues one key until an answer arrives: a timeout (a third of first tries get a 20 ms one) or
   * a 503 is retried, bounded, as a client would.
   */
  Void enqueueUntilAnswered(
      String queue, String key, Map<String, Object> extra, Map<String, AtomicInteger> created)
      throws InterruptedException {
    Map<String, Object> payload = new HashMap<>(extra);
    payload.remove("maxAttempts");
    payload.put("key", key);
    Map<String, Object> body = new HashMap<>();
    body.put("dedupeKey", key);
    body.put("payload", payload);
    if (extra.containsKey("maxAttempts")) {
      body.put("maxAttempts", extra.get("maxAttempts"));
    }
    ThreadLocalRandom random = ThreadLocalRandom.current();
    for (int attempt = 0; attempt < 60; attempt++) {
      String url = urls().get(random.nextInt(instances.size()));
      Duration timeout =
          created != null && attempt == 0 && random.nextInt(3) == 0
              ? Duration.ofMillis(20)
              : Duration.ofSeconds(15);
      try {
        Http.Answer answer =
            http.claimq(url, "POST", "/v1/queues/" + queue + "/items", Http.AGENT, body, timeout);
        if (answer.status() == 201 || answer.status() == 200) {
          history.enqueued(key, answer.body().path("id").asText(), answer.status());
          if (answer.status() == 201 && created != null) {
            created.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
          }
          return null;
        }
        if (answer.status() < 500) {
          history.violation(
              "enqueue of " + key + " answered " + answer.status() + " " + answer.body());
          return null;
        }
      } catch (java.net.http.HttpTimeoutException timedOut) {
        if (timeout.toMillis() < 1000) {
          history.fault(); // a client giving up early: the service may or may not have enqueued
        }
      } catch (IOException refused) {
        // retried below
      }
      Thread.sleep(random.nextLong(50, 500));
    }
    history.violation("enqueue of " + key + " never answered");
    return null;
  }

  void startJavaWorkers(String queue, int count, int leaseSeconds) {
    startJavaWorkers(queue, count, leaseSeconds, Duration.ofSeconds(30));
  }

  void startJavaWorkers(String queue, int count, int leaseSeconds, Duration providerTimeout) {
    for (int n = 0; n < count; n++) {
      Thread thread =
          new Thread(
              new JavaWorker(
                  "java-" + n,
                  urls(),
                  queue,
                  provider.url,
                  leaseSeconds,
                  providerTimeout,
                  history,
                  stopping),
              "java-worker-" + n);
      thread.start();
      javaWorkers.add(thread);
    }
  }

  /** The Python and Node reference workers, one on each instance. */
  void startReferenceWorkers(String queue) throws IOException {
    String[][] workers = {
      {"python3", "examples/workers/worker.py"}, {"node", "examples/workers/worker.mjs"}
    };
    for (int n = 0; n < workers.length; n++) {
      String name = workers[n][0] + "-" + queue;
      ProcessBuilder builder =
          new ProcessBuilder(workers[n])
              .redirectErrorStream(true)
              .redirectOutput(LOGS.resolve("worker-" + name + ".log").toFile());
      Map<String, String> env = builder.environment();
      env.put("CLAIMQ_URL", urls().get(n % instances.size()));
      env.put("CLAIMQ_QUEUE", queue);
      env.put("CLAIMQ_WORKER", name);
      env.put("CLAIMQ_API_KEY", Http.WORKER);
      env.put("CLAIMQ_LEASE_SECONDS", "10");
      env.put("CLAIMQ_WAIT_SECONDS", "1");
      env.put("PROVIDER_URL", provider.url);
      processes.add(builder.start());
    }
  }

  void stopWorkers() throws InterruptedException {
    stopping.set(true);
    for (Process process : processes) {
      process.destroy(); // SIGTERM: finish the item in hand, then exit
    }
    for (Process process : processes) {
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        history.violation("a reference worker did not exit within 30 s of SIGTERM");
        process.destroyForcibly();
      }
    }
    for (Thread thread : javaWorkers) {
      thread.join(60_000);
      if (thread.isAlive()) {
        history.violation(thread.getName() + " did not stop within 60 s");
        thread.interrupt();
      }
    }
    processes.clear();
    javaWorkers.clear();
  }

  /** Waits until no item of the queue is pending or sending; a violation after 3 minutes. */
  void awaitDrained(String queue) throws Exception {
    Duration limit = Duration.ofMinutes(FULL ? 6 : 3);
    if (!await(limit, () -> countOpen(queue) == 0)) {
      history.violation("the queue did not drain within " + limit);
    }
  }

  // --- faults -----------------------------------------------------------------------------------

  Process faultWorker(String queue, String mode, int leaseSeconds) throws IOException {
    return faultWorker(queue, mode, leaseSeconds, 0);
  }

  /** A fault worker whose claim long-polls up to {@code waitSeconds} for an item. */
  Process faultWorker(String queue, String mode, int leaseSeconds, int waitSeconds)
      throws IOException {
    String url = urls().get(ThreadLocalRandom.current().nextInt(instances.size()));
    Process process =
        new ProcessBuilder(
                "python3",
                "src/test/resources/faults/fault_worker.py",
                url,
                queue,
                provider.url,
                Http.WORKER,
                Integer.toString(leaseSeconds),
                mode,
                Integer.toString(waitSeconds))
            .redirectError(
                ProcessBuilder.Redirect.appendTo(LOGS.resolve("fault-workers.log").toFile()))
            .start();
    processes.add(process);
    return process;
  }

  /** A worker claims (and, in mode send, sends) one item, then is SIGKILLed holding the claim. */
  void killFaultWorker(String queue, String mode) throws Exception {
    killFaultWorker(queue, mode, 0);
  }

  /**
   * As {@link #killFaultWorker(String, String)}, the claim long-polling up to {@code waitSeconds};
   * whether the worker was killed holding a claim (false: it found nothing to claim).
   */
  boolean killFaultWorker(String queue, String mode, int waitSeconds) throws Exception {
    Process worker = faultWorker(queue, mode, 2, waitSeconds);
    String line = readLine(worker, Duration.ofSeconds(20 + waitSeconds));
    if (line != null && (line.startsWith("CLAIMED ") || line.startsWith("SENT "))) {
      worker.destroyForcibly(); // SIGKILL
      worker.waitFor(10, TimeUnit.SECONDS);
      history.fault();
      return true;
    }
    worker.destroyForcibly();
    System.out.println("faults: a fault worker found nothing to claim: " + line);
    return false;
  }

  /** While the database is away: every call is a prompt 503 problem+json, never a 500 or a hang. */
  void probeWhileAway(String queue) throws Exception {
    // Each instance is probed on a thread of its own: a probe may take the pool's 3 s wait, and
    // one instance after the other cost the short run seconds a fault.
    List<Thread> probes = new ArrayList<>();
    for (String url : urls()) {
      Thread probe =
          new Thread(
              () -> {
                try {
                  for (int round = 0; round < 2; round++) {
                    probeOnceWhileAway(url, queue);
                  }
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              },
              "probe-away");
      probe.start();
      probes.add(probe);
    }
    for (Thread probe : probes) {
      probe.join();
    }
  }

  void probeOnceWhileAway(String url, String queue) throws InterruptedException {
    long start = System.nanoTime();
    int status;
    try {
      status =
          http.claimq(
                  url,
                  "POST",
                  "/v1/queues/" + queue + "-probe/claim",
                  Http.WORKER,
                  Map.of("worker", "probe"),
                  Duration.ofSeconds(20))
              .status();
    } catch (IOException e) {
      status = -1;
    }
    long millis = (System.nanoTime() - start) / 1_000_000;
    if (status != 503) {
      history.violation(
          "with the database away, " + url + " answered " + status + " (expected 503)");
    }
    if (millis > 15_000) {
      history.violation("with the database away, " + url + " took " + millis + " ms");
    }
    int ready = readiness(url);
    if (ready != 503) {
      history.violation(
          "with the database away, "
              + url
              + "/q/health/ready answered "
              + ready
              + " (expected 503: not ready)");
    }
  }

  /** The status of the instance's readiness check; -1 when it does not answer. */
  static int readiness(String url) throws InterruptedException {
    try {
      return PROBES
          .send(
              java.net.http.HttpRequest.newBuilder(java.net.URI.create(url + "/q/health/ready"))
                  .timeout(Duration.ofSeconds(20))
                  .build(),
              java.net.http.HttpResponse.BodyHandlers.discarding())
          .statusCode();
    } catch (IOException e) {
      return -1;
    }
  }

  /** After the database is back: every instance serves again within 10 s, with no restart. */
  void awaitServing(String fault) throws Exception {
    awaitServing(fault, Duration.ofSeconds(10));
  }

  /** After the database is back: every instance serves again within the limit, with no restart. */
  void awaitServing(String fault, Duration limit) throws Exception {
    long back = System.nanoTime();
    for (String url : urls()) {
      boolean serving =
          await(
              Duration.ofSeconds(60),
              () -> {
                try {
                  return http.claimq(
                              url,
                              "POST",
                              "/v1/queues/probe-serving/claim",
                              Http.WORKER,
                              Map.of("worker", "probe"),
                              Duration.ofSeconds(5))
                          .status()
                      == 204;
                } catch (IOException e) {
                  return false;
                }
              });
      long millis = (System.nanoTime() - back) / 1_000_000;
      System.out.printf("faults: after %s, %s served again in %d ms%n", fault, url, millis);
      if (serving && readiness(url) != 200) {
        history.violation("after " + fault + ", " + url + " serves but does not report ready");
      }
      // SERVICE BUG CHECK: the contract is to serve again within the limit of the database
      // returning (10 s after a restart, 15 s after a failover).
      if (!serving || millis > limit.toMillis()) {
        history.violation(
            "after "
                + fault
                + ", "
                + url
                + (serving ? " took " + millis + " ms" : " never")
                + " to serve again (limit "
                + limit.toSeconds()
                + " s)");
      }
    }
  }

  void race(String url, String queue, int count, Map<Long, String> results) {
    Http racer = http;
    ThreadLocalRandom random = ThreadLocalRandom.current();
    for (int n = 0; n < count; n++) {
      try {
        Http.Answer claim =
            racer.claimq(
                url,
                "POST",
                "/v1/queues/" + queue + "/claim",
                Http.WORKER,
                Map.of("worker", "racer", "leaseSeconds", 1),
                Duration.ofSeconds(10));
        if (claim.status() != 200) {
          continue;
        }
        long id = claim.body().path("id").asLong();
        String token = claim.body().path("claimToken").asText();
        racer.send(
            provider.url,
            "POST",
            Map.of("Idempotency-Key", claim.body().path("idempotencyKey").asText()),
            claim.body().path("payload"),
            Duration.ofSeconds(10));
        Thread.sleep(random.nextLong(500, 2500));
        Http.Answer complete =
            racer.claimq(
                url,
                "POST",
                "/v1/items/" + id + "/complete",
                Http.WORKER,
                Map.of("claimToken", token),
                Duration.ofSeconds(10));
        if (complete.status() == 200) {
          history.completed(id, token);
        }
        results.put(id, Integer.toString(complete.status()));
      } catch (IOException e) {
        // A connection cut under the racer (seen now and then under load) leaves the item like a
        // crashed worker's: its lease expires and the drain finishes it; the checker judges it.
        System.out.println("faults: a racer's call failed: " + e);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  void expectPoisoned(Checker.Item item, int maxAttempts, String middle, String last) {
    List<String> outcomes = outcomes(item.id());
    List<String> kinds = outcomes.stream().map(o -> o.substring(o.indexOf(':') + 1)).toList();
    List<String> expected = new ArrayList<>(Collections.nCopies(maxAttempts - 1, middle));
    expected.add(last);
    if (!item.state().equals("failed")
        || item.attempts() != maxAttempts
        || !kinds.equals(expected)) {
      history.violation(
          "poison item "
              + item.id()
              + " is "
              + item.state()
              + " after "
              + item.attempts()
              + " attempts "
              + kinds
              + " (expected failed after "
              + expected
              + ")");
    }
  }

  // --- small helpers ----------------------------------------------------------------------------

  interface Condition {
    boolean met() throws Exception;
  }

  static boolean await(Duration limit, Condition condition) throws Exception {
    long deadline = System.nanoTime() + limit.toNanos();
    while (System.nanoTime() < deadline) {
      if (condition.met()) {
        return true;
      }
      Thread.sleep(200);
    }
    return condition.met();
  }

  static String readLine(Process process, Duration limit) throws Exception {
    BufferedReader reader =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    ExecutorService single = Executors.newSingleThreadExecutor();
    try {
      return single.submit(reader::readLine).get(limit.toMillis(), TimeUnit.MILLISECONDS);
    } finally {
      single.shutdownNow();
    }
  }

  static void signal(String signal, Process process) throws Exception {
    Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).start();
    if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
      throw new IOException("kill -" + signal + " " + process.pid() + " failed");
    }
  }

  static String state(long id) throws Exception {
    try (var c = cluster.connect();
        var s = c.prepareStatement("SELECT state FROM claimq.item WHERE id = ?")) {
      s.setLong(1, id);
      try (var r = s.executeQuery()) {
        return r.next() ? r.getString(1) : null;
      }
    }
  }

  static int countOpen(String queue) throws Exception {
    try (var c = cluster.connect();
        var s =
            c.prepareStatement(
                "SELECT count(*) FROM claimq.item WHERE queue = ? AND state IN ('pending', 'sending')")) {
      s.setString(1, queue);
      try (var r = s.executeQuery()) {
        r.next();
        return r.getInt(1);
      }
    } catch (java.sql.SQLException databaseAway) {
      return -1;
    }
  }

  /** Each attempt of the item as worker:outcome, in order ("racer:done"). */
  static List<String> outcomes(long id) {
    try (var c = cluster.connect();
        var s =
            c.prepareStatement(
                "SELECT coalesce(worker, '?') || ':' || coalesce(outcome, 'open')"
                    + " FROM claimq.attempt WHERE item_id = ? ORDER BY id")) {
      s.setLong(1, id);
      List<String> outcomes = new ArrayList<>();
      try (var r = s.executeQuery()) {
        while (r.next()) {
          outcomes.add(r.getString(1));
        }
      }
      return outcomes;
    } catch (java.sql.SQLException e) {
      return List.of("unreadable: " + e);
    }
  }
}
