package dev.claimq.maintenance;

import static dev.claimq.Api.claimedNext;
import static dev.claimq.Api.complete;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;

import dev.claimq.AsAdmin;
import dev.claimq.LogCapture;
import dev.claimq.MigratedSchema;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;

/**
 * The service run by a role that may only read and write the tables of a schema migrated by another
 * (README, Database privileges): it serves, and its vacuum job, which such a role may not run, says
 * so once instead of having PostgreSQL skip the table on every run unseen.
 */
@QuarkusTest
@TestProfile(RuntimeRoleTest.RuntimeRole.class)
class RuntimeRoleTest extends AsAdmin {
  static final String SCHEMA = "claimq_runtime_role";
  static final String ROLE = "claimq_runtime";

  public static class RuntimeRole implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      // Under the test profile's own names, which application.properties sets.
      return Map.of(
          "%test.claimq.schema", SCHEMA,
          "quarkus.datasource.username", ROLE,
          "%test.quarkus.flyway.clean-at-start", "false");
    }

    @Override
    public List<TestResourceEntry> testResources() {
      return List.of(new TestResourceEntry(MigratedByTheOwner.class));
    }
  }

  /** The schema, migrated by its owner, and a role with the grants the README lists. */
  public static class MigratedByTheOwner implements QuarkusTestResourceLifecycleManager {
    @Override
    public Map<String, String> start() {
      try {
        new MigratedSchema(SCHEMA).migrate();
        MigratedSchema.execute(
            "DO $$ BEGIN CREATE ROLE "
                + ROLE
                + " LOGIN;"
                + " EXCEPTION WHEN duplicate_object THEN NULL; END $$");
        MigratedSchema.execute("GRANT USAGE ON SCHEMA " + SCHEMA + " TO " + ROLE);
        MigratedSchema.execute(
            "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "
                + SCHEMA
                + " TO "
                + ROLE);
        MigratedSchema.execute(
            "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA " + SCHEMA + " TO " + ROLE);
      } catch (SQLException e) {
        throw new IllegalStateException(e);
      }
      return Map.of();
    }

    @Override
    public void stop() {
      try {
        new MigratedSchema(SCHEMA).drop();
        MigratedSchema.execute("DROP OWNED BY " + ROLE);
        MigratedSchema.execute("DROP ROLE " + ROLE);
      } catch (SQLException e) {
        throw new IllegalStateException(e);
      }
    }
  }

  @Inject Vacuum vacuum;

  @Test
  void the_role_serves_and_its_vacuum_job_says_once_that_it_may_not_vacuum() throws Exception {
    String queue = uniqueQueue("runtime-role");
    String id = enqueued(queue, "k", 1);
    complete(id, Map.of("claimToken", claimedNext(queue, "w").path("claimToken")))
        .then()
        .statusCode(200);

    // More dead rows than the job's threshold (2,000 in tests), made by the schema's owner.
    MigratedSchema.execute(
        "INSERT INTO "
            + SCHEMA
            + ".item (queue, dedupe_key, payload, max_attempts)"
            + " SELECT 'dead', 'k-' || g, '1', 1 FROM generate_series(1, 3000) g");
    MigratedSchema.execute("DELETE FROM " + SCHEMA + ".item WHERE queue = 'dead'");
    MigratedSchema.execute("SELECT pg_stat_force_next_flush()");
    try (LogCapture log = LogCapture.start(Level.WARNING)) {
      assertThat(vacuum.vacuumIfNeeded()).isZero();
      assertThat(vacuum.vacuumIfNeeded()).isZero();
      assertThat(log.records().stream().map(LogCapture::format))
          .filteredOn(line -> line.contains("may not VACUUM the item table"))
          .hasSize(1);
    }
  }
}
