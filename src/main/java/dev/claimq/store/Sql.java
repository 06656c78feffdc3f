package dev.claimq.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.sql.DataSource;

/**
 * A statement with named parameters ({@code :name}), run through plain JDBC. The statements are
 * each complete on their own, so one runs in autocommit: one statement, one transaction, without
 * the ORM session and the JTA transaction manager, which cost the service more CPU per call than
 * PostgreSQL spends on the statement. Where two must commit together, they run on a connection that
 * one plain JDBC transaction holds.
 *
 * <p>Parameters are found by {@link Lexer}, which knows PostgreSQL's quotes, comments and {@code
 * ::} casts, so a colon inside a string or a comment is never taken for one. A value for a name the
 * statement does not have, or no value for one it does, is a bug and throws.
 */
public final class Sql {

  /** Turns one row of a result into a value. */
  @FunctionalInterface
  public interface RowMapper<T> {
    T map(ResultSet row) throws SQLException;
  }

  private final String named;
  private final String positional;
  private final List<String> names;

  private Sql(String named, String positional, List<String> names) {
    this.named = named;
    this.positional = positional;
    this.names = names;
  }

  public static Sql of(String named) {
    List<String> names = new ArrayList<>();
    StringBuilder positional = new StringBuilder();
    for (Lexer.Token token : Lexer.tokens(named)) {
      if (token.parameter()) {
        names.add(token.text());
        positional.append('?');
      } else {
        positional.append(token.text());
      }
    }
    return new Sql(named, positional.toString(), List.copyOf(names));
  }

  /** The statement as JDBC gets it, with a ? per parameter. */
  public String positional() {
    return positional;
  }

  /** The statement's parameter names, in order (a name used twice appears twice). */
  public List<String> parameters() {
    return names;
  }

  /** The statement's parameter names, once each, in order of first appearance. */
  public Set<String> parameterNames() {
    return new LinkedHashSet<>(names);
  }

  /** The statement as written, with its named parameters. */
  @Override
  public String toString() {
    return named;
  }

  /** A run on a pooled connection of its own, in autocommit: the statement is its transaction. */
  public Call on(DataSource dataSource) {
    return new Call(dataSource, null);
  }

  /**
   * A run on a connection the caller holds, as one statement of the caller's transaction (see
   * {@link ItemRepository#inOneTransaction}); the caller commits and closes it.
   */
  public Call on(Connection held) {
    return new Call(null, held);
  }

  /** One execution: the values, then {@link #list} or {@link #update}. */
  public final class Call {
    private final DataSource dataSource;
    private final Connection held;
    private final Map<String, Object> values = new HashMap<>();
    private java.time.Duration bound;

    private Call(DataSource dataSource, Connection held) {
      this.dataSource = dataSource;
      this.held = held;
    }

    /** Binds a value; null is sent untyped, so PostgreSQL infers the type from the statement. */
    public Call set(String name, Object value) {
      if (!names.contains(name)) {
        throw new IllegalArgumentException("the statement has no :" + name + ": " + named);
      }
      values.put(name, value);
      return this;
    }

    /**
     * Gives this statement a bound of its own instead of the pool's (a short one, for requests):
     * the server cancels it after {@code bound}, and the driver waits for the network for {@link
     * Bounds#margin} longer before it gives the connection up. For statements whose work grows with
     * their input (batches, retention, vacuum).
     */
    public Call within(java.time.Duration bound) {
      this.bound = bound;
      return this;
    }

    public <T> List<T> list(RowMapper<T> mapper) {
      return run(
          connection -> {
            try (PreparedStatement statement = prepare(connection);
                ResultSet rows = statement.executeQuery()) {
              List<T> result = new ArrayList<>();
              while (rows.next()) {
                result.add(mapper.map(rows));
              }
              return result;
            }
          });
    }

    public int update() {
      return run(
          connection -> {
            try (PreparedStatement statement = prepare(connection)) {
              return statement.executeUpdate();
            }
          });
    }

    private <T> T run(OnConnection<T> work) {
      requireAllBound();
      try {
        if (held != null) {
          return Bounds.run(held, bound, () -> work.run(held));
        }
        try (Connection connection = dataSource.getConnection()) {
          return Bounds.run(connection, bound, () -> work.run(connection));
        }
      } catch (SQLException e) {
        throw new StatementFailedException(e);
      }
    }

    private void requireAllBound() {
      for (String name : names) {
        if (!values.containsKey(name)) {
          throw new IllegalArgumentException("no value for :" + name + ": " + named);
        }
      }
    }

    private PreparedStatement prepare(Connection connection) throws SQLException {
      PreparedStatement statement = connection.prepareStatement(positional);
      try {
        for (int i = 0; i < names.size(); i++) {
          bind(statement, i + 1, values.get(names.get(i)));
        }
        return statement;
      } catch (SQLException | RuntimeException e) {
        statement.close();
        throw e;
      }
    }
  }

  private static void bind(PreparedStatement statement, int index, Object value)
      throws SQLException {
    if (value == null) {
      statement.setNull(index, Types.OTHER);
    } else if (value instanceof Instant instant) {
      statement.setObject(index, OffsetDateTime.ofInstant(instant, ZoneOffset.UTC));
    } else if (value instanceof String[] texts) {
      statement.setArray(index, statement.getConnection().createArrayOf("text", texts));
    } else {
      statement.setObject(index, value);
    }
  }

  /** JDBC work on a connection. */
  @FunctionalInterface
  public interface OnConnection<T> {
    T run(Connection connection) throws SQLException;
  }

  /**
   * A pooled connection's two bounds, the server's statement_timeout and the driver's wait for the
   * network (socketTimeout), set for one piece of work and put back after it. The network wait is
   * the longer by {@link #MARGIN}, so that a statement that is merely slow is cancelled by the
   * server (and rolled back, with an error that says so) before the driver would give up on a
   * connection that still works.
   */
  public static final class Bounds {
    /** How much longer than its statement bound the driver waits for the network. */
    public static final java.time.Duration MARGIN = java.time.Duration.ofSeconds(2);

    /** A piece of JDBC work. */
    @FunctionalInterface
    public interface Work<T> {
      T run() throws SQLException;
    }

    private Bounds() {}

    /**
     * Runs the work under {@code bound} (null: the pool's own bounds), then restores the pool's.
     */
    public static <T> T run(Connection connection, java.time.Duration bound, Work<T> work)
        throws SQLException {
      if (bound == null) {
        return work.run();
      }
      int networkMillis = connection.getNetworkTimeout();
      SQLException failed = null;
      try {
        connection.setNetworkTimeout(Runnable::run, Math.toIntExact(bound.plus(MARGIN).toMillis()));
        try (java.sql.Statement statement = connection.createStatement()) {
          statement.execute("SET statement_timeout = " + bound.toMillis());
        }
        return work.run();
      } catch (SQLException e) {
        failed = e;
        throw e;
      } finally {
        // A connection whose network failed was closed by the driver, and the pool drops it. The
        // work's answer stands whatever happens here: in autocommit it has committed already.
        if (!connection.isClosed()) {
          try (java.sql.Statement statement = connection.createStatement()) {
            statement.execute("RESET statement_timeout");
            connection.setNetworkTimeout(Runnable::run, networkMillis);
          } catch (SQLException e) {
            if (failed != null) {
              failed.addSuppressed(e);
            }
          }
        }
      }
    }
  }

  /** A statement the database refused or could not run; the cause is the driver's exception. */
  public static final class StatementFailedException extends RuntimeException {
    StatementFailedException(SQLException cause) {
      super(cause.getMessage(), cause);
    }
  }

  /**
   * Splits PostgreSQL text into what it is to the server: quoted strings and identifiers, dollar
   * quotes, comments and {@code ::} casts are text, and {@code :name} outside them is a parameter.
   */
  static final class Lexer {
    /**
     * A parameter (its name, without the colon), or text as it stands; a statement-ending ";" is a
     * text token of its own.
     */
    record Token(boolean parameter, String text) {
      boolean statementEnd() {
        return !parameter && text.equals(";");
      }

      /** The token as it was written. */
      String source() {
        return parameter ? ":" + text : text;
      }
    }

    private Lexer() {}

    static List<Token> tokens(String sql) {
      List<Token> tokens = new ArrayList<>();
      int i = 0;
      int n = sql.length();
      while (i < n) {
        int end = skipQuotedOrComment(sql, i);
        if (end > i) {
          tokens.add(new Token(false, sql.substring(i, end)));
          i = end;
          continue;
        }
        char c = sql.charAt(i);
        if (c == ':' && i + 1 < n && sql.charAt(i + 1) == ':') {
          tokens.add(new Token(false, "::"));
          i += 2;
        } else if (c == ':' && i + 1 < n && isNameStart(sql.charAt(i + 1))) {
          int j = i + 1;
          while (j < n && isNamePart(sql.charAt(j))) {
            j++;
          }
          tokens.add(new Token(true, sql.substring(i + 1, j)));
          i = j;
        } else {
          tokens.add(new Token(false, String.valueOf(c)));
          i++;
        }
      }
      return tokens;
    }

    /** The index just past the quoted text or comment that starts at i; i when none starts. */
    private static int skipQuotedOrComment(String sql, int i) {
      int n = sql.length();
      char c = sql.charAt(i);
      char next = i + 1 < n ? sql.charAt(i + 1) : '\0';
      if (c == '-' && next == '-') {
        int eol = sql.indexOf('\n', i);
        return eol < 0 ? n : eol + 1;
      }
      if (c == '/' && next == '*') {
        return skipBlockComment(sql, i);
      }
      if (c == '\'') {
        boolean escapes =
            i > 0
                && (sql.charAt(i - 1) == 'E' || sql.charAt(i - 1) == 'e')
                && (i < 2 || !isNamePart(sql.charAt(i - 2)));
        return skipQuoted(sql, i, '\'', escapes);
      }
      if (c == '"') {
        return skipQuoted(sql, i, '"', false);
      }
      if (c == '$' && (i == 0 || !isNamePart(sql.charAt(i - 1)))) {
        int j = i + 1;
        // A tag is a name without $ (which ends it), or nothing: $$.
        while (j < n
            && (j == i + 1
                ? isNameStart(sql.charAt(j))
                : Character.isLetterOrDigit(sql.charAt(j)) || sql.charAt(j) == '_')) {
          j++;
        }
        if (j < n && sql.charAt(j) == '$') {
          String tag = sql.substring(i, j + 1);
          int close = sql.indexOf(tag, j + 1);
          return close < 0 ? unterminated(sql, i) : close + tag.length();
        }
      }
      return i;
    }

    private static int skipQuoted(String sql, int i, char quote, boolean backslashEscapes) {
      int j = i + 1;
      while (j < sql.length()) {
        char c = sql.charAt(j);
        if (backslashEscapes && c == '\\') {
          j += 2;
        } else if (c == quote && j + 1 < sql.length() && sql.charAt(j + 1) == quote) {
          j += 2; // a doubled quote stands for one
        } else if (c == quote) {
          return j + 1;
        } else {
          j++;
        }
      }
      return unterminated(sql, i);
    }

    /** PostgreSQL's block comments nest. */
    private static int skipBlockComment(String sql, int i) {
      int depth = 0;
      int j = i;
      while (j + 1 < sql.length()) {
        if (sql.startsWith("/*", j)) {
          depth++;
          j += 2;
        } else if (sql.startsWith("*/", j)) {
          depth--;
          j += 2;
          if (depth == 0) {
            return j;
          }
        } else {
          j++;
        }
      }
      return unterminated(sql, i);
    }

    private static int unterminated(String sql, int i) {
      int line = (int) sql.substring(0, i).chars().filter(ch -> ch == '\n').count() + 1;
      throw new IllegalArgumentException(
          "unterminated quote or comment at line " + line + ": " + sql.substring(i).strip());
    }

    private static boolean isNameStart(char c) {
      return Character.isLetter(c) || c == '_';
    }

    private static boolean isNamePart(char c) {
      return Character.isLetterOrDigit(c) || c == '_' || c == '$';
    }
  }
}
