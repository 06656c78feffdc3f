package dev.claimq.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * The item table refuses what breaks an invariant, whoever writes it: the single-column ones live
 * in domains (V15), checked on every insert and on every update that sets their column.
 */
@QuarkusTest
class SchemaInvariantsTest {
  @Inject DataSource pool;

  @Test
  void an_insert_that_breaks_a_single_column_invariant_is_refused_by_its_name() throws Exception {
    Map<String, String> refusals =
        Map.of(
            "INSERT INTO item (queue, dedupe_key, payload, max_attempts)"
                + " VALUES ('Not-A-Queue', 'k', '{}', 1)",
            "item_queue_name_valid",
            "INSERT INTO item (queue, dedupe_key, payload, max_attempts)"
                + " VALUES ('invariants', '', '{}', 1)",
            "item_dedupe_key_length",
            "INSERT INTO item (queue, dedupe_key, payload, max_attempts)"
                + " VALUES ('invariants', 'k', 'null', 1)",
            "item_payload_not_null",
            "INSERT INTO item (queue, dedupe_key, payload, max_attempts)"
                + " VALUES ('invariants', 'k', '{}', 101)",
            "item_max_attempts_range",
            "INSERT INTO item (queue, dedupe_key, payload, max_attempts, releases)"
                + " VALUES ('invariants', 'k', '{}', 1, -1)",
            "item_releases_not_negative",
            "INSERT INTO item (queue, dedupe_key, payload, max_attempts, traceparent)"
                + " VALUES ('invariants', 'k', '{}', 1, 'not-a-traceparent')",
            "item_traceparent_w3c");
    try (Connection connection = pool.getConnection();
        Statement statement = connection.createStatement()) {
      for (var refusal : refusals.entrySet()) {
        assertThatThrownBy(() -> statement.execute(refusal.getKey()))
            .as(refusal.getValue())
            .isInstanceOf(SQLException.class)
            .hasMessageContaining(refusal.getValue())
            .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("23514"));
      }
    }
  }

  @Test
  void an_update_that_sets_such_a_column_is_refused_and_one_that_does_not_is_not()
      throws Exception {
    try (Connection connection = pool.getConnection();
        Statement statement = connection.createStatement()) {
      long id = inserted(statement, "update-" + System.nanoTime());
      assertThatThrownBy(() -> statement.execute("UPDATE item SET releases = -1 WHERE id = " + id))
          .hasMessageContaining("item_releases_not_negative");
      assertThatThrownBy(
              () -> statement.execute("UPDATE item SET queue = 'Not-A-Queue' WHERE id = " + id))
          .hasMessageContaining("item_queue_name_valid");
      // The claim's kind of write: other columns change, these are left as they are.
      assertThat(statement.executeUpdate("UPDATE item SET priority = 5 WHERE id = " + id))
          .isEqualTo(1);
    }
  }

  private static long inserted(Statement statement, String dedupeKey) throws SQLException {
    try (ResultSet rows =
        statement.executeQuery(
            "INSERT INTO item (queue, dedupe_key, payload, max_attempts)"
                + " VALUES ('invariants', '"
                + dedupeKey
                + "', '{}', 1) RETURNING id")) {
      rows.next();
      return rows.getLong(1);
    }
  }
}
