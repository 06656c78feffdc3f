package dev.claimq.faults;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A throwaway PostgreSQL cluster of the suite's own, made with the installed binaries on a free
 * loopback port, so restarting or killing it never disturbs any other database on the machine.
 * PostgreSQL refuses to run as root; as root, its binaries run as the postgres OS user.
 */
final class Cluster implements AutoCloseable {
  static final boolean ROOT = "root".equals(System.getProperty("user.name"));

  final int port;
  final Path bin;
  final Path dir;
  final Path data;
  private final Path log;

  Cluster(Path bin, Path dir, int port) {
    this.bin = bin;
    this.dir = dir;
    this.data = dir.resolve("data");
    this.log = dir.resolve("postgres.log");
    this.port = port;
  }

  static Cluster create(Path logs) throws IOException, InterruptedException {
    Path bin = findBinaries();
    Path dir = Files.createTempDirectory("claimq-faults-pg");
    Cluster cluster = new Cluster(bin, dir, freePort(55432));
    if (ROOT) {
      run(List.of("chown", "-R", "postgres", dir.toString()), Duration.ofSeconds(10));
    }
    cluster.pg(
        Duration.ofSeconds(60),
        "initdb",
        "-D",
        cluster.data.toString(),
        "-U",
        "postgres",
        "--auth=trust",
        "--no-sync",
        "-E",
        "UTF8");
    Files.writeString(
        logs.resolve("postgres-port.txt"), Integer.toString(cluster.port) + System.lineSeparator());
    cluster.start();
    return cluster;
  }

  String jdbcUrl() {
    return "jdbc:postgresql://127.0.0.1:" + port + "/postgres";
  }

  Connection connect() throws SQLException {
    return DriverManager.getConnection(
        jdbcUrl() + "?connectTimeout=5&socketTimeout=30", "postgres", "");
  }

  void start() throws IOException, InterruptedException {
    pg(
        Duration.ofSeconds(60),
        "pg_ctl",
        "-D",
        data.toString(),
        "-l",
        log.toString(),
        "-w",
        "-t",
        "50",
        "-o",
        "-c listen_addresses=127.0.0.1 -c port="
            + port
            + " -c unix_socket_directories='' -c fsync=off -c max_connections=200",
        "start");
  }

  /** Stops the server: "fast" rolls back and disconnects; "immediate" is a crash. */
  void stop(String mode) throws IOException, InterruptedException {
    pg(
        Duration.ofSeconds(60),
        "pg_ctl",
        "-D",
        data.toString(),
        "-m",
        mode,
        "-w",
        "-t",
        "50",
        "stop");
  }

  /**
   * Makes every transaction begin read-only, or not, as a replica's would: in every session, the
   * pooled ones included, once the configuration is reloaded.
   */
  void setReadOnly(boolean readOnly) throws SQLException {
    try (Connection c = connect();
        Statement s = c.createStatement()) {
      s.execute("SET default_transaction_read_only = off"); // this session's own, to write this
      s.execute(
          readOnly
              ? "ALTER SYSTEM SET default_transaction_read_only = on"
              : "ALTER SYSTEM RESET default_transaction_read_only");
      s.execute("SELECT pg_reload_conf()");
    }
    // A reload reaches each session at its next command; give them a moment to see it.
    try {
      Thread.sleep(500);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Ends every other session (the service's pooled connections and its listener). */
  int terminateBackends() throws SQLException {
    try (Connection c = connect();
        Statement s = c.createStatement();
        var rows =
            s.executeQuery(
                "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity"
                    + " WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'")) {
      rows.next();
      return rows.getInt(1);
    }
  }

  boolean ready() {
    try (Connection c = connect();
        Statement s = c.createStatement()) {
      s.execute("SELECT 1");
      return true;
    } catch (SQLException e) {
      return false;
    }
  }

  @Override
  public void close() throws IOException, InterruptedException {
    try {
      stop("immediate");
    } catch (IOException | RuntimeException e) {
      // already stopped
    }
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  void pg(Duration timeout, String program, String... args)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    if (ROOT) {
      command.addAll(List.of("runuser", "-u", "postgres", "--"));
    }
    command.add(bin.resolve(program).toString());
    command.addAll(List.of(args));
    run(command, timeout);
  }

  static void run(List<String> command, Duration timeout) throws IOException, InterruptedException {
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    // Read the output as it comes so a chatty command never blocks on a full pipe.
    var output = new StringBuilder();
    Thread reader =
        new Thread(
            () -> {
              try {
                output.append(new String(process.getInputStream().readAllBytes()));
              } catch (IOException e) {
                // the process went away
              }
            });
    reader.start();
    if (!process.waitFor(timeout.toSeconds(), TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new IOException("timed out: " + command);
    }
    reader.join(5_000);
    if (process.exitValue() != 0) {
      throw new IOException(command + " exited " + process.exitValue() + ": " + output);
    }
  }

  static Path findBinaries() throws IOException {
    try (Stream<Path> versions = Files.list(Path.of("/usr/lib/postgresql"))) {
      return versions
          .map(v -> v.resolve("bin"))
          .filter(b -> Files.isExecutable(b.resolve("initdb")))
          .max(Comparator.comparing(b -> Integer.parseInt(b.getParent().getFileName().toString())))
          .orElseThrow(() -> new IOException("no PostgreSQL binaries under /usr/lib/postgresql"));
    }
  }

  static int freePort(int preferred) throws IOException {
    for (int port = preferred; port < preferred + 50; port++) {
      try (ServerSocket socket =
          new ServerSocket(port, 1, java.net.InetAddress.getLoopbackAddress())) {
        return port;
      } catch (IOException taken) {
        // try the next one
      }
    }
    try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }
}
