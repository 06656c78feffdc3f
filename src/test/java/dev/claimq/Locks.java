package dev.claimq;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import javax.sql.DataSource;

/**
 * For races made certain: a test's own transaction holds a row lock, a request is sent, and the
 * test waits until that request's statement waits for the lock before it lets go.
 */
public final class Locks {
  private Locks() {}

  /** The backend process of this connection, as pg_stat_activity names it. */
  public static long pidOf(Connection connection) throws SQLException {
    try (PreparedStatement statement = connection.prepareStatement("SELECT pg_backend_pid()");
        ResultSet row = statement.executeQuery()) {
      assertThat(row.next()).isTrue();
      return row.getLong(1);
    }
  }

  /** Waits up to 10 s until a statement of another session waits for that backend's locks. */
  public static void awaitBlockedBy(DataSource dataSource, long pid) throws Exception {
    awaitBlockedBy(dataSource, pid, 1);
  }

  /** Waits up to 10 s until statements of {@code sessions} others wait for that backend's locks. */
  public static void awaitBlockedBy(DataSource dataSource, long pid, int sessions)
      throws Exception {
    Instant deadline = Instant.now().plusSeconds(10);
    try (Connection connection = dataSource.getConnection();
        PreparedStatement blocked =
            connection.prepareStatement(
                "SELECT count(*) FROM pg_stat_activity WHERE ? = ANY (pg_blocking_pids(pid))")) {
      blocked.setLong(1, pid);
      while (Instant.now().isBefore(deadline)) {
        try (ResultSet row = blocked.executeQuery()) {
          row.next();
          if (row.getLong(1) >= sessions) {
            return;
          }
        }
        Thread.sleep(10);
      }
    }
    throw new AssertionError(
        "fewer than " + sessions + " statements waited for the locks of backend " + pid);
  }

  /**
   * Sends the request while the holder's open transaction holds its locks, waits until the
   * request's statement waits for them, commits the holder, and answers the request's answer.
   */
  public static <T> T sentWhileHeld(DataSource dataSource, Connection holder, Supplier<T> request)
      throws Exception {
    CompletableFuture<T> answer = CompletableFuture.supplyAsync(request);
    awaitBlockedBy(dataSource, pidOf(holder));
    holder.commit();
    return answer.get(30, TimeUnit.SECONDS);
  }
}
