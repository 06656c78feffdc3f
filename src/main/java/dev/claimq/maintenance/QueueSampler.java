package dev.claimq.maintenance;

import dev.claimq.store.ItemRepository;
import dev.claimq.telemetry.QueueGauges;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * Samples the queues' live counts for the gauges, in the background, so that a scrape never touches
 * the database. One statement over the live states' indexes; see queue-stats.
 */
@ApplicationScoped
public class QueueSampler {
  private final ItemRepository items;
  private final QueueGauges gauges;

  QueueSampler(ItemRepository items, QueueGauges gauges) {
    this.items = items;
    this.gauges = gauges;
  }

  /** Takes one sample; returns how many queues it saw. */
  public long sample() {
    var queues = items.queueStats();
    gauges.show(queues);
    return queues.size();
  }
}
