package dev.claimq.store;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The statements whose cost must follow the live work, on a table that holds what a year of keys
 * leaves behind: 200,000 tombstones, a backlog of 30,000 pending items and 500 failed ones. The
 * rows are committed and vacuumed, as a real table's are (an index-only scan needs the visibility
 * map), in a schema of this test's own, migrated as the service migrates its own, and dropped
 * after.
 */
@QuarkusTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LargeTableTest {
  private static final Duration SETUP = Duration.ofMinutes(5);

  @Inject DataSource dataSource;
  @Inject ItemRepository items;

  private final String schema = "claimq_large_" + UUID.randomUUID().toString().substring(0, 8);

  @BeforeAll
  void fill() throws Exception {
    Flyway.configure()
        .dataSource(dataSource)
        .schemas(schema)
        .defaultSchema(schema)
        .createSchemas(true)
        .load()
        .migrate();
    inSchema(
        statement -> {
          statement.execute(
              "INSERT INTO item (queue, dedupe_key, state, payload, max_attempts, external_ref,"
                  + " payload_sha256, created_at, updated_at, pruned_at) SELECT 'old', 't' || n,"
                  + " 'done', '{}', 5, 'ref', 'sha', now() - interval '60 days',"
                  + " now() - interval '60 days', now() - interval '50 days'"
                  + " FROM generate_series(1, 200000) n");
          statement.execute(
              "INSERT INTO item (queue, dedupe_key, state, payload, max_attempts, external_ref,"
                  + " created_at, updated_at) SELECT 'old', 'p' || n, 'done', '{}', 5, 'ref',"
                  + " now() - interval '30 days', now() - interval '30 days'"
                  + " FROM generate_series(1, 100) n");
          statement.execute(
              "INSERT INTO item (queue, dedupe_key, payload, max_attempts) SELECT 'backlog',"
                  + " 'b' || n, '{}', 5 FROM generate_series(1, 30000) n");
          statement.execute(
              "INSERT INTO item (queue, dedupe_key, state, payload, max_attempts, last_error)"
                  + " SELECT 'mail', 'f' || n, 'failed', '{}', 5, 'smtp 550 mailbox unavailable'"
                  + " FROM generate_series(1, 500) n");
          return null;
        });
    inSchema(
        statement -> {
          statement.execute("VACUUM ANALYZE item");
          return null;
        });
  }

  @AfterAll
  void drop() throws Exception {
    try (Connection connection = dataSource.getConnection();
        Statement statement = connection.createStatement()) {
      statement.execute("DROP SCHEMA " + schema + " CASCADE");
    }
  }

  @Test
  void a_retention_batch_reads_no_tombstone() throws Exception {
    String prune =
        SqlFile.load("db/item.sql")
            .blocks()
            .get("prune-finished")
            .sql()
            .replace(":keepSeconds", "604800")
            .replace(":batchSize", "1000");
    JsonNode plan =
        inSchema(
            statement -> {
              // Run, to count the rows each scan passed over, then undone.
              statement.getConnection().setAutoCommit(false);
              try (ResultSet rows =
                  statement.executeQuery("EXPLAIN (ANALYZE, FORMAT JSON) " + prune)) {
                rows.next();
                return new ObjectMapper().readTree(rows.getString(1));
              } finally {
                statement.getConnection().rollback();
                statement.getConnection().setAutoCommit(true);
              }
            });
    List<JsonNode> scans = PlanScans.of(plan, "item");
    assertThat(scans)
        .as("the scan that picks the batch")
        .anySatisfy(scan -> assertThat(scan.path("Index Name").asText()).isEqualTo("item_prunable"))
        .allSatisfy(
            scan ->
                assertThat(scan.path("Rows Removed by Filter").asLong())
                    .as("rows passed over by %s", scan.path("Node Type").asText())
                    .isLessThan(1_000));
  }

  @Test
  void the_queue_stats_read_a_pending_backlog_from_the_claim_index_alone() throws Exception {
    String stats = SqlFile.load("db/item.sql").blocks().get("queue-stats").sql();
    JsonNode plan =
        inSchema(
            statement -> {
              try (ResultSet rows = statement.executeQuery("EXPLAIN (FORMAT JSON) " + stats)) {
                rows.next();
                return new ObjectMapper().readTree(rows.getString(1));
              }
            });
    List<JsonNode> scans = PlanScans.of(plan, "item");
    assertThat(scans)
        .extracting(scan -> scan.path("Node Type").asText())
        .doesNotContain("Seq Scan");
    assertThat(scans)
        .filteredOn(scan -> scan.path("Index Name").asText().equals("item_claimable"))
        .as("the pending items' scans")
        .isNotEmpty()
        .allSatisfy(
            scan -> assertThat(scan.path("Node Type").asText()).isEqualTo("Index Only Scan"));
  }

  @Test
  void a_listing_by_reason_reads_only_the_items_that_have_one() {
    // The listing as the API makes it, in this test's schema: Hibernate names no schema.
    long read =
        QuarkusTransaction.requiringNew()
            .call(
                () -> {
                  var session = items.getEntityManager();
                  session
                      .createNativeQuery("SELECT set_config('search_path', :schema, true)")
                      .setParameter("schema", schema)
                      .getSingleResult();
                  assertThat(
                          items.newestFirst(
                              new ItemFilter(null, null, "no such reason", null, null), null, 51))
                      .isEmpty();
                  assertThat(
                          items.newestFirst(
                              new ItemFilter(null, null, "MAILBOX", null, null), null, 51))
                      .hasSize(51);
                  // This transaction's own reads of the table, as PostgreSQL counts them.
                  return ((Number)
                          session
                              .createNativeQuery(
                                  "SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)"
                                      + " FROM pg_stat_xact_user_tables"
                                      + " WHERE relid = CAST('item' AS regclass)")
                              .getSingleResult())
                      .longValue();
                });
    assertThat(read).as("rows of item read").isLessThan(1_000);
  }

  /** Work on a statement. */
  @FunctionalInterface
  private interface OnStatement<T> {
    T run(Statement statement) throws Exception;
  }

  /** Runs the work on a statement in the test's schema, with the setup's time bound. */
  private <T> T inSchema(OnStatement<T> work) throws Exception {
    try (Connection connection = dataSource.getConnection()) {
      String before = connection.getSchema();
      connection.setSchema(schema);
      try (Statement statement = connection.createStatement()) {
        return Sql.Bounds.run(
            connection,
            SETUP,
            () -> {
              try {
                return work.run(statement);
              } catch (java.sql.SQLException e) {
                throw e;
              } catch (Exception e) {
                throw new java.sql.SQLException(e);
              }
            });
      } finally {
        connection.setSchema(before);
      }
    }
  }
}
