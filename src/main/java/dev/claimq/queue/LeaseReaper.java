package dev.claimq.queue;

import dev.claimq.config.ClaimqConfig;
import io.quarkus.scheduler.Scheduled;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

/**
 * Releases claims whose lease ran out, so work held by a crashed or stalled worker goes round
 * again. Every instance runs it; the statement itself makes concurrent runs safe.
 */
@ApplicationScoped
public class LeaseReaper {
  private static final Logger LOG = Logger.getLogger(LeaseReaper.class);

  private final ItemRepository items;
  private final int batchSize;
  private final BackgroundJob job = new BackgroundJob(LeaseReaper.class, "lease reaper");

  LeaseReaper(ItemRepository items, ClaimqConfig config) {
    this.items = items;
    this.batchSize = config.reaper().batchSize();
  }

  @Scheduled(
      identity = "lease-reaper",
      every = "${claimq.reaper.interval}",
      concurrentExecution = Scheduled.ConcurrentExecution.SKIP,
      // Not while starting or shutting down: the connection pool may already be closed.
      skipExecutionIf = Scheduled.ApplicationNotRunning.class)
  void releaseExpiredLeases() {
    job.run(
        () -> {
          int released;
          do {
            released = items.reapExpiredLeases(batchSize); // one statement, its own transaction
            if (released > 0) {
              LOG.infof("released %d expired claims", released);
            }
          } while (released == batchSize);
        });
  }
}
