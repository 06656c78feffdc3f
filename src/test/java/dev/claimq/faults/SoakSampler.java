package dev.claimq.faults;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Samples the soak every few seconds: each instance's RSS and open file descriptors (from /proc, by
 * the pid that runs now, so a restarted instance starts a new segment), the cluster's client
 * connections and claimq's dead tuples, and the p99 of enqueue-to-done for the items of the queue
 * finished since the last sample (on the database clock). A window that overlaps a fault or the
 * quiet period after it is marked, so the p99 series can be judged without it.
 */
final class SoakSampler {
  /** One sample; NaN where a value could not be read (an instance down, the database away). */
  record Row(
      double t,
      long[] pids,
      int[] segments,
      double[] rssMib,
      double[] fds,
      double connections,
      double deadTuples,
      double p99Millis,
      int windowItems,
      boolean afterFault) {}

  final List<Row> rows = new CopyOnWriteArrayList<>();
  private final Cluster cluster;
  private final List<ServiceInstance> instances;
  private final String queue;
  private final long started = System.nanoTime();
  private final long[] lastPids;
  private final int[] segments;
  private Timestamp windowStart;
  private long windowStartNanos = started;
  private volatile long faultUntilNanos = Long.MIN_VALUE;

  SoakSampler(Cluster cluster, List<ServiceInstance> instances, String queue) {
    this.cluster = cluster;
    this.instances = instances;
    this.queue = queue;
    this.lastPids = new long[instances.size()];
    this.segments = new int[instances.size()];
    java.util.Arrays.fill(segments, -1);
  }

  double seconds() {
    return (System.nanoTime() - started) / 1e9;
  }

  /** A fault begins: windows from now on are marked until {@link #faultEnded}'s quiet ends. */
  void faultStarted() {
    faultUntilNanos = Long.MAX_VALUE;
  }

  void faultEnded(java.time.Duration quiet) {
    faultUntilNanos = System.nanoTime() + quiet.toNanos();
  }

  void sample() {
    long now = System.nanoTime();
    boolean afterFault = faultUntilNanos > windowStartNanos;
    int count = instances.size();
    long[] pids = new long[count];
    double[] rss = new double[count];
    double[] fds = new double[count];
    int[] segmentOf = new int[count];
    for (int i = 0; i < count; i++) {
      pids[i] = instances.get(i).pid();
      // A new process starts a new segment once it answers ready: before that it is starting
      // (minutes on a busy machine), and a JVM's start is growth that is no leak. Until then
      // its samples are in the CSV with segment -1, and judged in no segment.
      boolean started = pids[i] > 0 && pids[i] != lastPids[i];
      if (started && instances.get(i).ready()) {
        lastPids[i] = pids[i];
        segments[i]++;
      }
      segmentOf[i] = started && lastPids[i] != pids[i] ? -1 : segments[i];
      rss[i] = pids[i] > 0 ? Soak.rssMib(pids[i]) : Double.NaN;
      fds[i] = pids[i] > 0 ? Soak.openFds(pids[i]) : Double.NaN;
    }
    double connections = Double.NaN;
    double dead = Double.NaN;
    double p99 = Double.NaN;
    int items = 0;
    try (Connection c = cluster.connect();
        Statement s = c.createStatement()) {
      try (ResultSet r =
          s.executeQuery(
              "SELECT count(*) FROM pg_stat_activity"
                  + " WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")) {
        r.next();
        connections = r.getInt(1);
      }
      try (ResultSet r =
          s.executeQuery(
              "SELECT coalesce(sum(n_dead_tup), 0) FROM pg_stat_user_tables"
                  + " WHERE schemaname = 'claimq'")) {
        r.next();
        dead = r.getLong(1);
      }
      Timestamp end;
      try (ResultSet r = s.executeQuery("SELECT now()")) {
        r.next();
        end = r.getTimestamp(1);
      }
      if (windowStart != null) {
        List<Double> latencies = new ArrayList<>();
        try (PreparedStatement p =
            c.prepareStatement(
                "SELECT extract(epoch FROM a.finished_at - i.created_at) * 1000"
                    + " FROM claimq.attempt a JOIN claimq.item i ON i.id = a.item_id"
                    + " WHERE i.queue = ? AND a.outcome = 'done'"
                    + " AND a.finished_at > ? AND a.finished_at <= ?")) {
          p.setString(1, queue);
          p.setTimestamp(2, windowStart);
          p.setTimestamp(3, end);
          try (ResultSet r = p.executeQuery()) {
            while (r.next()) {
              latencies.add(r.getDouble(1));
            }
          }
        }
        items = latencies.size();
        p99 = Soak.percentile(latencies.stream().mapToDouble(Double::doubleValue).toArray(), 0.99);
      }
      // A window the database could not be asked about joins the next one.
      windowStart = end;
      windowStartNanos = now;
    } catch (SQLException away) {
      // the database is restarting or cut: this sample has no database figures
    }
    rows.add(
        new Row(seconds(), pids, segmentOf, rss, fds, connections, dead, p99, items, afterFault));
  }

  /** The samples as CSV, one row per sample, NaN left empty. */
  void write(Path file, List<String> names) throws IOException {
    StringBuilder csv = new StringBuilder("t_seconds");
    for (String name : names) {
      csv.append(String.format(",pid_%s,segment_%s,rss_mib_%s,fds_%s", name, name, name, name));
    }
    csv.append(",connections,dead_tuples,p99_ms,window_items,after_fault\n");
    for (Row row : rows) {
      csv.append(number(row.t));
      for (int i = 0; i < names.size(); i++) {
        csv.append(',').append(row.pids[i] > 0 ? Long.toString(row.pids[i]) : "");
        csv.append(',').append(row.segments[i]);
        csv.append(',').append(number(row.rssMib[i]));
        csv.append(',').append(number(row.fds[i]));
      }
      csv.append(',').append(number(row.connections));
      csv.append(',').append(number(row.deadTuples));
      csv.append(',').append(number(row.p99Millis));
      csv.append(',').append(row.windowItems);
      csv.append(',').append(row.afterFault ? 1 : 0);
      csv.append('\n');
    }
    Files.writeString(file, csv);
  }

  private static String number(double value) {
    return Double.isNaN(value) ? "" : String.format(Locale.ROOT, "%.1f", value);
  }
}
