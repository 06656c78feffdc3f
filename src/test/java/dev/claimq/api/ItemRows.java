package dev.claimq.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.sql.DataSource;

/** A queue's items as the database holds them, for the checks after a race. */
final class ItemRows {
  private ItemRows() {}

  interface RowReader<T> {
    T read(ResultSet row) throws SQLException;
  }

  /** The rows of a statement whose one parameter is the queue, each read as a key and value. */
  static <K, V> Map<K, V> rows(
      DataSource dataSource, String sql, String queue, RowReader<Map.Entry<K, V>> reader)
      throws SQLException {
    Map<K, V> found = new LinkedHashMap<>();
    try (Connection connection = dataSource.getConnection();
        PreparedStatement statement = connection.prepareStatement(sql)) {
      statement.setString(1, queue);
      try (ResultSet row = statement.executeQuery()) {
        while (row.next()) {
          Map.Entry<K, V> entry = reader.read(row);
          found.put(entry.getKey(), entry.getValue());
        }
      }
    }
    return found;
  }

  /**
   * The queue holds one item per key, {@code keys} of them, and each is consistent: an open attempt
   * exactly when sending, and that attempt the item's current claim; a lease exactly when sending.
   */
  static void consistent(DataSource dataSource, String queue, int keys) throws SQLException {
    Map<String, Integer> perKey =
        rows(
            dataSource,
            "SELECT dedupe_key, count(*) FROM item WHERE queue = ? GROUP BY dedupe_key",
            queue,
            row -> Map.entry(row.getString(1), row.getInt(2)));
    assertThat(perKey).as("items per dedupe key").hasSize(keys).allSatisfy((k, n) -> n.equals(1));
    assertThat(
            rows(
                dataSource,
                "SELECT i.id, i.state, count(a.id) FILTER (WHERE a.finished_at IS NULL)"
                    + " FROM item i LEFT JOIN attempt a ON a.item_id = i.id WHERE i.queue = ?"
                    + " GROUP BY i.id, i.state"
                    + " HAVING count(a.id) FILTER (WHERE a.finished_at IS NULL)"
                    + "   <> CASE WHEN i.state = 'sending' THEN 1 ELSE 0 END",
                queue,
                row -> Map.entry(row.getString(1), row.getString(2) + "/" + row.getInt(3))))
        .as("items whose open attempts (state/open) are not one exactly when sending")
        .isEmpty();
    assertThat(
            rows(
                dataSource,
                "SELECT i.id, i.attempts || '/' || a.attempt FROM item i"
                    + " JOIN attempt a ON a.item_id = i.id AND a.finished_at IS NULL"
                    + " WHERE i.queue = ? AND (a.attempt <> i.attempts OR i.claim_token IS NULL"
                    + "   OR a.token_hash <> encode(sha256(convert_to(i.claim_token, 'UTF8')),"
                    + "                             'hex'))",
                queue,
                row -> Map.entry(row.getString(1), row.getString(2))))
        .as("open attempts that are not the item's current claim")
        .isEmpty();
    assertThat(
            rows(
                dataSource,
                "SELECT id, state FROM item WHERE queue = ?"
                    + " AND (state = 'sending') <> (lease_expires_at IS NOT NULL)",
                queue,
                row -> Map.entry(row.getString(1), row.getString(2))))
        .as("items with a lease exactly when sending")
        .isEmpty();
  }
}
