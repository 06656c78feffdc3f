package dev.claimq.faults;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A primary and a streaming standby of the suite's own, on loopback ports, made as an operator
 * would with PostgreSQL's own tools: initdb, pg_basebackup -R, and for synchronous replication
 * synchronous_standby_names naming the standby (synchronous_commit is on by default). The fault is
 * the loss of the primary's machine: every process of the primary SIGKILLed, then the standby
 * promoted.
 */
final class ReplicatedCluster implements AutoCloseable {
  static final String STANDBY = "claimq_standby";

  final Cluster primary;
  final Cluster standby;
  final boolean synchronous;
  private long senderPid; // while stopped

  private ReplicatedCluster(Cluster primary, Cluster standby, boolean synchronous) {
    this.primary = primary;
    this.standby = standby;
    this.synchronous = synchronous;
  }

  static ReplicatedCluster create(String name, boolean synchronous)
      throws IOException, InterruptedException, SQLException {
    Path bin = Cluster.findBinaries();
    Cluster primary = newCluster(bin, name + "-primary", 56432);
    Cluster standby = null;
    try {
      primary.pg(
          Duration.ofSeconds(60),
          "initdb",
          "-D",
          primary.data.toString(),
          "-U",
          "postgres",
          "--auth=trust",
          "--no-sync",
          "-E",
          "UTF8");
      // initdb's pg_hba.conf already trusts replication connections from loopback.
      appendConf(
          primary.data.resolve("postgresql.conf"),
          synchronous
              ? "synchronous_standby_names = 'FIRST 1 (" + STANDBY + ")'"
              : "synchronous_standby_names = ''",
          "synchronous_commit = on");
      primary.start();
      standby = newCluster(bin, name + "-standby", primary.port + 1);
      primary.pg(
          Duration.ofSeconds(60),
          "pg_basebackup",
          "-h",
          "127.0.0.1",
          "-p",
          Integer.toString(primary.port),
          "-U",
          "postgres",
          "-D",
          standby.data.toString(),
          "-X",
          "stream",
          "-c",
          "fast",
          "-R",
          "--no-sync");
      // The standby names itself, as synchronous_standby_names refers to it. Once promoted it has
      // no
      // standby of its own, so it must not wait for one: it writes alone until a new one attaches.
      appendConf(
          standby.data.resolve("postgresql.auto.conf"),
          "primary_conninfo = 'host=127.0.0.1 port="
              + primary.port
              + " user=postgres application_name="
              + STANDBY
              + "'",
          "synchronous_standby_names = ''");
      standby.start();
      ReplicatedCluster pair = new ReplicatedCluster(primary, standby, synchronous);
      pair.awaitStreaming(Duration.ofSeconds(30));
      return pair;
    } catch (IOException | InterruptedException | SQLException | RuntimeException e) {
      if (standby != null) {
        standby.close();
      }
      primary.close();
      throw e;
    }
  }

  /** How claimq is pointed at the pair: both hosts, and only the primary will do. */
  String jdbcUrl() {
    return "jdbc:postgresql://127.0.0.1:"
        + primary.port
        + ",127.0.0.1:"
        + standby.port
        + "/postgres?targetServerType=primary";
  }

  /** Waits until the primary streams to the standby, synchronously when configured so. */
  private void awaitStreaming(Duration timeout) throws SQLException, InterruptedException {
    String expected = synchronous ? "sync" : "async";
    long deadline = System.nanoTime() + timeout.toNanos();
    String seen = "no standby";
    while (System.nanoTime() < deadline) {
      try (Connection c = primary.connect();
          PreparedStatement s =
              c.prepareStatement(
                  "SELECT state, sync_state FROM pg_stat_replication WHERE application_name = ?")) {
        s.setString(1, STANDBY);
        try (ResultSet r = s.executeQuery()) {
          if (r.next()) {
            seen = r.getString(1) + "/" + r.getString(2);
            if (seen.equals("streaming/" + expected)) {
              return;
            }
          }
        }
      }
      Thread.sleep(100);
    }
    throw new IllegalStateException(
        "the standby is " + seen + ", not streaming/" + expected + " within " + timeout);
  }

  /**
   * SIGKILL to the primary's postmaster and every one of its processes at once: no shutdown, no
   * last WAL sent, sockets closed by the kernel, as when its machine dies.
   */
  void killPrimary() throws IOException, InterruptedException {
    long postmaster = postmasterPid(primary);
    ProcessHandle handle =
        ProcessHandle.of(postmaster)
            .orElseThrow(() -> new IOException("the primary's postmaster is not running"));
    List<String> command = new ArrayList<>(List.of("kill", "-KILL", Long.toString(postmaster)));
    handle.descendants().forEach(p -> command.add(Long.toString(p.pid())));
    Cluster.run(command, Duration.ofSeconds(10));
    senderPid = 0; // killed with the rest, stopped or not
    try {
      handle.onExit().get(10, java.util.concurrent.TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      throw new IOException("the primary's postmaster " + postmaster + " did not die", e);
    }
  }

  /**
   * Stops (SIGSTOP) or resumes (SIGCONT) the primary's WAL sender: a standby falling behind, as a
   * busy network makes one. (Stopping the standby's receiver would not do: what the sender wrote
   * waits in the socket and is read after the primary is gone.) A synchronous primary's commits
   * wait meanwhile; an asynchronous one's do not.
   */
  void replicating(boolean replicating) throws IOException, InterruptedException, SQLException {
    if (senderPid == 0) {
      try (Connection c = primary.connect();
          PreparedStatement s =
              c.prepareStatement(
                  "SELECT pid FROM pg_stat_replication WHERE application_name = ?")) {
        s.setString(1, STANDBY);
        try (ResultSet r = s.executeQuery()) {
          if (!r.next()) {
            throw new IOException("the primary has no WAL sender to the standby");
          }
          senderPid = r.getLong(1);
        }
      }
    }
    Cluster.run(
        List.of("kill", replicating ? "-CONT" : "-STOP", Long.toString(senderPid)),
        Duration.ofSeconds(10));
    if (replicating) {
      senderPid = 0;
    }
  }

  /** The standby ends recovery and becomes the primary; waits until it accepts writes. */
  void promote() throws IOException, InterruptedException {
    standby.pg(
        Duration.ofSeconds(60),
        "pg_ctl",
        "-D",
        standby.data.toString(),
        "-w",
        "-t",
        "50",
        "promote");
  }

  @Override
  public void close() throws IOException, InterruptedException {
    try {
      standby.close();
    } finally {
      if (senderPid != 0) {
        try {
          replicating(true); // a stopped sender would keep the primary from stopping
        } catch (IOException | SQLException e) {
          // it is gone already
        }
      }
      primary.close();
    }
  }

  private static long postmasterPid(Cluster cluster) throws IOException {
    return Long.parseLong(
        Files.readAllLines(cluster.data.resolve("postmaster.pid")).get(0).strip());
  }

  private static Cluster newCluster(Path bin, String name, int preferredPort)
      throws IOException, InterruptedException {
    Path dir = Files.createTempDirectory("claimq-faults-" + name);
    Cluster cluster = new Cluster(bin, dir, Cluster.freePort(preferredPort));
    if (Cluster.ROOT) {
      Cluster.run(List.of("chown", "-R", "postgres", dir.toString()), Duration.ofSeconds(10));
    }
    return cluster;
  }

  private static void appendConf(Path file, String... lines) throws IOException {
    Files.writeString(
        file,
        System.lineSeparator()
            + String.join(System.lineSeparator(), lines)
            + System.lineSeparator(),
        StandardOpenOption.APPEND);
  }
}
