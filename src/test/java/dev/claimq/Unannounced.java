package dev.claimq;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;

/** Items put in the table behind the service's back, for tests of what no signal announces. */
public final class Unannounced {
  private Unannounced() {}

  /**
   * An item inserted as by hand: committed, pending and due, with no signal of any kind. Returns
   * its id.
   */
  public static String item(DataSource dataSource, String queue, String dedupeKey)
      throws SQLException {
    try (Connection connection = dataSource.getConnection();
        PreparedStatement insert =
            connection.prepareStatement(
                "INSERT INTO item (queue, dedupe_key, payload, max_attempts)"
                    + " VALUES (?, ?, '1', 5) RETURNING id")) {
      insert.setString(1, queue);
      insert.setString(2, dedupeKey);
      try (ResultSet row = insert.executeQuery()) {
        row.next();
        return row.getString(1);
      }
    }
  }
}
