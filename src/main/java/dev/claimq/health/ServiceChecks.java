package dev.claimq.health;

import dev.claimq.config.ClaimqConfig;
import dev.claimq.config.Intervals;
import dev.claimq.longpoll.ClaimableListener;
import dev.claimq.maintenance.MaintenanceSchedule;
import dev.claimq.store.DatabaseErrors;
import dev.claimq.store.ItemRepository;
import dev.claimq.store.SchemaWatch;
import io.smallrye.health.api.Wellness;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import java.time.Duration;
import java.util.Optional;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Liveness;
import org.eclipse.microprofile.health.Readiness;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.MigrationInfoService;

/**
 * What the service can say about itself beyond "the database answers" (readiness, Quarkus's own
 * datasource check). These are wellness checks (/q/health/well, and in /q/health): a DOWN here
 * means degraded, with a reason, while the service goes on serving, so none of them takes an
 * instance out of a load balancer. Liveness never asks the database: a database outage must not get
 * healthy processes restarted.
 */
@ApplicationScoped
class ServiceChecks {

  @Produces
  @Liveness
  HealthCheck process() {
    return () -> HealthCheckResponse.up("process");
  }

  @Produces
  @Wellness
  HealthCheck listener(ClaimableListener listener) {
    return () -> {
      Optional<String> why = listener.notListening();
      return HealthCheckResponse.named("enqueue-listener")
          .status(why.isEmpty())
          .withData(
              "reason",
              why.map(w -> w + "; parked claims wake only on the fallback poll")
                  .orElse("listening"))
          .withData("otherInstances", listener.otherInstances())
          .build();
    };
  }

  @Produces
  @Wellness
  HealthCheck reaper(MaintenanceSchedule schedule, ClaimqConfig config) {
    Optional<Duration> interval = Intervals.of(config.reaper().interval());
    return () -> {
      var check = HealthCheckResponse.named("lease-reaper");
      if (interval.isEmpty()) {
        return check.up().withData("reason", "off (claimq.reaper.interval)").build();
      }
      Optional<Duration> sinceLastRun = schedule.sinceLastRun(MaintenanceSchedule.REAPER);
      Optional<String> late = reaperLate(sinceLastRun, schedule.sinceStart(), interval.get());
      return check
          .status(late.isEmpty())
          .withData(
              "reason",
              late.orElse(
                  sinceLastRun
                      .map(since -> "ran " + seconds(since) + " ago")
                      .orElse("not run yet: just started")))
          .build();
    };
  }

  /**
   * Why the reaper counts as late (no run within 3 intervals of its last run, or of the start), or
   * empty while it is not. Both times are the JVM's monotonic clock's, which no clock step moves.
   */
  static Optional<String> reaperLate(
      Optional<Duration> sinceLastRun, Duration sinceStart, Duration interval) {
    Duration since = sinceLastRun.orElse(sinceStart);
    if (since.compareTo(interval.multipliedBy(3)) <= 0) {
      return Optional.empty();
    }
    return Optional.of(
        (sinceLastRun.isPresent() ? "last ran " : "has not run since the start, ")
            + seconds(since)
            + " ago, over 3 intervals of "
            + seconds(interval)
            + ": expired claims are not being released");
  }

  /** A duration as seconds to the millisecond: "1.250 s". */
  private static String seconds(Duration duration) {
    return String.format(java.util.Locale.ROOT, "%.3f s", duration.toMillis() / 1000.0);
  }

  /**
   * Ready only while the database takes writes: one that answers but refuses them (a replica, a
   * primary switched to read-only) would fail every enqueue, claim and finish with a 503. Reads go
   * on working meanwhile. The database being away is the datasource check's to report.
   */
  @Produces
  @Readiness
  HealthCheck writable(ItemRepository items) {
    return () -> {
      var check = HealthCheckResponse.named("database-writable");
      try {
        return items.refusesWrites()
            ? check
                .down()
                .withData(
                    "reason",
                    "the database refuses writes (transaction_read_only is on): enqueues,"
                        + " claims and finishes answer 503; reads work")
                .build()
            : check.up().build();
      } catch (RuntimeException e) {
        return check
            .down()
            .withData("reason", "cannot ask the database: " + e.getMessage())
            .build();
      }
    };
  }

  /** How long a write that failed for want of disk space marks the database as full. */
  static final Duration OUT_OF_DISK_WINDOW = Duration.ofSeconds(60);

  /**
   * Degraded (not unready) while writes fail for want of disk space: every instance shares the
   * disk, so taking them out of a load balancer would stop reads as well, and none of them could
   * see space come back without taking writes again.
   */
  @Produces
  @Wellness
  HealthCheck diskSpace() {
    return () -> {
      Optional<Duration> ago =
          DatabaseErrors.lastDiskFull()
              .map(at -> Duration.ofNanos(System.nanoTime() - at))
              .filter(since -> since.compareTo(OUT_OF_DISK_WINDOW) < 0);
      return HealthCheckResponse.named("database-disk")
          .status(ago.isEmpty())
          .withData(
              "reason",
              ago.map(
                      since ->
                          "a write failed for want of disk space "
                              + seconds(since)
                              + " ago: enqueues, claims and finishes answer 503 until the"
                              + " database's operator frees some; reads work")
                  .orElse("no write failed for want of disk space in the last minute"))
          .build();
    };
  }

  /**
   * Ready only while no newer release has migrated the schema under this instance: from then on it
   * refuses every request (503 schema-newer), and a load balancer should send them elsewhere.
   */
  @Produces
  @Readiness
  HealthCheck schemaCurrent(SchemaWatch watch) {
    return () -> {
      var check = HealthCheckResponse.named("schema-current");
      return watch
          .newerMigration()
          .map(
              migration ->
                  check
                      .down()
                      .withData(
                          "reason",
                          "a newer release migrated the schema to "
                              + migration
                              + " after this instance started: every request answers 503; stop"
                              + " this instance")
                      .build())
          .orElseGet(() -> check.up().build());
    };
  }

  @Produces
  @Wellness
  HealthCheck migrations(Flyway flyway) {
    return () -> {
      var check = HealthCheckResponse.named("schema-migrations");
      try {
        MigrationInfoService info = flyway.info(); // one read of the schema history, not two
        MigrationInfo[] pending = info.pending();
        MigrationInfo current = info.current();
        String at = current == null ? "none" : current.getVersion().toString();
        if (pending.length > 0) {
          return check
              .down()
              .withData(
                  "reason",
                  "at version "
                      + at
                      + ", "
                      + pending.length
                      + " migration(s) not applied, up to "
                      + pending[pending.length - 1].getVersion())
              .build();
        }
        return check.up().withData("reason", "at version " + at + ", the latest").build();
      } catch (RuntimeException e) {
        return check
            .down()
            .withData("reason", "cannot read the schema's history: " + e.getMessage())
            .build();
      }
    };
  }
}
