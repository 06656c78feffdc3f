package dev.claimq.store;

import io.quarkus.flyway.FlywayConfigurationCustomizer;
import jakarta.inject.Singleton;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.flywaydb.core.api.configuration.FluentConfiguration;

/**
 * Lifts the pool's request bounds (statement_timeout, the driver's network timeout) from the
 * connections Flyway borrows, and puts them back when it returns them: a migration over a large
 * table may rightly run for minutes, where a request's statement may not.
 */
@Singleton
public class UnboundedMigrations implements FlywayConfigurationCustomizer {

  @Override
  public void customize(FluentConfiguration configuration) {
    DataSource pool = configuration.getDataSource();
    configuration.dataSource(
        (DataSource)
            Proxy.newProxyInstance(
                DataSource.class.getClassLoader(),
                new Class<?>[] {DataSource.class},
                (proxy, method, args) -> {
                  Object answer = invoke(pool, method, args);
                  return answer instanceof Connection connection ? unbounded(connection) : answer;
                }));
  }

  private static Connection unbounded(Connection connection) throws SQLException {
    int networkMillis = connection.getNetworkTimeout();
    connection.setNetworkTimeout(Runnable::run, 0);
    try (Statement statement = connection.createStatement()) {
      statement.execute("SET statement_timeout = 0");
    }
    return (Connection)
        Proxy.newProxyInstance(
            Connection.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            (proxy, method, args) -> {
              if (method.getName().equals("close") && !connection.isClosed()) {
                // Back to the session's own bound (the pool's startup option) before the pool
                // hands the connection to a request.
                if (!connection.getAutoCommit()) {
                  connection.rollback(); // Flyway commits what it means to keep
                }
                try (Statement statement = connection.createStatement()) {
                  statement.execute("RESET statement_timeout");
                }
                connection.setNetworkTimeout(Runnable::run, networkMillis);
              }
              return invoke(connection, method, args);
            });
  }

  private static Object invoke(Object target, java.lang.reflect.Method method, Object[] args)
      throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
