package dev.claimq.queue;

import org.jboss.logging.Logger;

/**
 * Runs a scheduled job's body so that a database outage is one warning when it starts and one line
 * when it ends, not a stack trace every second; anything else is logged as an error.
 */
final class BackgroundJob {
  private final Logger log;
  private final String name;
  private volatile boolean databaseAway;

  BackgroundJob(Class<?> owner, String name) {
    this.log = Logger.getLogger(owner);
    this.name = name;
  }

  void run(Runnable body) {
    try {
      body.run();
      if (databaseAway) {
        databaseAway = false;
        log.infof("%s: the database is back", name);
      }
    } catch (RuntimeException e) {
      if (!DatabaseErrors.unavailable(e)) {
        log.errorf(e, "%s failed", name);
      } else if (!databaseAway) {
        databaseAway = true;
        log.warnf("%s: the database cannot be reached; retrying until it can", name);
      }
    }
  }
}
