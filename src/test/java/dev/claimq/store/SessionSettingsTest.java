package dev.claimq.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * The settings every pooled connection starts with (application.properties, the driver's options):
 * the server's statement bound, and no JIT, whose compile of the batch claim on an aged table took
 * 100 times the statement's own run.
 */
@QuarkusTest
class SessionSettingsTest {
  @Inject DataSource dataSource;

  @Test
  void every_pooled_connection_runs_without_jit_and_with_the_request_bound() throws Exception {
    try (Connection connection = dataSource.getConnection();
        Statement statement = connection.createStatement()) {
      assertThat(show(statement, "jit")).isEqualTo("off");
      assertThat(show(statement, "statement_timeout")).isEqualTo("4s");
    }
  }

  private static String show(Statement statement, String setting) throws Exception {
    try (ResultSet row = statement.executeQuery("SHOW " + setting)) {
      row.next();
      return row.getString(1);
    }
  }
}
