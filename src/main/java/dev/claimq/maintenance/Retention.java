package dev.claimq.maintenance;

import dev.claimq.config.ClaimqConfig;
import dev.claimq.store.ItemRepository;
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
  private final ClaimqConfig.Retention config;

  Retention(ItemRepository items, ClaimqConfig config) {
    this.items = items;
    this.config = config.retention();
  }

  /** Prunes until a batch comes back short (or a bounded number of batches); returns the count. */
  public int prune() {
    long keepSeconds = config.keepFinished().toSeconds();
    int total = 0;
    for (int batch = 0; batch < MAX_BATCHES_PER_RUN; batch++) {
      int deleted =
          items.pruneFinished(keepSeconds, config.batchSize()); // each batch commits alone
      total += deleted;
      if (deleted < config.batchSize()) {
        break;
      }
    }
    if (total > 0) {
      LOG.infof("pruned %d finished items older than %d s", total, keepSeconds);
    }
    return total;
  }
}
