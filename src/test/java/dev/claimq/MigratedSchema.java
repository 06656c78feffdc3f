package dev.claimq;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import org.flywaydb.core.Flyway;

/**
 * A schema of a test's own on the local PostgreSQL, made by the service's migrations, for tests
 * that run statements without Quarkus.
 */
public final class MigratedSchema {
  public static final String URL = "jdbc:postgresql://127.0.0.1:5432/postgres";
  public static final String USER = "postgres";

  private final String name;

  public MigratedSchema(String name) {
    this.name = name;
  }

  public String name() {
    return name;
  }

  /** Empties the schema, or makes it, and migrates it to the service's latest version. */
  public void migrate() {
    flyway().clean();
    flyway().migrate();
  }

  public void drop() throws SQLException {
    execute("DROP SCHEMA IF EXISTS " + name + " CASCADE");
  }

  /** Runs one statement on a connection of its own. */
  public static void execute(String statement) throws SQLException {
    try (Connection connection = DriverManager.getConnection(URL, USER, "");
        Statement st = connection.createStatement()) {
      st.execute(statement);
    }
  }

  private Flyway flyway() {
    return Flyway.configure()
        .dataSource(URL, USER, "")
        .schemas(name)
        .defaultSchema(name)
        .createSchemas(true)
        .cleanDisabled(false)
        .locations("classpath:db/migration")
        .load();
  }
}
