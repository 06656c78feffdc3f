package dev.claimq.maintenance;

import dev.claimq.config.ClaimqConfig;
import dev.claimq.store.DatabaseErrors;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.Scheduler;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import java.util.Set;
import org.jboss.logging.Logger;

/**
 * The one skeleton the background jobs share. Every instance runs each job on its interval (their
 * statements make concurrent runs safe), one run at a time, never while the service starts or stops
 * (the connection pool may be closed), and a database outage is one warning when it starts and one
 * line when it ends, not a stack trace every run. The jobs themselves only say what one run does.
 */
@Singleton
class MaintenanceSchedule {
  // The values Quarkus's own @Scheduled(every) takes for "never".
  private static final Set<String> OFF = Set.of("off", "disabled");

  void start(
      @Observes StartupEvent started,
      Scheduler scheduler,
      ClaimqConfig config,
      LeaseReaper reaper,
      Retention retention,
      Vacuum vacuum) {
    schedule(
        scheduler, "lease reaper", config.reaper().interval(), "0s", reaper::releaseExpiredLeases);
    schedule(scheduler, "retention", config.retention().interval(), "10s", retention::prune);
    if (config.vacuum().enabled()) {
      String interval = config.vacuum().interval();
      schedule(scheduler, "vacuum", interval, interval, vacuum::vacuumIfNeeded);
    }
  }

  private static void schedule(
      Scheduler scheduler, String name, String interval, String firstDelay, Runnable run) {
    if (OFF.contains(interval)) {
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
  private static final class Job {
    private static final Logger LOG = Logger.getLogger(MaintenanceSchedule.class);

    private final String name;
    private final Runnable body;
    private volatile boolean databaseAway;

    Job(String name, Runnable body) {
      this.name = name;
      this.body = body;
    }

    void run() {
      try {
        body.run();
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
