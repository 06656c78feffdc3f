package dev.claimq.maintenance;

import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;

import dev.claimq.AsAdmin;
import dev.claimq.LogCapture;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.logging.Level;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

@QuarkusTest
class VacuumTest extends AsAdmin {
  @Inject Vacuum vacuum;
  @Inject DataSource dataSource;

  @Test
  void dead_rows_at_the_front_of_the_claim_index_are_vacuumed_away() throws SQLException {
    String queue = uniqueQueue("vacuum");
    // 5,000 items claimed away (here: cancelled, which takes them out of the claim index the same
    // way) ahead of one that is still pending: the shape a drained queue leaves behind.
    execute(
        "INSERT INTO item (queue, dedupe_key, payload, max_attempts, run_at)"
            + " SELECT ?, 'k-' || g, '1', 1, now() - interval '1 hour'"
            + " FROM generate_series(1, 5000) g",
        queue);
    execute(
        "INSERT INTO item (queue, dedupe_key, payload, max_attempts) VALUES (?, 'last', '1', 1)",
        queue);
    execute("UPDATE item SET state = 'cancelled' WHERE queue = ? AND dedupe_key <> 'last'", queue);
    // Statistics that know pending items are rare, as on a drained queue: with the ones earlier
    // tests left, the planner may read two other indexes instead, and this measures nothing.
    execute("ANALYZE item");
    long pagesBefore = claimIndexPagesRead(queue);
    long vacuumsBefore = manualVacuums();

    boolean vacuumed;
    // Autovacuum, should it pick the table now, would make this VACUUM skip it (SKIP_LOCKED).
    execute("ALTER TABLE item SET (autovacuum_enabled = false)");
    try {
      vacuumed = vacuum.vacuumIfNeeded() > 0;
    } finally {
      execute("ALTER TABLE item RESET (autovacuum_enabled)");
    }

    assertThat(vacuumed).isTrue();
    assertThat(manualVacuums()).isEqualTo(vacuumsBefore + 1);
    // Before: the scan steps over 5,000 dead entries; after: straight to the pending item.
    assertThat(pagesBefore).isGreaterThan(20);
    assertThat(claimIndexPagesRead(queue)).isLessThan(8);
    // Right after a VACUUM the count is back near zero, so the next look does nothing.
    assertThat(vacuum.vacuumIfNeeded()).isZero();
  }

  @Test
  void a_vacuum_that_an_old_snapshot_keeps_from_removing_anything_says_whose_once()
      throws Exception {
    String queue = uniqueQueue("held-vacuum");
    execute("ALTER TABLE item SET (autovacuum_enabled = false)");
    try {
      // Whatever earlier tests left dead goes first: the held rows are then all there is.
      execute("VACUUM item");
      try (Connection holder = dataSource.getConnection()) {
        // A transaction left open, with a snapshot taken: rows that die after it cannot go.
        holder.setAutoCommit(false);
        holder.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
        int pid;
        try (PreparedStatement begin = holder.prepareStatement("SELECT pg_backend_pid()");
            ResultSet row = begin.executeQuery()) {
          row.next();
          pid = row.getInt(1);
        }
        execute(
            "INSERT INTO item (queue, dedupe_key, payload, max_attempts)"
                + " SELECT ?, 'k-' || g, '1', 1 FROM generate_series(1, 3000) g",
            queue);
        execute("DELETE FROM item WHERE queue = ?", queue);
        try (LogCapture log = LogCapture.start(Level.WARNING)) {
          assertThat(vacuum.vacuumIfNeeded()).isGreaterThanOrEqualTo(3000);
          assertThat(vacuum.vacuumIfNeeded()).isGreaterThanOrEqualTo(3000);
          // Said once, not at every VACUUM while it lasts.
          assertThat(log.records().stream().map(LogCapture::format))
              .filteredOn(line -> line.contains("a snapshot older than they are holds them"))
              .singleElement()
              .satisfies(line -> assertThat(line).contains("pid " + pid + " "));
        }
        holder.rollback();
      }
      // Released: the next VACUUM removes them.
      assertThat(vacuum.vacuumIfNeeded()).isGreaterThanOrEqualTo(3000);
      assertThat(vacuum.vacuumIfNeeded()).isZero();
    } finally {
      execute("ALTER TABLE item RESET (autovacuum_enabled)");
    }
  }

  /** Runs a statement, then flushes this session's statistics so the dead rows show at once. */
  private void execute(String sql, String... parameters) throws SQLException {
    try (Connection connection = dataSource.getConnection();
        PreparedStatement statement = connection.prepareStatement(sql)) {
      for (int i = 0; i < parameters.length; i++) {
        statement.setString(i + 1, parameters[i]);
      }
      statement.execute();
      try (PreparedStatement flush =
          connection.prepareStatement("SELECT pg_stat_force_next_flush()")) {
        flush.execute();
      }
    }
  }

  /** Buffers the claim-next scan touches to find the queue's first pending item. */
  private long claimIndexPagesRead(String queue) throws SQLException {
    try (Connection connection = dataSource.getConnection();
        PreparedStatement explain =
            connection.prepareStatement(
                "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT id FROM item"
                    + " WHERE queue = ? AND state = 'pending' AND run_at <= now()"
                    + " ORDER BY priority DESC, run_at, id LIMIT 1")) {
      explain.setString(1, queue);
      try (ResultSet plan = explain.executeQuery()) {
        plan.next();
        String json = plan.getString(1);
        var matcher =
            java.util.regex.Pattern.compile("\"Shared Hit Blocks\": (\\d+)").matcher(json);
        long hits = 0;
        if (matcher.find()) {
          hits = Long.parseLong(matcher.group(1)); // the top node's count includes its children
        }
        var reads = java.util.regex.Pattern.compile("\"Shared Read Blocks\": (\\d+)").matcher(json);
        return reads.find() ? hits + Long.parseLong(reads.group(1)) : hits;
      }
    }
  }

  private long manualVacuums() throws SQLException {
    try (Connection connection = dataSource.getConnection();
        PreparedStatement count =
            connection.prepareStatement(
                "SELECT vacuum_count FROM pg_stat_user_tables"
                    + " WHERE relid = CAST('item' AS regclass)");
        ResultSet row = count.executeQuery()) {
      row.next();
      return row.getLong(1);
    }
  }
}
