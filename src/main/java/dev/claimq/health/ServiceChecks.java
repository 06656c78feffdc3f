package dev.claimq.health;

import dev.claimq.config.ClaimqConfig;
import dev.claimq.longpoll.ClaimableListener;
import dev.claimq.maintenance.MaintenanceSchedule;
import dev.claimq.store.ItemRepository;
import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.health.api.Wellness;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import java.time.Duration;
import java.time.Instant;
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
  private final Instant started = Instant.now();

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
    String interval = config.reaper().interval();
    return () -> {
      var check = HealthCheckResponse.named("lease-reaper");
      if (MaintenanceSchedule.isOff(interval)) {
        return check.up().withData("reason", "off (claimq.reaper.interval)").build();
      }
      Optional<String> late =
          reaperLate(
              schedule.lastRun(MaintenanceSchedule.REAPER),
              started,
              DurationConverter.parseDuration(interval),
              Instant.now());
      return check
          .status(late.isEmpty())
          .withData(
              "reason",
              late.orElse(
                  schedule
                      .lastRun(MaintenanceSchedule.REAPER)
                      .map(at -> "ran at " + at)
                      .orElse("not run yet: just started")))
          .build();
    };
  }

  /**
   * Why the reaper counts as late (no run within 3 intervals of its last run, or of the start), or
   * empty while it is not.
   */
  static Optional<String> reaperLate(
      Optional<Instant> lastRun, Instant started, Duration interval, Instant now) {
    Instant since = lastRun.orElse(started);
    if (Duration.between(since, now).compareTo(interval.multipliedBy(3)) <= 0) {
      return Optional.empty();
    }
    return Optional.of(
        (lastRun.isPresent() ? "last ran at " + since : "has not run since the start at " + since)
            + ", over 3 intervals of "
            + interval.toSeconds()
            + " s ago: expired claims are not being released");
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
