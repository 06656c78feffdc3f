package dev.claimq.faults;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One claimq process: the packaged jar, on its own port, against the suite's cluster. Its output
 * (with an access log line per request) is appended to a file the checker scans for 500s.
 */
final class ServiceInstance implements AutoCloseable {
  // The dev keys' entries from application.properties; the keys are dev-agent-key and so on.
  static final String KEYS =
      String.join(
          ",",
          "dev-agent:agent:*:768d431c7599a91b58ae5747e08e9aa96dcb4eef45e029c87e3e060e521dcead",
          "dev-worker:worker:*:0b42357e3654716d9915e42b3b44d9c762169d7c4c972906b45a1d8b28dbad2e",
          "dev-operator:operator:*:7eee78659ab50d4dd820f4242709d188809ca0249506edf83d70022973d5e2ca",
          "dev-admin:agent+worker+operator:*:df76ff796f70d2c9cb055ea6280553caa27eda26b70e01082c160de75a05a4a9");

  final String name;
  final int port;
  final Path log;
  private final String jdbcUrl;
  private final Map<String, String> extraEnv;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private Process process;
  private boolean killed;

  ServiceInstance(String name, int port, String jdbcUrl, Path logs, Map<String, String> extraEnv) {
    this.name = name;
    this.port = port;
    this.jdbcUrl = jdbcUrl;
    this.log = logs.resolve("service-" + name + ".log");
    this.extraEnv = extraEnv;
  }

  String url() {
    return "http://127.0.0.1:" + port;
  }

  // A JVM start takes seconds on a quiet machine, and a minute or more on a busy shared one.
  static final Duration START_LIMIT = Duration.ofSeconds(180);

  void start() throws IOException, InterruptedException {
    start(START_LIMIT);
  }

  /** Starts the process and waits until it is ready, an exception after {@code readyLimit}. */
  void start(Duration readyLimit) throws IOException, InterruptedException {
    launch();
    awaitReady(readyLimit);
  }

  /**
   * Starts each instance's process, then waits for them all: a pair starts in the time of one,
   * where one after the other cost the short run several seconds a pair.
   */
  static void startAll(List<ServiceInstance> instances) throws IOException, InterruptedException {
    for (ServiceInstance instance : instances) {
      instance.launch();
    }
    for (ServiceInstance instance : instances) {
      instance.awaitReady(START_LIMIT);
    }
  }

  /** Starts the process and returns; {@link #awaitReady} waits for it to serve. */
  void launch() throws IOException {
    Path jar = Path.of("target", "quarkus-app", "quarkus-run.jar");
    if (!Files.exists(jar)) {
      throw new IOException(jar + " is missing: package the service first (./mvnw verify does)");
    }
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(List.of("-Xmx256m", "-jar", jar.toString()));
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    Map<String, String> env = builder.environment();
    env.put("QUARKUS_DATASOURCE_JDBC_URL", jdbcUrl);
    env.put("QUARKUS_HTTP_PORT", Integer.toString(port));
    env.put("QUARKUS_HTTP_HOST", "127.0.0.1");
    env.put("CLAIMQ_AUTH_KEYS", KEYS);
    env.put("QUARKUS_HTTP_ACCESS_LOG_ENABLED", "true");
    env.put("QUARKUS_HTTP_ACCESS_LOG_PATTERN", "access %m %U %s");
    env.putAll(extraEnv);
    Files.writeString(
        log,
        "=== start " + name + " ===" + System.lineSeparator(),
        StandardOpenOption.CREATE,
        StandardOpenOption.APPEND);
    process = builder.start();
    killed = false;
  }

  /** Waits until the readiness check answers 200 (the database is reachable from here). */
  boolean awaitReady(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (process != null && !process.isAlive()) {
        throw new IllegalStateException(name + " exited " + process.exitValue() + "; see " + log);
      }
      if (ready()) {
        return true;
      }
      Thread.sleep(100);
    }
    throw new IllegalStateException(name + " not ready within " + timeout + "; see " + log);
  }

  boolean ready() {
    try {
      HttpResponse<Void> response =
          http.send(
              HttpRequest.newBuilder(URI.create(url() + "/q/health/ready"))
                  .timeout(Duration.ofSeconds(2))
                  .build(),
              HttpResponse.BodyHandlers.discarding());
      return response.statusCode() == 200;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  boolean alive() {
    return process != null && process.isAlive();
  }

  /** The process id while it runs, else -1. */
  long pid() {
    Process running = process;
    return running != null && running.isAlive() ? running.pid() : -1;
  }

  /**
   * Why the process is gone though the suite did not stop it (something else on the machine sent it
   * a signal, or it crashed), or null while it runs or after the suite killed it.
   */
  String unexpectedExit() {
    if (process == null || process.isAlive() || killed) {
      return null;
    }
    return "instance "
        + name
        + " exited with status "
        + process.exitValue()
        + " without the suite stopping it; see "
        + log;
  }

  /**
   * SIGTERM, as a platform stops a container: how long the process took to exit, or null when it
   * had not within 35 s (and was then killed).
   */
  Duration stop() throws InterruptedException {
    killed = true;
    long from = System.nanoTime();
    process.destroy();
    if (!process.waitFor(35, TimeUnit.SECONDS)) {
      kill();
      return null;
    }
    return Duration.ofNanos(System.nanoTime() - from);
  }

  /** SIGKILL: no shutdown hook, no draining; in-flight requests are simply cut. */
  void kill() throws InterruptedException {
    killed = true;
    process.destroyForcibly();
    process.waitFor(10, TimeUnit.SECONDS);
  }

  @Override
  public void close() throws InterruptedException {
    killed = true;
    if (process != null && process.isAlive()) {
      process.destroy();
      if (!process.waitFor(35, TimeUnit.SECONDS)) {
        kill();
      }
    }
  }
}
