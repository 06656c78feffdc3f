package dev.claimq.maintenance;

import dev.claimq.config.ClaimqConfig;
import dev.claimq.store.ItemRepository;
import dev.claimq.telemetry.QueueMetrics;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Map;
import org.jboss.logging.Logger;

/**
 * Releases claims whose lease ran out, so work held by a crashed or stalled worker goes round
 * again.
 */
@ApplicationScoped
public class LeaseReaper {
  private static final Logger LOG = Logger.getLogger(LeaseReaper.class);

  private final ItemRepository items;
  private final QueueMetrics metrics;
  private final int batchSize;

  LeaseReaper(ItemRepository items, QueueMetrics metrics, ClaimqConfig config) {
    this.items = items;
    this.metrics = metrics;
    this.batchSize = config.reaper().batchSize();
  }

  /**
   * Releases expired claims a batch at a time (each its own transaction) until one is short;
   * returns how many.
   */
  public int releaseExpiredLeases() {
    int total = 0;
    int released;
    do {
      Map<String, Integer> byQueue = items.reapExpiredLeases(batchSize);
      byQueue.forEach(metrics::leasesExpired);
      released = byQueue.values().stream().mapToInt(Integer::intValue).sum();
      if (released > 0) {
        LOG.infof("released %d expired claims", released);
      }
      total += released;
    } while (released == batchSize);
    return total;
  }
}
