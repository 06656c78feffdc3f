package dev.claimq.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;

/** Migrations run without the request bounds; requests keep them. */
@QuarkusTest
class MigrationBoundsTest {
  @Inject Flyway flyway;
  @Inject DataSource pool;

  @Test
  void a_migration_statement_may_outlast_the_request_bounds() throws SQLException {
    try (Connection connection = flyway.getConfiguration().getDataSource().getConnection();
        Statement statement = connection.createStatement()) {
      assertThat(show(statement)).isEqualTo("0");
      assertThat(connection.getNetworkTimeout()).isZero();
      // Past both the 4 s statement bound and the 6 s network bound of the pool.
      statement.execute("SELECT pg_sleep(7)");
    }
  }

  @Test
  void a_connection_flyway_gave_back_is_bounded_again() throws SQLException {
    for (int n = 0; n < 25; n++) { // more than the pool holds, so each of its connections is seen
      try (Connection connection = flyway.getConfiguration().getDataSource().getConnection()) {
        assertThat(connection.isClosed()).isFalse();
      }
    }
    try (Connection connection = pool.getConnection();
        Statement statement = connection.createStatement()) {
      assertThat(show(statement)).isEqualTo("4s");
      assertThat(connection.getNetworkTimeout()).isEqualTo(6_000);
      assertThatThrownBy(() -> statement.execute("SELECT pg_sleep(5)"))
          .hasMessageContaining("statement timeout");
    }
  }

  private static String show(Statement statement) throws SQLException {
    try (ResultSet rows = statement.executeQuery("SHOW statement_timeout")) {
      rows.next();
      return rows.getString(1);
    }
  }
}
