package dev.claimq.store;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A {@code .sql} resource of named statements, River's {@code river_job.sql} style: each block is a
 * {@code -- name: <name>} line, its why-comment, and one statement up to its closing semicolon. The
 * code takes each statement by name together with the parameters it binds, and {@link
 * #requireAllTaken} then refuses a block nobody takes, so a statement and its caller cannot drift
 * apart unnoticed.
 */
public final class SqlFile {
  private static final Pattern NAME = Pattern.compile("(?m)^-- name: ([a-z][a-z0-9-]*)[ \t]*$");

  /** One named statement: its comment lines (without "-- ") and its text (without the ";"). */
  public record Block(String name, String comment, String sql) {
    /** The text with every {@code :parameter} written as {@code replacement} instead. */
    public String with(String parameter, String replacement) {
      if (!Sql.of(sql).parameterNames().contains(parameter)) {
        throw new IllegalArgumentException("block " + name + " has no :" + parameter);
      }
      StringBuilder text = new StringBuilder();
      for (Sql.Lexer.Token token : Sql.Lexer.tokens(sql)) {
        boolean replaced = token.parameter() && token.text().equals(parameter);
        text.append(replaced ? replacement : token.source());
      }
      return text.toString();
    }
  }

  private final String origin;
  private final Map<String, Block> blocks;
  private final Set<String> taken = new HashSet<>();

  private SqlFile(String origin, Map<String, Block> blocks) {
    this.origin = origin;
    this.blocks = blocks;
  }

  /** Reads a resource of the class path, e.g. {@code db/item.sql}. */
  public static SqlFile load(String resource) {
    try (InputStream in = SqlFile.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("no resource " + resource + " on the class path");
      }
      return parse(resource, new String(in.readAllBytes(), StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static SqlFile parse(String origin, String text) {
    Map<String, Block> blocks = new LinkedHashMap<>();
    Matcher name = NAME.matcher(text);
    List<int[]> starts = new ArrayList<>();
    List<String> names = new ArrayList<>();
    while (name.find()) {
      starts.add(new int[] {name.start(), name.end()});
      names.add(name.group(1));
    }
    for (int b = 0; b < names.size(); b++) {
      int bodyEnd = b + 1 < starts.size() ? starts.get(b + 1)[0] : text.length();
      String body = text.substring(starts.get(b)[1], bodyEnd);
      Block block = block(origin, names.get(b), body);
      if (blocks.put(block.name(), block) != null) {
        throw new IllegalStateException(origin + ": two blocks are named " + block.name());
      }
    }
    return new SqlFile(origin, blocks);
  }

  /** Splits a block's body into its leading comment and its one statement. */
  private static Block block(String origin, String name, String body) {
    StringBuilder comment = new StringBuilder();
    String[] lines = body.strip().split("\n", -1);
    int first = 0;
    while (first < lines.length && lines[first].startsWith("--")) {
      comment.append(lines[first].replaceFirst("^-- ?", "")).append('\n');
      first++;
    }
    String rest = String.join("\n", java.util.Arrays.copyOfRange(lines, first, lines.length));
    List<Integer> ends = new ArrayList<>();
    int offset = 0;
    for (Sql.Lexer.Token token : Sql.Lexer.tokens(rest)) {
      if (token.statementEnd()) {
        ends.add(offset);
      }
      offset += token.source().length();
    }
    String where = origin + ", block " + name;
    if (ends.isEmpty()) {
      throw new IllegalStateException(where + ": the statement does not end with ;");
    }
    if (ends.size() > 1 || !rest.substring(ends.get(0) + 1).strip().isEmpty()) {
      throw new IllegalStateException(where + ": one statement per block, then the next name");
    }
    return new Block(name, comment.toString().strip(), rest.substring(0, ends.get(0)).strip());
  }

  /** Every block, in the order of the file. */
  public Map<String, Block> blocks() {
    return blocks;
  }

  /**
   * The named statement, refused unless its parameters are exactly {@code parameters}: a name the
   * code would bind that the statement lacks, or one the statement has that the code leaves out.
   */
  public Sql take(String name, String... parameters) {
    Block block = blocks.get(name);
    if (block == null) {
      throw new IllegalStateException(origin + " has no block named " + name);
    }
    Sql sql = Sql.of(block.sql());
    Set<String> expected = new TreeSet<>(List.of(parameters));
    Set<String> actual = new TreeSet<>(sql.parameterNames());
    if (!expected.equals(actual)) {
      throw new IllegalStateException(
          origin
              + ", block "
              + name
              + ": the statement's parameters are "
              + actual
              + " but the code binds "
              + expected);
    }
    taken.add(name);
    return sql;
  }

  /** Refuses a block that no caller took: dead SQL, or a caller that lost its statement. */
  public void requireAllTaken() {
    Set<String> left = new TreeSet<>(blocks.keySet());
    left.removeAll(taken);
    if (!left.isEmpty()) {
      throw new IllegalStateException(origin + ": no code takes the blocks " + left);
    }
  }
}
