package dev.claimq.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.claimq.queue.ItemRepository;
import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The benchmark's "raw SQL" rows are only a fair limit while bench/pgbench runs exactly the
 * statements the service runs. Each copied statement there follows a marker line {@code --
 * ItemRepository.NAME}, optionally {@code (param: replacement)} for a parameter pgbench cannot bind
 * (a null, rows of an earlier statement); this test holds the copies to the repository's constants,
 * white space aside. Plain JUnit: no Quarkus, no database.
 */
class PgbenchScriptsTest {

  private static final Path SCRIPTS = Path.of("bench", "pgbench");
  private static final Pattern MARKER =
      Pattern.compile("^-- ItemRepository\\.([A-Z_]+)(?: \\((\\w+): (.+)\\))?$");

  record Copy(String file, String constant, String parameter, String replacement, String sql) {}

  @Test
  void every_pgbench_statement_is_the_repository_statement_it_names() throws Exception {
    List<Copy> copies = copies();
    for (Copy copy : copies) {
      String expected = repositorySql(copy.constant());
      if (copy.parameter() != null) {
        assertTrue(
            expected.contains(":" + copy.parameter()),
            copy.file() + ": " + copy.constant() + " has no :" + copy.parameter());
        expected = expected.replace(":" + copy.parameter(), copy.replacement());
      }
      assertEquals(
          normalize(expected),
          normalize(copy.sql()),
          copy.file()
              + " no longer matches ItemRepository."
              + copy.constant()
              + ": copy the statement again");
    }
  }

  @Test
  void the_scripts_cover_enqueue_claim_next_complete_claim_by_id_and_the_batch_drain()
      throws Exception {
    Set<String> covered = new TreeSet<>();
    copies().forEach(copy -> covered.add(copy.constant()));
    assertEquals(
        Set.of(
            "INSERT_IF_ABSENT",
            "FIND_WITH_EQUAL_PAYLOAD",
            "CLAIM_NEXT",
            "COMPLETE",
            "CLAIM_BY_ID",
            "CLAIM_NEXT_BATCH",
            "COMPLETE_BATCH"),
        covered);
  }

  private static List<Copy> copies() throws IOException {
    List<Copy> copies = new ArrayList<>();
    try (Stream<Path> files = Files.list(SCRIPTS)) {
      for (Path file : files.filter(f -> f.toString().endsWith(".sql")).sorted().toList()) {
        List<String> lines = Files.readAllLines(file);
        for (int i = 0; i < lines.size(); i++) {
          Matcher marker = MARKER.matcher(lines.get(i).trim());
          if (!marker.matches()) {
            continue;
          }
          // The statement runs to the line ending in ";" or to a \gset line, whichever is first.
          StringBuilder sql = new StringBuilder();
          for (int j = i + 1; j < lines.size(); j++) {
            String line = lines.get(j);
            if (line.trim().startsWith("\\gset")) {
              break;
            }
            sql.append(line).append('\n');
            if (line.trim().endsWith(";")) {
              break;
            }
          }
          copies.add(
              new Copy(
                  file.getFileName().toString(),
                  marker.group(1),
                  marker.group(2),
                  marker.group(3),
                  sql.toString().trim().replaceAll(";$", "")));
        }
      }
    }
    assertTrue(copies.size() >= 5, "no marked statements found in " + SCRIPTS.toAbsolutePath());
    return copies;
  }

  private static String repositorySql(String constant) throws ReflectiveOperationException {
    Field field = ItemRepository.class.getDeclaredField(constant);
    field.setAccessible(true);
    return String.valueOf(field.get(null)); // an Sql prints its text
  }

  private static String normalize(String sql) {
    return sql.replaceAll("\\s+", " ").replaceAll("\\( ", "(").replaceAll(" \\)", ")").trim();
  }
}
