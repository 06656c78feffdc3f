package dev.claimq.maintenance;

import dev.claimq.config.ClaimqConfig;
import dev.claimq.store.DatabaseErrors;
import dev.claimq.telemetry.QueueMetrics;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.Scheduler;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.jboss.logging.Logger;

/**
 * The one skeleton the background jobs share. Every instance runs each job on its interval (their
 * statements make concurrent runs safe), one run at a time, never while the service starts or stops
 * (the connection pool may be closed), and a database outage is one warning when it starts and one
 * line when it ends, not a stack trace every run. The jobs themselves only say what one run does.
 */
@Singleton
public class MaintenanceSchedule {
  /**
   * Whether an interval means "never", in any case, as Quarkus's own @Scheduled(every) reads it.
   */
  public static boolean isOff(String interval) {
    return interval.equalsIgnoreCase("off") || interval.equalsIgnoreCase("disabled");
  }

  private final QueueMetrics metrics;
  private final Map<String, Instant> lastRuns = new ConcurrentHashMap<>();

  MaintenanceSchedule(QueueMetrics metrics) {
    this.metrics = metrics;
  }

  void start(
      @Observes StartupEvent started,
      Scheduler scheduler,
      ClaimqConfig config,
      LeaseReaper reaper,
      Retention retention,
      Vacuum vacuum,
      QueueSampler sampler) {
    schedule(scheduler, REAPER, config.reaper().interval(), "0s", reaper::releaseExpiredLeases);
    schedule(scheduler, "retention", config.retention().interval(), "10s", retention::prune);
    if (config.vacuum().enabled()) {
      String interval = config.vacuum().interval();
      schedule(scheduler, "vacuum", interval, interval, vacuum::vacuumIfNeeded);
    }
    schedule(scheduler, "sampler", config.metrics().sampleInterval(), "0s", sampler::sample);
  }

  /** The job whose runs health watches: without it, expired claims are never released. */
  public static final String REAPER = "reaper";

  /** When the job last ran to the end on this instance; empty before its first run. */
  public Optional<Instant> lastRun(String job) {
    return Optional.ofNullable(lastRuns.get(job));
  }

  private void schedule(
      Scheduler scheduler, String name, String interval, String firstDelay, LongSupplier run) {
    if (isOff(interval)) {
      return;
    }
    Job job = new Job(name, run);
    scheduler
        .newJob(name)
        .setInterval(interval)
        .setDelayed(firstDelay)
        .setConcurrentExecution(Scheduled.ConcurrentExecution.SKIP)
        .setSkipPredicate(Scheduled.ApplicationNotRunning.class)
        .setTask(execution -> job.run())
        .schedule();
  }

  /** One job's runs, and whether the last one found the database away. */
  private final class Job {
    private static final Logger LOG = Logger.getLogger(MaintenanceSchedule.class);

    private final String name;
    private final LongSupplier body;
    private volatile boolean databaseAway;

    Job(String name, LongSupplier body) {
      this.name = name;
      this.body = body;
    }

    void run() {
      try {
        long start = System.nanoTime();
        long rows = body.getAsLong();
        metrics.maintenanceRan(name, Duration.ofNanos(System.nanoTime() - start), rows);
        lastRuns.put(name, Instant.now());
        if (databaseAway) {
          databaseAway = false;
          LOG.infof("%s: the database is back", name);
        }
      } catch (RuntimeException e) {
        if (!DatabaseErrors.unavailable(e)) {
          LOG.errorf(e, "%s failed", name);
        } else if (!databaseAway) {
          databaseAway = true;
          LOG.warnf("%s: the database cannot be reached; retrying until it can", name);
        }
      }
    }
  }
}
