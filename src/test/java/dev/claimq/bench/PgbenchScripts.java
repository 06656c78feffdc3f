package dev.claimq.bench;

import dev.claimq.store.SqlFile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Writes the benchmark's pgbench scripts from their templates in bench/pgbench, so the "raw SQL"
 * figures run exactly the statements the service runs. A template is pgbench's own lines plus
 * marker lines {@code -- item.sql: <block>}, optionally {@code (parameter: replacement)} for a
 * parameter pgbench cannot bind (a null, the rows of an earlier statement), several separated by
 * {@code "; "}; each marker is followed by that block of db/item.sql, ended by ";" or by the
 * template's next {@code \gset} or {@code \aset}.
 *
 * <p>bench/run.sh runs it from the build's classes: {@code java -cp
 * target/classes:target/test-classes dev.claimq.bench.PgbenchScripts bench/pgbench OUT}.
 */
public final class PgbenchScripts {
  static final Pattern MARKER = Pattern.compile("^-- item\\.sql: ([a-z0-9-]+)(?: \\((.+)\\))?$");
  private static final Pattern REPLACEMENT = Pattern.compile("(\\w+): (.+)");

  /** pgbench's commands that keep a statement's row in variables, ending the statement. */
  private static final Pattern KEPT = Pattern.compile("\\\\[ga]set\\b");

  private PgbenchScripts() {}

  public static void main(String[] args) throws IOException {
    if (args.length != 2) {
      System.err.println("usage: PgbenchScripts TEMPLATE_DIR OUT_DIR");
      System.exit(2);
    }
    Path out = Path.of(args[1]);
    Files.createDirectories(out);
    for (Map.Entry<String, String> script :
        generate(SqlFile.load("db/item.sql"), Path.of(args[0])).entrySet()) {
      Files.writeString(out.resolve(script.getKey()), script.getValue());
    }
  }

  /** Every template's script ({@code name.pgbench} becomes {@code name.sql}), by file name. */
  static Map<String, String> generate(SqlFile statements, Path templates) throws IOException {
    Map<String, String> scripts = new LinkedHashMap<>();
    try (Stream<Path> files = Files.list(templates)) {
      for (Path template : files.filter(f -> f.toString().endsWith(".pgbench")).sorted().toList()) {
        String name = template.getFileName().toString().replaceFirst("\\.pgbench$", ".sql");
        scripts.put(name, script(statements, template, Files.readAllLines(template)));
      }
    }
    if (scripts.isEmpty()) {
      throw new IllegalStateException("no *.pgbench templates in " + templates.toAbsolutePath());
    }
    return scripts;
  }

  /** The blocks a template takes, in order. */
  static List<String> blocksOf(List<String> lines) {
    List<String> blocks = new ArrayList<>();
    for (String line : lines) {
      Matcher marker = MARKER.matcher(line.strip());
      if (marker.matches()) {
        blocks.add(marker.group(1));
      }
    }
    return blocks;
  }

  private static String script(SqlFile statements, Path template, List<String> lines) {
    StringBuilder script = new StringBuilder();
    script
        .append("-- Generated from ")
        .append(template.getFileName())
        .append(" and db/item.sql.\n");
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      script.append(line).append('\n');
      Matcher marker = MARKER.matcher(line.strip());
      if (!marker.matches()) {
        continue;
      }
      SqlFile.Block block = statements.blocks().get(marker.group(1));
      if (block == null) {
        throw new IllegalStateException(
            template.getFileName() + ": db/item.sql has no block " + marker.group(1));
      }
      String sql = block.sql();
      if (marker.group(2) != null) {
        for (String replacement : marker.group(2).split("; (?=\\w+: )")) {
          Matcher parameter = REPLACEMENT.matcher(replacement);
          if (!parameter.matches()) {
            throw new IllegalStateException(
                template.getFileName() + ": not (parameter: replacement): " + replacement);
          }
          sql =
              new SqlFile.Block(block.name(), block.comment(), sql)
                  .with(parameter.group(1), parameter.group(2));
        }
      }
      boolean kept = i + 1 < lines.size() && KEPT.matcher(lines.get(i + 1).strip()).lookingAt();
      script.append(sql).append(kept ? "\n" : ";\n");
    }
    return script.toString();
  }
}
