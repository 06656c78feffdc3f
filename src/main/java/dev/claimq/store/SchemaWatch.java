package dev.claimq.store;

import jakarta.enterprise.event.Event;
import jakarta.inject.Provider;
import jakarta.inject.Singleton;
import java.util.Arrays;
import java.util.Optional;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfo;
import org.jboss.logging.Logger;

/**
 * Whether a newer release has migrated the schema since this instance started. Code of one release
 * beside the schema of a later one does lasting harm (a statement of the old code may mean
 * something else on the new columns), so the service refuses every request once it sees one, and
 * readiness takes it out of its load balancer: a rolling upgrade moves the traffic to the instances
 * of the new release, and the old ones answer 503 until they are stopped.
 */
@Singleton
public class SchemaWatch {
  private static final Logger LOG = Logger.getLogger(SchemaWatch.class);
  private final ItemRepository items;
  private final Provider<Flyway> flyway; // not yet active when the REST filter that asks is made
  private final Event<NewerSchema> turned;

  /** The rank of the newest migration of this release in the schema's history. */
  private volatile long ownRank = -1;

  /** The newest migration applied since, "version 22 (description)"; null while there is none. */
  private volatile String newer;

  SchemaWatch(ItemRepository items, Provider<Flyway> flyway, Event<NewerSchema> turned) {
    this.items = items;
    this.flyway = flyway;
    this.turned = turned;
  }

  /** Fired once as a newer migration is first seen: what waits for work should stop waiting. */
  public record NewerSchema(String migration) {}

  /**
   * Reads the schema's history: one indexed read. The first look, as the service starts (Flyway has
   * migrated by then), finds this release's newest migration in it. Answers 1 while a newer
   * migration is there, else 0 (the rows a maintenance run reports).
   */
  public long look() {
    if (ownRank < 0) {
      ownRank = ownNewestRank();
    }
    String now = items.migratedSince(ownRank).orElse(null);
    if (now != null && !now.equals(newer)) {
      LOG.warnf(
          "a newer release migrated the schema to %s after this instance started: refusing every"
              + " request from now on (503 schema-newer); stop this instance",
          now);
    } else if (now == null && newer != null) {
      LOG.infof("the migration %s is gone from the schema's history: serving again", newer);
    }
    boolean turning = now != null && newer == null;
    newer = now;
    if (turning) {
      turned.fire(new NewerSchema(now));
    }
    return newer == null ? 0 : 1;
  }

  /**
   * The rank of the newest applied migration that this release ships: a row of one it does not ship
   * (Flyway's FUTURE_SUCCESS or FUTURE_FAILED) is a newer release's, whenever it came, even between
   * this instance's migrations and its first look.
   */
  private long ownNewestRank() {
    return Arrays.stream(flyway.get().info().applied())
        .filter(migration -> migration.getState().isResolved())
        .mapToLong(MigrationInfo::getInstalledRank)
        .max()
        .orElse(0);
  }

  /** The migration a newer release applied since this instance started, if any. */
  public Optional<String> newerMigration() {
    return Optional.ofNullable(newer);
  }
}
