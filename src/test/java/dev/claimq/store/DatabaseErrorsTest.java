package dev.claimq.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

class DatabaseErrorsTest {

  @Test
  void a_pool_with_no_connection_to_give_is_described_by_the_pool_not_by_its_bare_timeout() {
    // Agroal's shape when the pool was growing: its message, caused by a TimeoutException that
    // has none. The log line used to read "TimeoutException: null".
    Throwable e =
        new IllegalStateException(
            "wrapped",
            new SQLException(
                "Acquisition timeout while waiting for new connection", new TimeoutException()));

    assertThat(DatabaseErrors.unavailable(e)).isTrue();
    assertThat(DatabaseErrors.describe(e))
        .isEqualTo(
            "SQLException: Acquisition timeout while waiting for new connection"
                + " (caused by TimeoutException)");
  }

  @Test
  void the_innermost_cause_that_says_something_is_told_with_its_sql_state() {
    Throwable e =
        new RuntimeException(
            "could not execute statement",
            new SQLException("canceling statement due to statement timeout", "57014"));

    assertThat(DatabaseErrors.describe(e))
        .isEqualTo("SQLException [57014]: canceling statement due to statement timeout");
  }

  @Test
  void a_failure_that_says_nothing_is_told_by_its_root_class() {
    assertThat(DatabaseErrors.describe(new TimeoutException())).isEqualTo("TimeoutException");
    assertThat(DatabaseErrors.describe(new SQLException((String) null, new TimeoutException())))
        .isEqualTo("TimeoutException");
  }
}
