package dev.claimq.maintenance;

import dev.claimq.config.ClaimqConfig;
import dev.claimq.config.Intervals;
import dev.claimq.store.DatabaseErrors;
import dev.claimq.store.SchemaWatch;
import dev.claimq.telemetry.LogText;
import dev.claimq.telemetry.QueueMetrics;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.runtime.configuration.DurationConverter;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.jboss.logging.Logger;

/**
 * The one skeleton the background jobs share. Every instance runs each job on its interval (their
 * statements make concurrent runs safe), one run at a time, from the start on and never once the
 * service stops (the connection pool closes after), and a database outage is one warning when it
 * starts and one line when it ends, not a stack trace every run. The jobs themselves only say what
 * one run does.
 *
 * <p>Intervals are counted on the JVM's monotonic clock, as is the time since a job last ran: a
 * scheduler that compares wall-clock times stops every job for as long as the clock is stepped back
 * (NTP, a restored VM), and a watch on the wall clock sees nothing wrong meanwhile.
 */
@Singleton
public class MaintenanceSchedule {
  private static final Logger LOG = Logger.getLogger(MaintenanceSchedule.class);

  /** The job whose runs health watches: without it, expired claims are never released. */
  public static final String REAPER = "reaper";

  /** The job that reads the schema's history; while it has seen a newer one, the others rest. */
  private static final String SCHEMA_WATCH = "schema-watch";

  private final QueueMetrics metrics;
  private final SchemaWatch schemaWatch;
  private final long started = System.nanoTime();

  /** When (System.nanoTime) each job last ran to the end on this instance. */
  private final Map<String, Long> lastRuns = new ConcurrentHashMap<>();

  /**
   * A thread for each of the five jobs, so that a long retention or vacuum run never holds the
   * reaper or the schema watch back.
   */
  private final ScheduledThreadPoolExecutor timer =
      new ScheduledThreadPoolExecutor(
          5,
          runnable -> {
            Thread thread = new Thread(runnable, "claimq-maintenance");
            thread.setDaemon(true);
            return thread;
          });

  MaintenanceSchedule(QueueMetrics metrics, SchemaWatch schemaWatch) {
    this.metrics = metrics;
    this.schemaWatch = schemaWatch;
  }

  void start(
      @Observes StartupEvent started,
      ClaimqConfig config,
      LeaseReaper reaper,
      Retention retention,
      Vacuum vacuum,
      QueueSampler sampler) {
    schedule(REAPER, config.reaper().interval(), "0s", reaper::releaseExpiredLeases);
    schedule("retention", config.retention().interval(), "10s", retention::prune);
    if (config.vacuum().enabled()) {
      String interval = config.vacuum().interval();
      schedule("vacuum", interval, interval, vacuum::vacuumIfNeeded);
    }
    schedule("sampler", config.metrics().sampleInterval(), "0s", sampler::sample);
    schedule(SCHEMA_WATCH, config.database().schemaWatchInterval(), "0s", schemaWatch::look);
  }

  /** No run starts once the service stops; one under way may end (a statement ends within 4 s). */
  void stop(@Observes ShutdownEvent stopping) throws InterruptedException {
    timer.shutdown();
    if (!timer.awaitTermination(10, TimeUnit.SECONDS)) {
      LOG.warn("a background job was still running as the service stopped");
    }
  }

  /** How long ago the job last ran to the end on this instance; empty before its first run. */
  public Optional<Duration> sinceLastRun(String job) {
    Long at = lastRuns.get(job);
    return at == null ? Optional.empty() : Optional.of(Duration.ofNanos(System.nanoTime() - at));
  }

  /** How long ago this instance scheduled its jobs. */
  public Duration sinceStart() {
    return Duration.ofNanos(System.nanoTime() - started);
  }

  private void schedule(String name, String interval, String firstDelay, LongSupplier run) {
    Optional<Duration> every = Intervals.of(interval);
    if (every.isEmpty()) {
      return;
    }
    Job job = new Job(name, run);
    metrics.maintenanceScheduled(
        name, () -> sinceLastRun(name).orElseGet(this::sinceStart).toNanos() / 1e9);
    // A fixed delay: a run that overran its interval is followed by the next one, not a burst.
    timer.scheduleWithFixedDelay(
        job::run,
        DurationConverter.parseDuration(firstDelay).toNanos(),
        every.get().toNanos(),
        TimeUnit.NANOSECONDS);
  }

  /** One job's runs, and whether the last one found the database away. */
  private final class Job {
    private final String name;
    private final LongSupplier body;
    private volatile boolean databaseAway;

    Job(String name, LongSupplier body) {
      this.name = name;
      this.body = body;
    }

    /** Never throws: an executor runs a task that threw never again. */
    void run() {
      if (!name.equals(SCHEMA_WATCH) && schemaWatch.newerMigration().isPresent()) {
        // This release's statements on a newer release's schema (SchemaWatch): none, from the
        // reaper's releases to retention's deletes. The run is not counted as one.
        return;
      }
      try {
        long start = System.nanoTime();
        long rows = body.getAsLong();
        long end = System.nanoTime();
        metrics.maintenanceRan(name, Duration.ofNanos(end - start), rows);
        lastRuns.put(name, end);
        if (databaseAway) {
          databaseAway = false;
          LOG.infof("%s: the database is back", name);
        }
      } catch (RuntimeException e) {
        // Out of disk, its statement timed out, or gone: the database's state, not a fault of the
        // job, said once when it starts and once when it ends.
        boolean unavailable = DatabaseErrors.exhausted(e) != null || DatabaseErrors.unavailable(e);
        if (!unavailable && !DatabaseErrors.timedOut(e)) {
          LOG.errorf(e, "%s failed", name);
        } else if (!databaseAway) {
          databaseAway = true;
          LOG.warnf(
              "%s: the database cannot do it now (%s); retrying until it can",
              name, LogText.oneLine(DatabaseErrors.describe(e)));
        }
      } catch (Error e) {
        LOG.errorf(e, "%s failed", name);
      }
    }
  }
}
