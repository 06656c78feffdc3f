package dev.claimq.telemetry;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.claimq.Api;
import dev.claimq.store.PlanScans;
import dev.claimq.store.Sql;
import dev.claimq.store.SqlFile;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * The queue stats behind the gauges and GET /v1/queues read the live items only: with a quarter of
 * a million finished rows in the table the plan touches none of them (no sequential scan of item;
 * each live state through its own index). The rows are added in a transaction that is rolled back,
 * and the table vacuumed after, so no other test sees them.
 */
@QuarkusTest
class QueueStatsCostTest {
  private static final Duration SETUP = Duration.ofMinutes(5);

  @Inject DataSource dataSource;

  @Test
  void the_queue_stats_read_no_finished_row_however_many_there_are() throws Exception {
    String sql = SqlFile.load("db/item.sql").blocks().get("queue-stats").sql();
    String queue = Api.uniqueQueue("cost");
    List<String> scans = new ArrayList<>();
    try (Connection connection = dataSource.getConnection()) {
      // A quarter of a million rows take longer to make than a request's statement may run.
      Sql.Bounds.run(
          connection,
          SETUP,
          () -> {
            connection.setAutoCommit(false);
            try (Statement statement = connection.createStatement()) {
              statement.execute(
                  "INSERT INTO item (queue, dedupe_key, state, payload, max_attempts,"
                      + " external_ref) SELECT '"
                      + queue
                      + "', 'k' || n, CASE WHEN n % 5 = 0 THEN 'cancelled' ELSE 'done' END,"
                      + " '{}', 5, 'ref' FROM generate_series(1, 250000) n");
              statement.execute(
                  "INSERT INTO item (queue, dedupe_key, payload, max_attempts) SELECT '"
                      + queue
                      + "', 'live' || n, '{}', 5 FROM generate_series(1, 20) n");
              statement.execute("ANALYZE item");
              try (ResultSet plan = statement.executeQuery("EXPLAIN (FORMAT JSON) " + sql)) {
                plan.next();
                PlanScans.of(readTree(plan.getString(1)), "item")
                    .forEach(scan -> scans.add(scan.path("Node Type").asText()));
              }
            } finally {
              connection.rollback();
              connection.setAutoCommit(true);
            }
            return null;
          });
      Sql.Bounds.run(
          connection,
          SETUP,
          () -> {
            try (Statement statement = connection.createStatement()) {
              statement.execute("VACUUM ANALYZE item");
            }
            return null;
          });
    }
    assertThat(scans).as("how the plan reads item").isNotEmpty().doesNotContain("Seq Scan");
  }

  private static JsonNode readTree(String json) throws SQLException {
    try {
      return new ObjectMapper().readTree(json);
    } catch (java.io.IOException e) {
      throw new SQLException("EXPLAIN gave no JSON: " + json, e);
    }
  }
}
