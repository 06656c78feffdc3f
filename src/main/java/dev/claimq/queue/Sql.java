package dev.claimq.queue;

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
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * A statement with named parameters ({@code :name}), run through plain JDBC. The repository's
 * statements are each complete on their own, so outside a transaction one runs in autocommit: one
 * statement, one transaction, without the ORM session and the JTA transaction manager, which cost
 * the service more CPU per call than PostgreSQL spends on the statement. Inside a transaction
 * (operators' calls) the pool hands out the connection enlisted in it.
 */
final class Sql {
  // :name, but not the second colon of a :: cast. The repository's SQL has no :word in literals.
  private static final Pattern PARAMETER = Pattern.compile("(?<![:\\w]):([A-Za-z]\\w*)");

  /** Turns one row of a result into a value. */
  @FunctionalInterface
  interface RowMapper<T> {
    T map(ResultSet row) throws SQLException;
  }

  private final String named;
  private final String text;
  private final List<String> names;

  private Sql(String named, String text, List<String> names) {
    this.named = named;
    this.text = text;
    this.names = names;
  }

  static Sql of(String named) {
    Matcher matcher = PARAMETER.matcher(named);
    List<String> names = new ArrayList<>();
    StringBuilder text = new StringBuilder();
    while (matcher.find()) {
      names.add(matcher.group(1));
      matcher.appendReplacement(text, "?");
    }
    matcher.appendTail(text);
    return new Sql(named, text.toString(), List.copyOf(names));
  }

  /** The statement as JDBC gets it, with a ? per parameter. */
  String positional() {
    return text;
  }

  /** The statement's parameter names, in order (a name used twice appears twice). */
  List<String> parameters() {
    return names;
  }

  /** The statement as written, with its named parameters. */
  @Override
  public String toString() {
    return named;
  }

  Call on(DataSource dataSource) {
    return new Call(dataSource);
  }

  /** One execution: the values, then {@link #list} or {@link #update}. */
  final class Call {
    private final DataSource dataSource;
    private final Map<String, Object> values = new HashMap<>();

    private Call(DataSource dataSource) {
      this.dataSource = dataSource;
    }

    /** Binds a value; null is sent untyped, so PostgreSQL infers the type from the statement. */
    Call set(String name, Object value) {
      values.put(name, value);
      return this;
    }

    <T> List<T> list(RowMapper<T> mapper) {
      try (Connection connection = dataSource.getConnection();
          PreparedStatement statement = prepare(connection);
          ResultSet rows = statement.executeQuery()) {
        List<T> result = new ArrayList<>();
        while (rows.next()) {
          result.add(mapper.map(rows));
        }
        return result;
      } catch (SQLException e) {
        throw new StatementFailedException(e);
      }
    }

    int update() {
      try (Connection connection = dataSource.getConnection();
          PreparedStatement statement = prepare(connection)) {
        return statement.executeUpdate();
      } catch (SQLException e) {
        throw new StatementFailedException(e);
      }
    }

    private PreparedStatement prepare(Connection connection) throws SQLException {
      PreparedStatement statement = connection.prepareStatement(text);
      try {
        for (int i = 0; i < names.size(); i++) {
          String name = names.get(i);
          if (!values.containsKey(name)) {
            throw new IllegalArgumentException("no value for :" + name);
          }
          bind(statement, i + 1, values.get(name));
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
    } else {
      statement.setObject(index, value);
    }
  }

  /** A statement the database refused or could not run; the cause is the driver's exception. */
  static final class StatementFailedException extends RuntimeException {
    StatementFailedException(SQLException cause) {
      super(cause.getMessage(), cause);
    }
  }
}
