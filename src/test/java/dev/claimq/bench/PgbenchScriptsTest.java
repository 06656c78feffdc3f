package dev.claimq.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.claimq.MigratedSchema;
import dev.claimq.Processes;
import dev.claimq.store.SqlFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The benchmark's "raw SQL" rows are only a fair limit while pgbench runs exactly the statements
 * the service runs: its scripts are generated from db/item.sql, and here each one runs once,
 * against a schema of its own made by the service's migrations. No Quarkus.
 */
class PgbenchScriptsTest {
  private static final Path TEMPLATES = Path.of("bench", "pgbench");
  private static final String URL = MigratedSchema.URL;
  private static final MigratedSchema MIGRATED = new MigratedSchema("claimq_pgbench");
  private static final String SCHEMA = MIGRATED.name();
  private static final SqlFile STATEMENTS = SqlFile.load("db/item.sql");

  @BeforeAll
  static void migrate() {
    MIGRATED.migrate();
  }

  @AfterAll
  static void drop() throws Exception {
    MIGRATED.drop();
  }

  @Test
  void each_script_holds_its_blocks_of_item_sql_as_written() throws Exception {
    Map<String, String> scripts = PgbenchScripts.generate(STATEMENTS, TEMPLATES);

    assertThat(scripts.get("claim-complete.sql"))
        .contains(STATEMENTS.blocks().get("claim-next").sql() + "\n\\gset")
        .contains(STATEMENTS.blocks().get("complete-held").sql() + ";");
    SqlFile.Block enqueue = STATEMENTS.blocks().get("enqueue");
    String withoutRunAt = enqueue.with("runAt", "NULL");
    assertThat(scripts.get("enqueue.sql"))
        .contains(
            new SqlFile.Block(enqueue.name(), enqueue.comment(), withoutRunAt)
                    .with("traceparent", "NULL")
                + ";")
        .doesNotContain(":runAt")
        .doesNotContain(":traceparent");
  }

  @Test
  void the_scripts_cover_enqueue_claim_next_complete_claim_by_id_complete_next_and_the_batch_drain()
      throws Exception {
    Set<String> covered = new TreeSet<>();
    try (var files = Files.list(TEMPLATES)) {
      for (Path template : files.filter(f -> f.toString().endsWith(".pgbench")).toList()) {
        covered.addAll(PgbenchScripts.blocksOf(Files.readAllLines(template)));
      }
    }
    assertThat(covered)
        .containsExactlyInAnyOrder(
            "enqueue",
            "claim-next",
            "complete-held",
            "claim",
            "claim-next-batch",
            "complete-batch",
            "complete-held-claim-next");
  }

  @Test
  void a_template_that_names_no_block_or_no_parameter_is_refused(@TempDir Path dir)
      throws Exception {
    Files.writeString(dir.resolve("x.pgbench"), "-- item.sql: no-such-block\n");
    assertThatThrownBy(() -> PgbenchScripts.generate(STATEMENTS, dir))
        .hasMessageContaining("no block no-such-block");

    Files.writeString(dir.resolve("x.pgbench"), "-- item.sql: complete (runAt: NULL)\n");
    assertThatThrownBy(() -> PgbenchScripts.generate(STATEMENTS, dir))
        .hasMessageContaining("no :runAt");
  }

  @Test
  void every_generated_script_runs_on_the_migrated_schema(@TempDir Path out) throws Exception {
    PgbenchScripts.main(new String[] {TEMPLATES.toString(), out.toString()});
    sql("CREATE SEQUENCE " + SCHEMA + ".bench_claim_ids");
    // Work for the claims: ids from the sequence's start, due now.
    sql(
        "INSERT INTO "
            + SCHEMA
            + ".item (queue, dedupe_key, payload, max_attempts)"
            + " SELECT 'bench', 'pre-' || n, '{}', 5 FROM generate_series(1, 30) n");

    for (String script :
        List.of(
            "enqueue.sql",
            "enqueue-duplicate.sql",
            "claim-by-id.sql",
            "claim-complete.sql",
            "batch-claim-complete.sql")) {
      Processes.Result run = pgbench(out.resolve(script), 1);
      assertThat(run.exit()).as(script + ":\n" + run.output()).isZero();
      assertThat(run.output()).as(script).contains("actually processed: 1/1");
    }
    // Complete with next: a claim, then two rounds that each finish the item held and claim one.
    Processes.Result run = pgbench(out.resolve("complete-next.sql"), 3);
    assertThat(run.exit()).as("complete-next.sql:\n" + run.output()).isZero();
    assertThat(run.output()).contains("actually processed: 3/3");

    // What they did, counted in the table: each claim opened an attempt, each complete closed it.
    assertThat(count("SELECT count(*) FROM " + SCHEMA + ".item WHERE dedupe_key NOT LIKE 'pre-%'"))
        .as("the enqueues' items")
        .isBetween(1L, 2L);
    assertThat(count("SELECT count(*) FROM " + SCHEMA + ".attempt")).isEqualTo(1 + 1 + 10 + 3);
    assertThat(count("SELECT count(*) FROM " + SCHEMA + ".item WHERE state = 'done'"))
        .isEqualTo(1 + 10 + 2);
    assertThat(count("SELECT count(*) FROM " + SCHEMA + ".item WHERE state = 'sending'"))
        .as("claim-by-id.sql's claim, and the item complete-next.sql holds at its end")
        .isEqualTo(1 + 1);
  }

  private static Processes.Result pgbench(Path script, int transactions) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(pgbenchBinary());
    command.addAll(
        List.of(
            "-n",
            "-M",
            "prepared",
            "-c",
            "1",
            "-t",
            String.valueOf(transactions),
            "-h",
            "127.0.0.1",
            "-U",
            "postgres"));
    for (String variable :
        List.of(
            "queue=bench",
            "payload={\"to\": \"bench@example.com\"}",
            "priority=0",
            "maxAttempts=5",
            "defaultMaxAttempts=5",
            "enqueuedBy=bench",
            "worker=bench",
            "leaseSeconds=600",
            "defaultLeaseSeconds=60",
            "externalRef=bench",
            "actor=bench",
            "dupeKeys=1",
            "max=10",
            "held=0",
            "tokens=[\"t1\", \"t2\", \"t3\", \"t4\", \"t5\", \"t6\", \"t7\", \"t8\", \"t9\", \"t10\"]")) {
      command.add("-D");
      command.add(variable);
    }
    command.addAll(List.of("-f", script.toString(), "postgres"));
    return Processes.run(
        command, Path.of("."), Map.of("PGOPTIONS", "-c search_path=" + SCHEMA + ",public"), 60);
  }

  /** PostgreSQL's server package ships pgbench beside initdb. */
  private static String pgbenchBinary() throws Exception {
    try (var versions = Files.list(Path.of("/usr/lib/postgresql"))) {
      return versions
          .map(version -> version.resolve("bin/pgbench"))
          .filter(Files::isExecutable)
          .map(Path::toString)
          .sorted()
          .reduce((first, second) -> second)
          .orElse("pgbench");
    } catch (java.nio.file.NoSuchFileException e) {
      return "pgbench";
    }
  }

  private static void sql(String statement) throws Exception {
    MigratedSchema.execute(statement);
  }

  private static long count(String query) throws Exception {
    try (Connection connection = DriverManager.getConnection(URL, "postgres", "");
        Statement st = connection.createStatement();
        ResultSet rows = st.executeQuery(query)) {
      rows.next();
      return rows.getLong(1);
    }
  }
}
