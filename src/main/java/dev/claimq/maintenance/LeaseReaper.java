package dev.claimq.maintenance;

import dev.claimq.config.ClaimqConfig;
import dev.claimq.store.ItemRepository;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

/**
 * Releases claims whose lease ran out, so work held by a crashed or stalled worker goes round
 * again.
 */
@ApplicationScoped
public class LeaseReaper {
  private static final Logger LOG = Logger.getLogger(LeaseReaper.class);

  private final ItemRepository items;
  private final int batchSize;

  LeaseReaper(ItemRepository items, ClaimqConfig config) {
    this.items = items;
    this.batchSize = config.reaper().batchSize();
  }

  /** Releases expired claims a batch at a time (each its own transaction) until one is short. */
  public void releaseExpiredLeases() {
    int released;
    do {
      released = items.reapExpiredLeases(batchSize);
      if (released > 0) {
        LOG.infof("released %d expired claims", released);
      }
    } while (released == batchSize);
  }
}
