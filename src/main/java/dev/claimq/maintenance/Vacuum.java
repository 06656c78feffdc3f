package dev.claimq.maintenance;

import dev.claimq.config.ClaimqConfig;
import dev.claimq.store.ItemRepository;
import dev.claimq.telemetry.LogText;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

/**
 * Vacuums the item table as soon as enough dead rows pile up. Every claim leaves a dead entry at
 * the front of the claim index, and claim-next reads that index from the front, so until a VACUUM
 * removes them each claim steps over all of them: after 300,000 claims, 1,800 index pages and 6 ms
 * a claim; after a VACUUM that took half a second, 6 pages and 0.1 ms. Autovacuum looks at each
 * database once a minute by default, which at thousands of claims a second is far too late; this
 * job looks every few seconds and costs one read of PostgreSQL's statistics when there is nothing
 * to do. Autovacuum still runs as well.
 */
@ApplicationScoped
public class Vacuum {
  private static final Logger LOG = Logger.getLogger(Vacuum.class);

  private final ItemRepository items;
  private final ClaimqConfig.Vacuum config;

  /** Whether the last VACUUM found the dead rows held by an old snapshot; said once a change. */
  private volatile boolean held;

  /** Whether the last look found that this role may vacuum the table; said once a change. */
  private volatile boolean permitted = true;

  Vacuum(ItemRepository items, ClaimqConfig config) {
    this.items = items;
    this.config = config.vacuum();
  }

  /**
   * Vacuums the item table when it has claimq.vacuum.dead-rows dead rows; returns the dead rows it
   * found when it did, 0 when it did not.
   */
  public long vacuumIfNeeded() {
    long dead = items.deadRows();
    if (dead < config.deadRows()) {
      return 0;
    }
    if (!permitted()) {
      return 0;
    }
    long runs = items.vacuums();
    long start = System.nanoTime();
    items.vacuum();
    LOG.debugf(
        "vacuumed the item table (%d dead rows) in %d ms",
        dead, (System.nanoTime() - start) / 1_000_000);
    // Judged only when the statistics show that it ran: SKIP_LOCKED skips the table while
    // autovacuum is at it, and before PostgreSQL 15 its figures arrive later.
    if (items.vacuums() > runs) {
      judge(dead, items.deadRows());
    }
    return dead;
  }

  /**
   * After a VACUUM: when it left most dead rows where they were, something holds the oldest
   * snapshot back (a transaction left open, a replication slot), and claims slow down until it
   * goes. Said once, naming the session if one is seen, and said again only after a VACUUM has
   * removed most of its dead rows since.
   */
  private void judge(long before, long left) {
    if (left * 2 < before) {
      if (held) {
        held = false;
        LOG.info("VACUUM removes the item table's dead rows again");
      }
    } else if (left * 5 >= before * 4 && !held) {
      held = true;
      LOG.warnf(
          "VACUUM left %d of the item table's %d dead rows: a snapshot older than they are holds"
              + " them (%s), and claims slow down until it goes",
          left,
          before,
          items
              .oldestSnapshot()
              // Its application name is the client's own text.
              .map(
                  session ->
                      "the oldest in this database is the session of " + LogText.oneLine(session))
              .orElse(
                  "none this role can see holds one: another role's session, a replication slot"
                      + " or a prepared transaction"));
    }
  }

  /**
   * Whether the role may VACUUM the table. PostgreSQL would skip it with a warning in the server's
   * log alone, each time, while the dead rows pile up: here it is said once, and the job waits.
   */
  private boolean permitted() {
    boolean now = items.mayVacuum();
    if (now != permitted) {
      if (now) {
        LOG.info("the item table may be vacuumed again by this role; the service vacuums it");
      } else {
        LOG.warn(
            "this database role may not VACUUM the item table (it owns neither the table nor"
                + " the database, and is no superuser): the service does not vacuum it, and dead"
                + " rows slow claims until autovacuum comes (README, Database privileges)");
      }
      permitted = now;
    }
    return now;
  }
}
