package dev.claimq.queue;

import dev.claimq.config.ClaimqConfig;
import io.quarkus.scheduler.Scheduled;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

/**
 * Deletes done and cancelled items once they are older than claimq.retention.keep-finished, in
 * small batches, so the table (and every claim's index scan) stays the size of the live work.
 */
@ApplicationScoped
public class Retention {
  private static final Logger LOG = Logger.getLogger(Retention.class);
  private static final int MAX_BATCHES_PER_RUN = 100;

  private final ItemRepository items;
  private final long keepSeconds;
  private final int batchSize;
  private final BackgroundJob job = new BackgroundJob(Retention.class, "retention");

  Retention(ItemRepository items, ClaimqConfig config) {
    this.items = items;
    this.keepSeconds = config.retention().keepFinished().toSeconds();
    this.batchSize = config.retention().batchSize();
  }

  @Scheduled(
      identity = "retention",
      every = "${claimq.retention.interval}",
      delayed = "10s",
      concurrentExecution = Scheduled.ConcurrentExecution.SKIP,
      // Not while starting or shutting down: the connection pool may already be closed.
      skipExecutionIf = Scheduled.ApplicationNotRunning.class)
  void run() {
    job.run(this::prune);
  }

  /** Prunes until a batch comes back short (or a bounded number of batches); returns the count. */
  public int prune() {
    int total = 0;
    for (int batch = 0; batch < MAX_BATCHES_PER_RUN; batch++) {
      int deleted = items.pruneFinished(keepSeconds, batchSize); // each batch commits alone
      total += deleted;
      if (deleted < batchSize) {
        break;
      }
    }
    if (total > 0) {
      LOG.infof("pruned %d finished items older than %d s", total, keepSeconds);
    }
    return total;
  }
}
