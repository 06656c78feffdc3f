package dev.claimq.maintenance;

import dev.claimq.config.ClaimqConfig;
import dev.claimq.store.ItemRepository;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

/**
 * Makes tombstones of done and cancelled items once they are older than
 * claimq.retention.keep-finished, in small batches, so the table (and every claim's index scan)
 * stays near the size of the live work while their dedupe keys keep refusing duplicate work; and
 * deletes tombstones past claimq.retention.keep-keys.
 */
@ApplicationScoped
public class Retention {
  private static final Logger LOG = Logger.getLogger(Retention.class);
  private static final int MAX_BATCHES_PER_RUN = 100;

  private final ItemRepository items;
  private final ClaimqConfig.Retention config;
  // null: forever.
  private final Long keepKeysSeconds;

  Retention(ItemRepository items, ClaimqConfig config) {
    this.items = items;
    this.config = config.retention();
    String keepKeys = this.config.keepKeys().strip();
    this.keepKeysSeconds =
        keepKeys.equalsIgnoreCase("forever")
            ? null
            : io.quarkus.runtime.configuration.DurationConverter.parseDuration(keepKeys)
                .toSeconds();
  }

  /**
   * Makes tombstones of finished items past their keep time, then forgets tombstones past the keys'
   * keep time, each until a batch comes back short (or a bounded number of batches); returns how
   * many items became tombstones.
   */
  public int prune() {
    long keepSeconds = config.keepFinished().toSeconds();
    int slimmed = batches(() -> items.pruneFinished(keepSeconds, config.batchSize()));
    if (slimmed > 0) {
      LOG.infof("made tombstones of %d finished items older than %d s", slimmed, keepSeconds);
    }
    if (keepKeysSeconds != null) {
      int forgotten = batches(() -> items.forgetKeys(keepKeysSeconds, config.batchSize()));
      if (forgotten > 0) {
        LOG.infof("forgot %d dedupe keys older than %d s", forgotten, keepKeysSeconds);
      }
    }
    return slimmed;
  }

  private int batches(java.util.function.IntSupplier batch) {
    int total = 0;
    for (int round = 0; round < MAX_BATCHES_PER_RUN; round++) {
      int done = batch.getAsInt(); // each batch commits alone
      total += done;
      if (done < config.batchSize()) {
        break;
      }
    }
    return total;
  }
}
