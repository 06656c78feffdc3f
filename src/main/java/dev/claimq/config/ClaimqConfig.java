package dev.claimq.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import io.smallrye.config.WithName;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.Pattern;
import java.time.Duration;
import org.hibernate.validator.constraints.time.DurationMin;

/**
 * Every claimq knob, typed. Each one is also settable as an env var, e.g.
 * CLAIMQ_LEASE_DEFAULT_DURATION.
 */
@ConfigMapping(prefix = "claimq")
public interface ClaimqConfig {

  /** The PostgreSQL schema that holds claimq's tables, so claimq can share a database. */
  @WithDefault("claimq")
  // 56 at most, not PostgreSQL's 63: the instances of a schema signal each other on the channel
  // claimq.<schema>, and a channel name is held to 63 bytes (a longer one failed every NOTIFY).
  @Pattern(
      regexp = "[a-z_][a-z0-9_]{0,55}",
      message =
          "must be a PostgreSQL name in lower case: a letter or '_', then letters, digits or '_',"
              + " 56 at most (its NOTIFY channel, claimq.<schema>, must fit in 63)")
  String schema();

  Auth auth();

  Limits limits();

  Lease lease();

  Retry retry();

  Reaper reaper();

  Retention retention();

  @WithName("long-poll") // so that a refusal of its settings names them as they are set
  LongPoll longPoll();

  Vacuum vacuum();

  Metrics metrics();

  Database database();

  Mcp mcp();

  /**
   * Bounds for the statements that may legitimately outlast the pool's own (statement_timeout 4s
   * and the driver's socketTimeout 6s, in application.properties, which keep every other request
   * within 10 s even when the database cannot be reached). Each statement under one of these is
   * cancelled by the server past it, and the driver waits 2 s longer for the network.
   */
  interface Database {
    /**
     * Batches of over 100 entries (enqueue, complete, fail; a smaller one, and so every claim
     * batch, has the pool's bounds), an operator's action on many items and the queue sampler's
     * counts: their work grows with their input. Such a request may take this long (plus 2 s) to
     * answer 503 while the database cannot be reached.
     */
    @WithDefault("15s")
    @DurationMin(seconds = 1)
    Duration longStatementTimeout();

    /** Retention and vacuum, which may run long on a large table; background work only. */
    @WithDefault("10m")
    @DurationMin(seconds = 1)
    Duration maintenanceTimeout();

    /**
     * How often the schema's history is read for a migration applied after this instance started (a
     * newer release's): from then on this instance refuses every request, until it is stopped.
     */
    @WithDefault("1s")
    @Every
    String schemaWatchInterval();
  }

  interface Metrics {
    /**
     * How many queues get a label of their own; the rest are reported together as {@code _other},
     * so a service with many queues cannot swamp the metrics store.
     */
    @WithDefault("100")
    @Min(0)
    int maxQueues();

    /**
     * How often each instance samples the queues' live counts for the gauges (one statement over
     * the live states' partial indexes), so a scrape reads memory and costs the same however large
     * the table.
     */
    @WithDefault("5s")
    @Every
    String sampleInterval();
  }

  @KeysWhenEnabled
  interface Auth {
    /** Off only where the network itself keeps strangers out; the log says so loudly. */
    @WithDefault("true")
    boolean enabled();

    /**
     * The keys, comma-separated, each {@code name:roles:queues:sha256} (roles and queues joined by
     * '+', queues '*' for all); MintKey prints one.
     */
    java.util.Optional<java.util.List<String>> keys();
  }

  interface Limits {
    /** The largest request body accepted; larger ones get 413. */
    @WithDefault("1048576")
    @Min(1)
    long bodyBytes();

    /** The largest item payload accepted (its JSON text in UTF-8); larger ones get 413. */
    @WithDefault("262144")
    @Min(1)
    int payloadBytes();
  }

  interface Lease {
    /** How long a claim lasts when the worker does not say. */
    @WithDefault("60s")
    @Seconds(max = 43_200)
    Duration defaultDuration();

    /** How often one item's claim may be released (handed back unused) before release is 409. */
    @WithDefault("10")
    @Min(0)
    @Max(1_000)
    int maxReleases();
  }

  @BaseWithinCap
  interface Retry {
    /** Attempts an item gets when the agent does not say. */
    @WithDefault("5")
    @Min(1)
    @Max(100)
    int defaultMaxAttempts();

    /** Delay before the first retry; it doubles on each further attempt. */
    @WithDefault("10s")
    @Seconds(max = 86_400)
    Duration backoffBase();

    /** The longest delay between two attempts. */
    @WithDefault("1h")
    @Seconds(max = 604_800)
    Duration backoffCap();

    /**
     * Leases expired in a row after which an item is failed at once as a crash loop, attempts left
     * or not: a payload that kills its worker stops taking workers down.
     */
    @WithDefault("3")
    @Min(1)
    @Max(100)
    int crashLoopAfter();

    /**
     * What happens to an item whose attempt declared a send intent and then ended without a
     * complete: retry (its next claim says possiblySent) or hold (failed, for a human).
     */
    @WithDefault("retry")
    OnUnknownOutcome onUnknownOutcome();
  }

  /** The choices of claimq.retry.on-unknown-outcome, and of a queue policy's onUnknownOutcome. */
  enum OnUnknownOutcome {
    /** Claim it again; the next claim says possiblySent, so the worker asks the provider first. */
    RETRY,
    /** Fail it with the reason "outcome unknown", for a human: never resent by itself. */
    HOLD;

    public String wireName() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  interface LongPoll {
    /**
     * How often a parked claim looks again even without a signal: bounds the delay for items that
     * become due later (backoff, runAt) or whose signal was lost.
     */
    @WithDefault("1s")
    @Every
    String fallbackInterval();

    /**
     * Claims with a wait (claims and finishes with next) one key may have in progress on an
     * instance; past that, a claim that finds nothing due answers 503 at once instead of waiting.
     */
    @WithDefault("5000")
    @Min(1)
    @Max(1_000_000)
    int maxWaitingPerKey();
  }

  interface Mcp {
    /**
     * A key holds at most 100 MCP sessions on an instance. At that bound, an initialize ends the
     * key's least recently used session with no request or stream in progress if it has been idle
     * this long (a client that closed without DELETE leaves its session open until the extension's
     * 30-minute idle timeout), and is refused (429) if none has. Under 30 minutes, or the extension
     * would end the session first.
     */
    @WithDefault("5m")
    @Seconds(max = 1799)
    Duration reclaimIdleSessionAfter();
  }

  interface Retention {
    /**
     * How long done and cancelled items are kept whole. After that each becomes a tombstone: its
     * payload, attempts and actions go, its dedupe key stays (see keepKeys).
     */
    @WithDefault("7d")
    @Seconds(min = 0)
    Duration keepFinished();

    /**
     * How long tombstones keep their dedupe keys, after which a key can name new work again: a
     * duration such as 400d, or forever.
     */
    @WithDefault("400d")
    @Every(
        never = "forever",
        zero = true,
        message = "must be a duration (such as 30d or PT720H) of 0 or more, or forever")
    String keepKeys();

    /** How often old finished items are looked for. */
    @WithDefault("1m")
    @Every
    String interval();

    /** Items deleted per statement, so pruning never holds long locks. */
    @WithDefault("1000")
    @Min(1)
    @Max(100_000)
    int batchSize();
  }

  interface Vacuum {
    /**
     * Whether the service vacuums the item table itself once claimq.vacuum.dead-rows dead rows pile
     * up, rather than leaving it all to autovacuum's next round (up to a minute away by default).
     */
    @WithDefault("true")
    boolean enabled();

    /** How often the item table's dead rows are counted (a read of PostgreSQL's statistics). */
    @WithDefault("5s")
    @Every
    String interval();

    /** Dead rows (each claim and each finish leaves one) that start a VACUUM of the item table. */
    @WithDefault("20000")
    @Min(1)
    long deadRows();
  }

  interface Reaper {
    /** How often expired leases are looked for; an expired claim is released within this. */
    @WithDefault("1s")
    @Every
    String interval();

    /** The most expired claims released by one statement. */
    @WithDefault("500")
    @Min(1)
    @Max(100_000)
    int batchSize();
  }
}
