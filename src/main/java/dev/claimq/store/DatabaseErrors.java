package dev.claimq.store;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import org.hibernate.exception.JDBCConnectionException;

/** Telling "the database is away" apart from real failures. */
public final class DatabaseErrors {
  private DatabaseErrors() {}

  /**
   * A lost or refused connection, a pool with none to give, a server shutting down, or one that
   * refuses writes (a read-only replica, a failover not finished): the database is away, which is
   * the client's cue to retry, not a bug. (Any statement that did run ran in a transaction that did
   * not commit.)
   */
  public static boolean unavailable(Throwable e) {
    for (Throwable cause : causesOf(e)) {
      if (cause instanceof JDBCConnectionException) {
        return true;
      }
      if (cause instanceof java.sql.SQLException sql) {
        String state = sql.getSQLState() == null ? "" : sql.getSQLState();
        String message = sql.getMessage() == null ? "" : sql.getMessage();
        if (state.startsWith("08") // connection exception
            || state.startsWith("57P") // admin shutdown, crash shutdown, cannot connect now
            || state.startsWith("53") // out of disk, memory, connections or a set limit
            || state.equals(READ_ONLY)
            || message.toLowerCase(java.util.Locale.ROOT).contains("acquisition timeout")) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * What the database ran out of (PostgreSQL's class 53, insufficient resources), or null: "disk
   * space" (nothing can be written until an operator frees some), "memory", "connections" or "a
   * configured limit". The moment of a full disk is kept for the health check (lastDiskFull).
   */
  public static String exhausted(Throwable e) {
    for (Throwable cause : causesOf(e)) {
      if (cause instanceof java.sql.SQLException sql
          && sql.getSQLState() != null
          && sql.getSQLState().startsWith("53")) {
        String what =
            switch (sql.getSQLState()) {
              case "53100" -> "disk space";
              case "53200" -> "memory";
              case "53300" -> "connections";
              case "53400" -> "a configured limit";
              default -> "a resource";
            };
        if (what.equals("disk space")) {
          lastDiskFull = System.nanoTime();
        }
        return what;
      }
    }
    return null;
  }

  private static volatile Long lastDiskFull;

  /** When (System.nanoTime) a statement last failed for want of disk space, if one ever did. */
  public static java.util.Optional<Long> lastDiskFull() {
    return java.util.Optional.ofNullable(lastDiskFull);
  }

  /**
   * Every connection of the pool is taken, and none came free within its wait: the statements
   * holding them are slow or wait on a lock. The database itself may answer.
   */
  public static boolean poolBusy(Throwable e) {
    return causesOf(e).stream()
        .anyMatch(
            cause ->
                cause.getMessage() != null
                    && cause
                        .getMessage()
                        .toLowerCase(java.util.Locale.ROOT)
                        .contains("acquisition timeout"));
  }

  /**
   * The database cancelled a statement that ran past its bound (statement_timeout): it is too slow
   * or too busy to answer now, and the statement's transaction was rolled back.
   */
  public static boolean timedOut(Throwable e) {
    return causesOf(e).stream()
        .anyMatch(
            cause ->
                cause instanceof java.sql.SQLException sql
                    && QUERY_CANCELED.equals(sql.getSQLState()));
  }

  /**
   * The database rolled the transaction back to break a deadlock with another, or because it could
   * not serialize it: nothing it did stands, and the same request again may well pass.
   */
  public static boolean rolledBack(Throwable e) {
    return causesOf(e).stream()
        .anyMatch(
            cause ->
                cause instanceof java.sql.SQLException sql
                    && (DEADLOCK.equals(sql.getSQLState())
                        || SERIALIZATION_FAILURE.equals(sql.getSQLState())));
  }

  private static final String DEADLOCK = "40P01";
  private static final String SERIALIZATION_FAILURE = "40001";

  /** query_canceled: here, statement_timeout (claimq cancels nothing itself). */
  private static final String QUERY_CANCELED = "57014";

  /**
   * The database refused a write: it is read-only now (default_transaction_read_only, a replica).
   */
  public static boolean readOnly(Throwable e) {
    return causesOf(e).stream()
        .anyMatch(
            cause ->
                cause instanceof java.sql.SQLException sql && READ_ONLY.equals(sql.getSQLState()));
  }

  /** read_only_sql_transaction: a write in a read-only transaction. */
  private static final String READ_ONLY = "25006";

  /**
   * A log line's account of a failure: the innermost cause that says something, with its SQLState
   * if it has one, and the root's class when the root itself says nothing (a pool with no
   * connection to give ends in a TimeoutException without a message).
   */
  public static String describe(Throwable e) {
    List<Throwable> chain = new ArrayList<>();
    for (Throwable t = e; t != null && chain.size() < 50 && !chain.contains(t); t = t.getCause()) {
      chain.add(t);
    }
    Throwable root = chain.get(chain.size() - 1);
    Throwable told = root;
    for (int i = chain.size() - 1; i >= 0; i--) {
      if (chain.get(i).getMessage() != null) {
        told = chain.get(i);
        break;
      }
    }
    StringBuilder text = new StringBuilder(told.getClass().getSimpleName());
    if (told instanceof java.sql.SQLException sql && sql.getSQLState() != null) {
      text.append(" [").append(sql.getSQLState()).append(']');
    }
    if (told.getMessage() != null) {
      text.append(": ").append(told.getMessage());
    }
    if (told != root) {
      text.append(" (caused by ").append(root.getClass().getSimpleName()).append(')');
    }
    return text.toString();
  }

  /**
   * The exception, its causes and their suppressed exceptions: a failed commit carries the
   * database's error as a suppressed exception of the transaction manager's, not as its cause.
   */
  public static List<Throwable> causesOf(Throwable e) {
    List<Throwable> found = new ArrayList<>();
    Deque<Throwable> pending = new ArrayDeque<>(List.of(e));
    while (!pending.isEmpty() && found.size() < 50) {
      Throwable next = pending.pop();
      if (found.stream().anyMatch(seen -> seen == next)) {
        continue;
      }
      found.add(next);
      if (next.getCause() != null) {
        pending.add(next.getCause());
      }
      pending.addAll(List.of(next.getSuppressed()));
    }
    return found;
  }
}
