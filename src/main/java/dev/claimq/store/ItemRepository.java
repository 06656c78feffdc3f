package dev.claimq.store;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.claimq.config.ClaimqConfig;
import io.quarkus.hibernate.orm.panache.PanacheRepository;
import io.quarkus.panache.common.Parameters;
import io.quarkus.panache.common.Sort;
import io.quarkus.runtime.Startup;
import jakarta.enterprise.context.ApplicationScoped;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import javax.sql.DataSource;

/**
 * Owns every statement on items. Each state change is one conditional statement whose answer is the
 * row and whether this call changed it, never a read followed by a write; all times come from the
 * database clock. The statements are written whole in {@code db/item.sql}, each with its
 * why-comment, and taken from there by name when the service starts.
 *
 * <p>They run through {@link Sql}, plain JDBC in autocommit: each is complete on its own, so the
 * workers' and agents' calls need neither an ORM session nor a JTA transaction, which cut the
 * service's CPU per drained item about fivefold (docs/performance.md). Panache keeps what it is
 * good at, operators' filtered, keyset-paged browsing of items and their history.
 *
 * <p>Why {@link Sql} and not Jdbi: what Jdbi would bring, a {@code :name} lexer, binding and row
 * mapping, is here a lexer of about a hundred lines, a bind loop and {@link EntityRows}, which
 * reads rows by the entity's own mapping (Jdbi would want a second one). What we need besides,
 * named blocks in one file checked against their callers at start, Jdbi does not do: its classpath
 * locator reads one statement per file. So Jdbi would add a library and its ANTLR runtime for the
 * reader to learn, and this class would not get shorter.
 */
@ApplicationScoped
@Startup // the statements are checked against this class when the service starts, not on first use
public class ItemRepository implements PanacheRepository<Item>, FinishStatements {

  /** A holder's complete that finished the item, and the claim of its queue's next item, if any. */
  public record HeldAndNext(Changed finished, Optional<Item> next) {}

  /**
   * The row a conditional statement answered with, whether this call changed it, and, for a
   * complete, whether it was recorded as a late success instead. For a finish that changed nothing,
   * lastOutcome is how the item's latest attempt ended (attempt.outcome; null when it is open, or
   * the statement does not say): what tells a repeated finish from another finish of the same
   * claim; for a fail or a release, how the report's own claim's attempt ended instead (found by
   * its token), as the item may have been claimed again since. For a fail, lastSentUnknown is that
   * attempt's sent_unknown: whether it was failed not knowing if the provider acted (false when the
   * statement does not say); attemptError, the reason that attempt keeps (null when not said).
   */
  public record Changed(
      boolean changed,
      boolean late,
      Item item,
      String lastOutcome,
      boolean lastSentUnknown,
      String attemptError) {
    Changed(boolean changed, Item item) {
      this(changed, false, item, null);
    }

    Changed(boolean changed, boolean late, Item item, String lastOutcome) {
      this(changed, late, item, lastOutcome, false, null);
    }

    Changed(boolean changed, boolean late, Item item, String lastOutcome, boolean lastSentUnknown) {
      this(changed, late, item, lastOutcome, lastSentUnknown, null);
    }

    /**
     * A worker's report refused with the item still sending under the report's own token: what the
     * report's UPDATE matched in its snapshot, and so, when it changed nothing, that snapshot from
     * before a change the UPDATE waited for (item.sql, at the top), unless a release's limit
     * refused it. A token is issued once and its claim ends once, so the item is never so again.
     */
    public boolean outdated(String token) {
      return !changed && !late && item.state == ItemState.SENDING && token.equals(item.claimToken);
    }
  }

  /**
   * The row that holds an enqueue's key, whether this enqueue inserted it, and else the first of
   * the enqueue's terms it does not match (null: a replay of the same work).
   */
  public record KeyHolder(boolean inserted, String differs, Item item) {}

  private static final SqlFile FILE = SqlFile.load("db/item.sql");
  private static final EntityRows<Item> ITEMS = EntityRows.of(Item.class);
  private static final EntityRows<QueuePolicy> POLICIES = EntityRows.of(QueuePolicy.class);
  private static final EntityRows<QueueAction> QUEUE_ACTION_ROWS = EntityRows.of(QueueAction.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  // Package-private: RoundTripsTest counts the round trips of this very statement.
  static final Sql ENQUEUE =
      FILE.take(
          "enqueue",
          "queue",
          "dedupeKey",
          "payload",
          "priority",
          "maxAttempts",
          "defaultMaxAttempts",
          "runAt",
          "enqueuedBy",
          "traceparent");
  private static final Sql ENQUEUE_BATCH =
      FILE.take("enqueue-batch", "queue", "batch", "defaultMaxAttempts", "enqueuedBy");
  private static final Sql CLAIM =
      FILE.take("claim", "id", "token", "worker", "leaseSeconds", "defaultLeaseSeconds");
  private static final Sql CLAIM_NEXT =
      FILE.take("claim-next", "queue", "token", "worker", "leaseSeconds", "defaultLeaseSeconds");
  private static final Sql CLAIM_NEXT_BATCH =
      FILE.take(
          "claim-next-batch",
          "queue",
          "max",
          "tokens",
          "worker",
          "leaseSeconds",
          "defaultLeaseSeconds");
  private static final Sql HEARTBEAT = FILE.take("heartbeat", "id", "token", "leaseSeconds");
  private static final Sql COMPLETE_HELD =
      FILE.take("complete-held", "id", "token", "externalRef", "actor");
  private static final Sql COMPLETE = FILE.take("complete", "id", "token", "externalRef", "actor");
  private static final Sql COMPLETE_HELD_CLAIM_NEXT =
      FILE.take(
          "complete-held-claim-next",
          "id",
          "token",
          "externalRef",
          "actor",
          "nextToken",
          "worker",
          "leaseSeconds",
          "defaultLeaseSeconds");
  private static final Sql FAIL =
      FILE.take(
          "fail",
          "id",
          "token",
          "error",
          "retryable",
          "sentUnknown",
          "delays",
          "defaultOnUnknownOutcome",
          "actor");
  private static final Sql COMPLETE_BATCH = FILE.take("complete-batch", "batch", "actor");
  private static final Sql FAIL_BATCH =
      FILE.take("fail-batch", "batch", "defaultOnUnknownOutcome", "actor");
  private static final Sql RETRY =
      FILE.take("retry", "id", "force", "defaultLeaseSeconds", "actor", "conditional", "versions");
  private static final Sql CANCEL = FILE.take("cancel", "id", "actor", "conditional", "versions");
  private static final Sql INTENT = FILE.take("intent", "id", "token");
  private static final Sql RELEASE =
      FILE.take("release", "id", "token", "delaySeconds", "defaultMaxReleases", "actor");
  private static final Sql RESOLVE =
      FILE.take("resolve", "id", "externalRef", "note", "actor", "conditional", "versions");
  private static final Sql APPROVE =
      FILE.take("approve", "id", "note", "actor", "conditional", "versions");
  private static final Sql REJECT =
      FILE.take("reject", "id", "reason", "actor", "conditional", "versions");
  private static final Sql POLICY = FILE.take("policy", "queue");
  private static final Sql SET_POLICY =
      FILE.take(
          "set-policy",
          "queue",
          "maxAttempts",
          "leaseSeconds",
          "crashLoopAfter",
          "onUnknownOutcome",
          "maxReleases",
          "providerKeyTtlSeconds",
          "backoffBaseSeconds",
          "backoffCapSeconds",
          "requireApproval",
          "policy",
          "actor",
          "conditional",
          "versions");
  private static final Sql BACKOFF_OF = FILE.take("backoff-of", "ids");
  private static final Sql SET_PAUSED =
      FILE.take("set-paused", "queue", "paused", "actor", "conditional", "versions");
  private static final Sql QUEUE_ACTIONS = FILE.take("queue-actions", "queue");
  private static final Sql REAP_EXPIRED_LEASES =
      FILE.take(
          "reap-expired-leases", "batchSize", "defaultOnUnknownOutcome", "defaultCrashLoopAfter");
  private static final Sql PRUNE_FINISHED = FILE.take("prune-finished", "keepSeconds", "batchSize");
  private static final Sql FORGET_KEYS = FILE.take("forget-keys", "keepKeysSeconds", "batchSize");
  private static final Sql FIND_BY_ID = FILE.take("find-by-id", "id");
  private static final Sql QUEUES_BY_ID = FILE.take("queues-by-id", "ids");
  private static final Sql QUEUE_STATS = FILE.take("queue-stats");
  private static final Sql QUEUE_THROUGHPUT = FILE.take("queue-throughput");
  private static final Sql SEARCH = FILE.take("search", "id", "text", "queues");
  private static final Sql ACT_ON_MATCHING =
      FILE.take(
          "act-on-matching",
          "action",
          "state",
          "queues",
          "reason",
          "updatedAfter",
          "updatedBefore",
          "defaultLeaseSeconds",
          "limit",
          "previewTag",
          "note",
          "actor");
  private static final Sql PREVIEW_MATCHING =
      FILE.take(
          "preview-matching",
          "action",
          "state",
          "queues",
          "reason",
          "updatedAfter",
          "updatedBefore",
          "defaultLeaseSeconds",
          "limit");
  private static final Sql DEAD_ROWS = FILE.take("dead-rows");
  private static final Sql REFUSES_WRITES = FILE.take("refuses-writes");
  private static final Sql MIGRATED_SINCE = FILE.take("migrated-since", "rank");
  private static final Sql VACUUM = FILE.take("vacuum");
  private static final Sql MAY_VACUUM = FILE.take("may-vacuum");
  private static final Sql OLDEST_SNAPSHOT = FILE.take("oldest-snapshot");
  private static final Sql VACUUMS = FILE.take("vacuums");
  private static final Sql FIND_BY_DEDUPE_KEY =
      FILE.take("find-by-dedupe-key", "queue", "dedupeKey");
  private static final Sql ENQUEUED_BY =
      FILE.take("enqueued-by", "enqueuedBy", "state", "queues", "beforeId", "limit");

  static {
    FILE.requireAllTaken();
  }

  /**
   * The most entries a batch may have and still run under the pool's own bounds: a claim batch's
   * whole range. A statement of 100 entries takes milliseconds, so 4 s covers it hundreds of times
   * over, and raising the bound costs two round trips (SET and RESET) on every call of the hot
   * batch paths; only the bigger batches, up to 500 entries, pay them.
   */
  public static final int POOL_BOUNDED_ENTRIES = 100;

  private final DataSource dataSource;
  // The service's defaults, for what neither the request nor the queue's policy says.
  private final int defaultMaxAttempts;
  private final int defaultLeaseSeconds;
  private final int defaultCrashLoopAfter;
  private final String defaultOnUnknownOutcome;
  private final int defaultMaxReleases;
  // Bounds of statements that may outlast the pool's (ClaimqConfig.Database).
  private final java.time.Duration longStatement;

  private final java.time.Duration maintenance;

  ItemRepository(DataSource dataSource, ClaimqConfig config) {
    this.dataSource = dataSource;
    this.defaultMaxAttempts = config.retry().defaultMaxAttempts();
    this.defaultLeaseSeconds = (int) config.lease().defaultDuration().toSeconds();
    this.defaultCrashLoopAfter = config.retry().crashLoopAfter();
    this.defaultOnUnknownOutcome = config.retry().onUnknownOutcome().wireName();
    this.defaultMaxReleases = config.lease().maxReleases();
    this.longStatement = config.database().longStatementTimeout();
    this.maintenance = config.database().maintenanceTimeout();
  }

  /** A batch statement's bound: the pool's own (null) up to {@link #POOL_BOUNDED_ENTRIES}. */
  java.time.Duration batchBound(int entries) {
    return entries <= POOL_BOUNDED_ENTRIES ? null : longStatement;
  }

  /**
   * Inserts the item unless its (queue, dedupe key) is taken, and answers with the key's holder.
   * Empty when the holder is not visible to this statement (it committed meanwhile, or was
   * deleted): the caller goes again.
   */
  public Optional<KeyHolder> enqueue(NewItem item) {
    return ENQUEUE
        .on(dataSource)
        .set("queue", item.queue())
        .set("dedupeKey", item.dedupeKey())
        .set("payload", item.payload())
        .set("priority", item.priority())
        .set("maxAttempts", item.maxAttempts())
        .set("defaultMaxAttempts", defaultMaxAttempts)
        .set("runAt", item.runAt())
        .set("enqueuedBy", item.enqueuedBy())
        .set("traceparent", item.traceparent())
        .list(ItemRepository::keyHolder)
        .stream()
        .reduce(ItemRepository::onlyOne);
  }

  /**
   * Enqueues every entry of the batch document whose key is new; answers, by entry position from 1,
   * the row that holds each entry's key. An entry whose holder this statement cannot see is left
   * out.
   */
  public Map<Integer, KeyHolder> enqueueBatch(
      String queue, String batchJson, int entries, String enqueuedBy) {
    Map<Integer, KeyHolder> holders = new HashMap<>();
    ENQUEUE_BATCH
        .on(dataSource)
        .within(batchBound(entries))
        .set("queue", queue)
        .set("batch", batchJson)
        .set("defaultMaxAttempts", defaultMaxAttempts)
        .set("enqueuedBy", enqueuedBy)
        .list(row -> holders.put(row.getInt("ord"), keyHolder(row)));
    return holders;
  }

  /**
   * Claims this item if it is pending, due and its queue not paused; empty when there is no such
   * item. A null lease is the queue policy's, else the service's default.
   */
  public Optional<Changed> claim(long id, String token, String worker, Integer leaseSeconds) {
    return CLAIM
        .on(dataSource)
        .set("id", id)
        .set("token", token)
        .set("worker", worker)
        .set("leaseSeconds", leaseSeconds)
        .set("defaultLeaseSeconds", defaultLeaseSeconds)
        .list(row -> new Changed(row.getBoolean("changed"), claimed(row)))
        .stream()
        .reduce(ItemRepository::onlyOne);
  }

  /** Claims the next due item of the queue; empty when there is none, or the queue is paused. */
  @Override
  public Optional<Item> claimNext(String queue, String token, String worker, Integer leaseSeconds) {
    return claimNext(null, queue, token, worker, leaseSeconds);
  }

  private Optional<Item> claimNext(
      Connection held, String queue, String token, String worker, Integer leaseSeconds) {
    return on(CLAIM_NEXT, held)
        .set("queue", queue)
        .set("token", token)
        .set("worker", worker)
        .set("leaseSeconds", leaseSeconds)
        .set("defaultLeaseSeconds", defaultLeaseSeconds)
        .list(ItemRepository::claimed)
        .stream()
        .reduce(ItemRepository::onlyOne);
  }

  /** Claims up to {@code max} due items of the queue, one token each (a JSON array of them). */
  public List<Item> claimNextBatch(
      String queue, int max, String tokensJson, String worker, Integer leaseSeconds) {
    return CLAIM_NEXT_BATCH
        .on(dataSource)
        .within(batchBound(max))
        .set("queue", queue)
        .set("max", max)
        .set("tokens", tokensJson)
        .set("worker", worker)
        .set("leaseSeconds", leaseSeconds)
        .set("defaultLeaseSeconds", defaultLeaseSeconds)
        .list(ItemRepository::claimed);
  }

  /** Extends the lease of the current claim; empty when there is no such item. */
  public Optional<Changed> heartbeat(long id, String token, Integer leaseSeconds) {
    return latest(
        token,
        () ->
            single(
                HEARTBEAT
                    .on(dataSource)
                    .set("id", id)
                    .set("token", token)
                    .set("leaseSeconds", leaseSeconds)));
  }

  /** Marks the claimed item done; empty when there is no such item. */
  @Override
  public Optional<Changed> complete(long id, String token, String externalRef, String actor) {
    return complete(null, id, token, externalRef, actor);
  }

  /**
   * The holder's complete first (complete-held, the short statement of the common case); only when
   * it changed nothing, complete, which decides every case and says why (item.sql).
   */
  private Optional<Changed> complete(
      Connection held, long id, String token, String externalRef, String actor) {
    Optional<Changed> done = finishing(COMPLETE_HELD, held, id, token, externalRef, actor);
    return done.isPresent()
        ? done
        : latest(token, () -> finishing(COMPLETE, held, id, token, externalRef, actor));
  }

  private Optional<Changed> finishing(
      Sql complete, Connection held, long id, String token, String externalRef, String actor) {
    return on(complete, held)
        .set("id", id)
        .set("token", token)
        .set("externalRef", externalRef)
        .set("actor", actor)
        .list(
            row ->
                new Changed(
                    row.getBoolean("changed"),
                    row.getBoolean("late"),
                    finished(row),
                    row.getString("last_outcome")))
        .stream()
        .reduce(ItemRepository::onlyOne);
  }

  /**
   * The holder's complete and the claim of its queue's next due item in one statement
   * (complete-held-claim-next): empty when this call finished nothing (the item is not this claim's
   * to finish), and then it claimed nothing either.
   */
  public Optional<HeldAndNext> completeHeldAndClaimNext(
      long id,
      String token,
      String externalRef,
      String actor,
      String nextToken,
      String worker,
      Integer leaseSeconds) {
    List<Changed> finished = new ArrayList<>(1);
    List<Item> next = new ArrayList<>(1);
    COMPLETE_HELD_CLAIM_NEXT
        .on(dataSource)
        .set("id", id)
        .set("token", token)
        .set("externalRef", externalRef)
        .set("actor", actor)
        .set("nextToken", nextToken)
        .set("worker", worker)
        .set("leaseSeconds", leaseSeconds)
        .set("defaultLeaseSeconds", defaultLeaseSeconds)
        .list(
            row ->
                row.getBoolean("claimed_next")
                    ? next.add(claimed(row))
                    : finished.add(new Changed(true, finished(row))));
    if (finished.size() > 1 || next.size() > 1 || finished.isEmpty() && !next.isEmpty()) {
      throw new IllegalStateException(
          "complete-held-claim-next answered "
              + finished.size()
              + " finished and "
              + next.size()
              + " claimed rows");
    }
    return finished.stream()
        .findFirst()
        .map(done -> new HeldAndNext(done, next.stream().findFirst()));
  }

  /**
   * Records a failed attempt: back to pending after the schedule's delay for this attempt when
   * retryable and attempts remain, otherwise failed. Empty when there is no such item.
   */
  @Override
  public Optional<Changed> fail(long id, String token, Failure failure, String actor) {
    return fail(null, id, token, failure, actor);
  }

  private Optional<Changed> fail(
      Connection held, long id, String token, Failure failure, String actor) {
    return latest(
        token,
        () ->
            on(FAIL, held)
                .set("id", id)
                .set("token", token)
                .set("error", failure.error())
                .set("retryable", failure.retryable())
                .set("sentUnknown", failure.sentUnknown())
                .set("delays", bigintArray(failure.delays()))
                .set("defaultOnUnknownOutcome", defaultOnUnknownOutcome)
                .set("actor", actor)
                .list(ItemRepository::ownFail)
                .stream()
                .reduce(ItemRepository::onlyOne));
  }

  /** Completes every entry whose token is its item's current claim; answers every named item. */
  public List<Changed> completeBatch(String batchJson, int entries, String actor) {
    return COMPLETE_BATCH
        .on(dataSource)
        .within(batchBound(entries))
        .set("batch", batchJson)
        .set("actor", actor)
        .list(ItemRepository::finishedOrNot);
  }

  /** Records every entry's failure whose token is its item's current claim; answers every item. */
  public List<Changed> failBatch(String batchJson, int entries, String actor) {
    return FAIL_BATCH
        .on(dataSource)
        .within(batchBound(entries))
        .set("batch", batchJson)
        .set("defaultOnUnknownOutcome", defaultOnUnknownOutcome)
        .set("actor", actor)
        .list(ItemRepository::failedOrNot);
  }

  /** Records the current attempt's send intent; empty when there is no such item. */
  public Optional<Changed> intent(long id, String token) {
    return latest(token, () -> single(INTENT.on(dataSource).set("id", id).set("token", token)));
  }

  /** Hands the claim back, due after the delay, while releases remain; empty for no such item. */
  public Optional<Changed> release(long id, String token, long delaySeconds, String actor) {
    return latest(
        token,
        () ->
            RELEASE
                .on(dataSource)
                .set("id", id)
                .set("token", token)
                .set("delaySeconds", delaySeconds)
                .set("defaultMaxReleases", defaultMaxReleases)
                .set("actor", actor)
                .list(
                    row ->
                        new Changed(
                            row.getBoolean("changed"),
                            false,
                            ITEMS.map(row),
                            row.getString("last_outcome")))
                .stream()
                .reduce(ItemRepository::onlyOne));
  }

  /**
   * Marks a failed item done by an operator's word; empty when there is no such item. {@code
   * versions} as for {@link #retry}.
   */
  public Optional<Changed> resolve(
      long id, String externalRef, String note, String actor, long[] versions) {
    return versionedSingle(
        ifMatch(RESOLVE.on(dataSource), versions)
            .set("id", id)
            .set("externalRef", externalRef)
            .set("note", note)
            .set("actor", actor));
  }

  /** The queue's policy as set; empty when none was ever set. */
  public Optional<QueuePolicy> policy(String queue) {
    return POLICY.on(dataSource).set("queue", queue).list(POLICIES).stream().findFirst();
  }

  /**
   * An operator's change of a queue: whether it changed anything (and was recorded), whether the
   * queue is now as the change asked (false only when an If-Match did not match), and the queue's
   * policy after it; empty when the queue has none (a resume of a queue never paused, or settings
   * all null put on a queue never set).
   */
  public record PolicyChange(boolean changed, boolean asRequested, Optional<QueuePolicy> policy) {}

  /**
   * Replaces the queue's settings (null: the service's default), keeping its pause; {@code
   * policyJson} is what the action log records. Settings the queue has already change nothing.
   * {@code versions}, when not null, are the versions the change may be made on (an If-Match).
   */
  public PolicyChange setPolicy(
      QueuePolicy policy, String policyJson, String actor, long[] versions) {
    return ifMatch(SET_POLICY.on(dataSource), versions)
        .set("queue", policy.queue)
        .set("maxAttempts", policy.maxAttempts)
        .set("leaseSeconds", policy.leaseSeconds)
        .set("crashLoopAfter", policy.crashLoopAfter)
        .set("onUnknownOutcome", policy.onUnknownOutcome)
        .set("maxReleases", policy.maxReleases)
        .set("providerKeyTtlSeconds", policy.providerKeyTtlSeconds)
        .set("backoffBaseSeconds", policy.backoffBaseSeconds)
        .set("backoffCapSeconds", policy.backoffCapSeconds)
        .set("requireApproval", policy.requireApproval)
        .set("policy", policyJson)
        .set("actor", actor)
        .list(this::policyChange)
        .stream()
        .findFirst()
        // Unseen by the statement: another request's policy, committed after its snapshot. A
        // conditional change is refused then, since its version was never compared.
        .orElseGet(() -> new PolicyChange(false, versions == null, policy(policy.queue)));
  }

  /**
   * Pauses or resumes the queue's claims; a queue already so changes nothing. {@code versions} as
   * for {@link #setPolicy}.
   */
  public PolicyChange setPaused(String queue, boolean paused, String actor, long[] versions) {
    PolicyChange change = setPausedOnce(queue, paused, actor, versions);
    // Unchanged and not as asked, though unconditional: a queue's first pause, committed after
    // this resume's snapshot, which saw no policy row. Made again, the statement sees it and
    // resumes, so that a 200 never shows the queue otherwise than the request asked.
    if (versions == null && !change.changed() && isPaused(change) != paused) {
      change = setPausedOnce(queue, paused, actor, null);
    }
    return change;
  }

  private static boolean isPaused(PolicyChange change) {
    return change.policy().map(policy -> policy.paused).orElse(false);
  }

  private PolicyChange setPausedOnce(String queue, boolean paused, String actor, long[] versions) {
    return ifMatch(SET_PAUSED.on(dataSource), versions)
        .set("queue", queue)
        .set("paused", paused)
        .set("actor", actor)
        .list(this::policyChange)
        .stream()
        .findFirst()
        // No row: nothing changed, and the policy is read as it is now (one committed after the
        // statement's snapshot, or none at all: a queue that is running).
        .orElseGet(
            () -> {
              Optional<QueuePolicy> now = policy(queue);
              boolean asRequested = now.map(policy -> policy.paused).orElse(false) == paused;
              return new PolicyChange(false, versions == null || asRequested, now);
            });
  }

  private PolicyChange policyChange(ResultSet row) throws SQLException {
    // A row of nulls: the queue has no policy row (set-policy's settings all null, none to keep).
    Optional<QueuePolicy> policy =
        row.getString("queue") == null ? Optional.empty() : Optional.of(POLICIES.map(row));
    return new PolicyChange(row.getBoolean("changed"), row.getBoolean("as_requested"), policy);
  }

  /** A queue's own backoff, base and cap in seconds, either null where it has none. */
  public record QueueBackoff(Integer baseSeconds, Integer capSeconds) {}

  /** The backoff of each item's queue, by item id; unknown ids are left out. */
  public Map<Long, QueueBackoff> backoffOf(Collection<Long> ids) {
    Map<Long, QueueBackoff> backoffs = new HashMap<>();
    if (!ids.isEmpty()) {
      BACKOFF_OF
          .on(dataSource)
          .set("ids", bigintArray(ids.stream().mapToLong(Long::longValue).toArray()))
          .list(
              row ->
                  backoffs.put(
                      row.getLong("id"),
                      new QueueBackoff(
                          row.getObject("backoff_base_seconds", Integer.class),
                          row.getObject("backoff_cap_seconds", Integer.class))));
    }
    return backoffs;
  }

  /** Operators' policy changes, pauses and resumes of the queue, oldest first. */
  public List<QueueAction> queueActions(String queue) {
    return QUEUE_ACTIONS.on(dataSource).set("queue", queue).list(QUEUE_ACTION_ROWS);
  }

  /** An operator's retry's answer: whether it went ahead, and whether past the horizon. */
  public record Retried(boolean changed, boolean pastHorizon, Item item) {}

  /**
   * Moves a failed or cancelled item back to pending, unless the provider's idempotency horizon has
   * passed and it is not forced, or {@code versions} (an If-Match; null for none) do not name the
   * item's version; empty when there is no such item. The item carries its version.
   */
  public Optional<Retried> retry(long id, boolean force, String actor, long[] versions) {
    return ifMatch(RETRY.on(dataSource), versions)
        .set("id", id)
        .set("force", force)
        .set("defaultLeaseSeconds", defaultLeaseSeconds)
        .set("actor", actor)
        .list(
            row ->
                new Retried(
                    row.getBoolean("changed"), row.getBoolean("past_horizon"), versioned(row)))
        .stream()
        .reduce(ItemRepository::onlyOne);
  }

  /**
   * Cancels a pending or failed item; empty when there is no such item. {@code versions} as for
   * {@link #retry}.
   */
  public Optional<Changed> cancel(long id, String actor, long[] versions) {
    return versionedSingle(
        ifMatch(CANCEL.on(dataSource), versions).set("id", id).set("actor", actor));
  }

  /** Moves a held item to pending; empty when there is no such item. */
  public Optional<Changed> approve(long id, String note, String actor, long[] versions) {
    return versionedSingle(
        ifMatch(APPROVE.on(dataSource), versions)
            .set("id", id)
            .set("note", note)
            .set("actor", actor));
  }

  /** Moves a held item to cancelled, with the reason as its last error; empty for no such item. */
  public Optional<Changed> reject(long id, String reason, String actor, long[] versions) {
    return versionedSingle(
        ifMatch(REJECT.on(dataSource), versions)
            .set("id", id)
            .set("reason", reason)
            .set("actor", actor));
  }

  /**
   * Binds an If-Match's versions to a statement that may be conditional: null (no If-Match) makes
   * it unconditional; an empty array lets no change be made.
   */
  private static Sql.Call ifMatch(Sql.Call call, long[] versions) {
    return call.set("conditional", versions != null)
        .set("versions", bigintArray(versions == null ? new long[0] : versions));
  }

  /** A single-row change whose item carries its version. */
  private static Optional<Changed> versionedSingle(Sql.Call call) {
    return call.list(row -> new Changed(row.getBoolean("changed"), versioned(row))).stream()
        .reduce(ItemRepository::onlyOne);
  }

  /**
   * Which items a filtered operator action takes: those the filter matches, newest first, at most
   * {@code limit}; a dry run changes nothing. A {@code previewTag} (null: none) is a dry run's: the
   * action is then made only if the filter picks exactly the items that dry run listed, each
   * unchanged since.
   */
  public record Selection(ItemFilter filter, int limit, boolean dryRun, String previewTag) {}

  /**
   * What a filtered operator action did (or, on a dry run, would do), whether more match, the tag
   * of the items it picked as they were picked, and whether they were the ones its previewTag named
   * (true without one). Nothing changed unless {@code changed}.
   */
  public record Matching(
      List<Item> items, boolean changed, boolean more, String previewTag, boolean asPreviewed) {}

  /** Retries the failed or cancelled items selected. */
  public Matching retryMatching(Selection selection, String actor) {
    return matching("retry", selection, null, actor);
  }

  /** Cancels the pending or failed items selected. */
  public Matching cancelMatching(Selection selection, String actor) {
    return matching("cancel", selection, null, actor);
  }

  /** Approves the held items selected. */
  public Matching approveMatching(Selection selection, String actor) {
    return matching("approve", selection, null, actor);
  }

  /** Rejects the held items selected, with one reason. */
  public Matching rejectMatching(Selection selection, String reason, String actor) {
    return matching("reject", selection, reason, actor);
  }

  /** A row of act-on-matching: an item (null in the row of a selection of none), and the tag. */
  private record Picked(Item item, boolean more, String previewTag, boolean asPreviewed) {}

  private Matching matching(String action, Selection selection, String note, String actor) {
    ItemFilter filter = selection.filter();
    Sql.Call statement =
        (selection.dryRun()
                ? PREVIEW_MATCHING.on(dataSource)
                : ACT_ON_MATCHING
                    .on(dataSource)
                    .set("previewTag", selection.previewTag())
                    .set("note", note)
                    .set("actor", actor))
            .within(longStatement)
            .set("action", action)
            .set("defaultLeaseSeconds", defaultLeaseSeconds)
            .set("state", filter.state().wireName())
            .set("queues", filter.queueArray())
            .set("reason", filter.reason())
            .set("updatedAfter", filter.updatedAfter())
            .set("updatedBefore", filter.updatedBefore())
            .set("limit", selection.limit());
    List<Picked> rows =
        statement.list(
            row ->
                new Picked(
                    row.getObject("id") == null ? null : versioned(row),
                    row.getBoolean("more"),
                    row.getString("preview_tag"),
                    row.getBoolean("as_previewed")));
    Picked tag = rows.get(0); // the statement answers the tag's row even when nothing matches
    return new Matching(
        rows.stream().map(Picked::item).filter(java.util.Objects::nonNull).toList(),
        !selection.dryRun() && tag.asPreviewed(),
        tag.more(),
        tag.previewTag(),
        tag.asPreviewed());
  }

  /** Items whose id, dedupe key, idempotency key or external reference is the text; newest 20. */
  public List<Item> search(String text, Set<String> queues) {
    Long id = text.matches("[1-9][0-9]{0,17}") ? Long.valueOf(text) : null;
    return SEARCH
        .on(dataSource)
        .set("id", id)
        .set("text", text)
        .set("queues", queues.isEmpty() ? null : queues.toArray(String[]::new))
        .list(ITEMS::map);
  }

  /** Per queue, the completes and the fails (retried or final) of the last minute. */
  public Map<String, long[]> throughput() {
    Map<String, long[]> byQueue = new HashMap<>();
    QUEUE_THROUGHPUT
        .on(dataSource)
        .list(
            row ->
                byQueue.put(
                    row.getString("queue"),
                    new long[] {row.getLong("done"), row.getLong("failed")}));
    return byQueue;
  }

  /** Releases up to {@code batchSize} expired claims; returns how many, by queue. */
  public Map<String, Integer> reapExpiredLeases(int batchSize) {
    Map<String, Integer> released = new java.util.TreeMap<>();
    REAP_EXPIRED_LEASES
        .on(dataSource)
        .set("batchSize", batchSize)
        .set("defaultOnUnknownOutcome", defaultOnUnknownOutcome)
        .set("defaultCrashLoopAfter", defaultCrashLoopAfter)
        .list(row -> released.put(row.getString("queue"), row.getInt("released")));
    return released;
  }

  /** Makes tombstones of up to {@code batchSize} done or cancelled items past the keep time. */
  public int pruneFinished(long keepSeconds, int batchSize) {
    return PRUNE_FINISHED
        .on(dataSource)
        .within(maintenance)
        .set("keepSeconds", keepSeconds)
        .set("batchSize", batchSize)
        .list(row -> row.getInt(1))
        .get(0);
  }

  /** Deletes up to {@code batchSize} tombstones older than the keys' keep time. */
  public int forgetKeys(long keepKeysSeconds, int batchSize) {
    return FORGET_KEYS
        .on(dataSource)
        .within(maintenance)
        .set("keepKeysSeconds", keepKeysSeconds)
        .set("batchSize", batchSize)
        .update();
  }

  /** The item as it is now, with its version. */
  public Optional<Item> current(long id) {
    return FIND_BY_ID.on(dataSource).set("id", id).list(ItemRepository::versioned).stream()
        .reduce(ItemRepository::onlyOne);
  }

  /** An item row with its row_version. */
  private static Item versioned(ResultSet row) throws SQLException {
    Item item = ITEMS.map(row);
    item.version = row.getLong("row_version");
    return item;
  }

  /** The queues of these items (which never change), by id; unknown ids are left out. */
  public Map<Long, String> queuesOf(Collection<Long> ids) {
    Map<Long, String> queues = new HashMap<>();
    if (!ids.isEmpty()) {
      QUEUES_BY_ID
          .on(dataSource)
          .set("ids", bigintArray(ids.stream().mapToLong(Long::longValue).toArray()))
          .list(row -> queues.put(row.getLong("id"), row.getString("queue")));
    }
    return queues;
  }

  public List<QueueStats> queueStats() {
    return QUEUE_STATS
        .on(dataSource)
        .within(longStatement)
        .list(
            row -> {
              BigDecimal age = row.getBigDecimal("oldest_due_pending_age_seconds");
              BigDecimal heldAge = row.getBigDecimal("oldest_held_age_seconds");
              return new QueueStats(
                  row.getString("queue"),
                  row.getLong("held"),
                  row.getLong("pending"),
                  row.getLong("sending"),
                  row.getLong("failed"),
                  row.getLong("due_next_minute"),
                  age == null ? null : age.doubleValue(),
                  heldAge == null ? null : heldAge.doubleValue(),
                  row.getBoolean("paused"));
            });
  }

  /** True while the database takes no writes: transactions begin read-only. */
  public boolean refusesWrites() {
    return REFUSES_WRITES.on(dataSource).list(row -> row.getBoolean(1)).get(0);
  }

  /** The newest migration applied after the one at this rank: "version 22 (description)". */
  public Optional<String> migratedSince(long rank) {
    return MIGRATED_SINCE.on(dataSource).set("rank", rank).list(row -> row.getString(1)).stream()
        .findFirst();
  }

  /** Dead rows in the item table, as PostgreSQL's statistics count them. */
  public long deadRows() {
    return DEAD_ROWS.on(dataSource).list(row -> row.getLong(1)).get(0);
  }

  /** Whether the service's role may VACUUM the item table; PostgreSQL skips it otherwise. */
  public boolean mayVacuum() {
    return MAY_VACUUM.on(dataSource).list(row -> row.getBoolean(1)).get(0);
  }

  /** VACUUMs of the item table that finished, as PostgreSQL's statistics count them. */
  public long vacuums() {
    return VACUUMS.on(dataSource).list(row -> row.getLong(1)).get(0);
  }

  /**
   * The session holding the oldest snapshot, as "pid 4711 ('psql', idle in transaction) for 310 s",
   * if any session holds one; a replication slot or a prepared transaction may hold one too.
   */
  public Optional<String> oldestSnapshot() {
    return OLDEST_SNAPSHOT
        .on(dataSource)
        .list(
            row ->
                "pid "
                    + row.getInt(1)
                    + " ('"
                    + row.getString(2)
                    + "', "
                    + row.getString(3)
                    + ") for "
                    + row.getLong(4)
                    + " s")
        .stream()
        .findFirst();
  }

  /** Vacuums the item table (outside any transaction: VACUUM cannot run inside one). */
  public void vacuum() {
    try (Connection connection = dataSource.getConnection()) {
      // A large table may take longer than the pool's statement timeout.
      Sql.Bounds.run(
          connection,
          maintenance,
          () -> {
            try (Statement statement = connection.createStatement()) {
              return statement.execute(VACUUM.positional());
            }
          });
    } catch (SQLException e) {
      throw new Sql.StatementFailedException(e);
    }
  }

  /**
   * Newest first, strictly older than {@code beforeId} when given, in {@code queues} when not
   * empty.
   */
  public List<Item> newestFirst(ItemFilter filter, Long beforeId, int limit) {
    List<String> filters = new ArrayList<>();
    Parameters parameters = new Parameters();
    if (!filter.queues().isEmpty()) {
      filters.add("queue in :queues");
      parameters.and("queues", filter.queues());
    }
    if (filter.state() != null) {
      filters.add("state = :state");
      parameters.and("state", filter.state());
    }
    if (filter.reason() != null) {
      // locate, not like: the operator's text is matched as it is, % and _ included. The null
      // test changes no answer; it lets item_with_reason, the rows that have one, serve it.
      filters.add("lastError is not null and locate(lower(:reason), lower(lastError)) > 0");
      parameters.and("reason", filter.reason());
    }
    if (filter.updatedAfter() != null) {
      filters.add("updatedAt >= :updatedAfter");
      parameters.and("updatedAfter", filter.updatedAfter());
    }
    if (filter.updatedBefore() != null) {
      filters.add("updatedAt < :updatedBefore");
      parameters.and("updatedBefore", filter.updatedBefore());
    }
    if (beforeId != null) {
      filters.add("id < :beforeId");
      parameters.and("beforeId", beforeId);
    }
    Sort newestFirst = Sort.descending("id");
    var query =
        filters.isEmpty()
            ? findAll(newestFirst)
            : find(String.join(" and ", filters), newestFirst, parameters);
    return query.range(0, limit - 1).list();
  }

  public List<Attempt> attempts(long itemId) {
    return getEntityManager()
        .createQuery("from Attempt where itemId = :itemId order by id", Attempt.class)
        .setParameter("itemId", itemId)
        .getResultList();
  }

  public List<ItemAction> actions(long itemId) {
    return getEntityManager()
        .createQuery("from ItemAction where itemId = :itemId order by id", ItemAction.class)
        .setParameter("itemId", itemId)
        .getResultList();
  }

  /** A bigint[] literal: numbers, so nothing in it needs quoting. */
  private static String bigintArray(long[] values) {
    return java.util.Arrays.stream(values)
        .mapToObj(String::valueOf)
        .collect(Collectors.joining(",", "{", "}"));
  }

  /**
   * Runs {@code work}'s statements on one connection in one transaction: committed when it returns,
   * rolled back when it throws. For a finish and the claim that follows it, which then wait for the
   * disk once instead of twice; no transaction spans anything but these statements.
   */
  public <T> T inOneTransaction(Function<FinishStatements, T> work) {
    try (Connection connection = dataSource.getConnection()) {
      connection.setAutoCommit(false);
      try {
        T result = work.apply(new OneTransaction(connection));
        connection.commit();
        return result;
      } catch (RuntimeException | SQLException e) {
        rollBack(connection, e);
        throw e;
      } finally {
        if (!connection.isClosed()) {
          connection.setAutoCommit(true); // the pool's connections are in autocommit
        }
      }
    } catch (SQLException e) {
      throw new Sql.StatementFailedException(e);
    }
  }

  private static void rollBack(Connection connection, Exception failure) {
    try {
      if (!connection.isClosed()) {
        connection.rollback();
      }
    } catch (SQLException e) {
      failure.addSuppressed(e);
    }
  }

  private final class OneTransaction implements FinishStatements {
    private final Connection connection;

    private OneTransaction(Connection connection) {
      this.connection = connection;
    }

    @Override
    public Optional<Changed> complete(long id, String token, String externalRef, String actor) {
      return ItemRepository.this.complete(connection, id, token, externalRef, actor);
    }

    @Override
    public Optional<Changed> fail(long id, String token, Failure failure, String actor) {
      return ItemRepository.this.fail(connection, id, token, failure, actor);
    }

    @Override
    public Optional<Item> claimNext(
        String queue, String token, String worker, Integer leaseSeconds) {
      return ItemRepository.this.claimNext(connection, queue, token, worker, leaseSeconds);
    }
  }

  /** The statement on the transaction's connection when there is one, else on its own. */
  private Sql.Call on(Sql sql, Connection held) {
    return held == null ? sql.on(dataSource) : sql.on(held);
  }

  /**
   * A worker's report, run once more when its answer is {@link Changed#outdated}: the second run's
   * snapshot has the change the first one's UPDATE waited for (READ COMMITTED: each statement its
   * own, in a transaction too). Its answer is taken as it is, for a release refused at its limit
   * answers the same way again.
   */
  private static Optional<Changed> latest(String token, Supplier<Optional<Changed>> report) {
    Optional<Changed> row = report.get();
    return row.isPresent() && row.get().outdated(token) ? report.get() : row;
  }

  private static Optional<Changed> single(Sql.Call call) {
    return call.list(ItemRepository::changed).stream().reduce(ItemRepository::onlyOne);
  }

  /** A statement on one row answers with one row or none: more is a bug, not an answer. */
  private static <T> T onlyOne(T first, T second) {
    throw new IllegalStateException("a single-row statement answered with more than one row");
  }

  /** A row of a batch complete, and how the item's latest attempt ended. */
  private static Changed finishedOrNot(ResultSet row) throws SQLException {
    return new Changed(
        row.getBoolean("changed"), false, finished(row), row.getString("last_outcome"));
  }

  /** A row of a fail or a fail batch: as a finish's, and the latest attempt's sent_unknown. */
  private static Changed failedOrNot(ResultSet row) throws SQLException {
    return new Changed(
        row.getBoolean("changed"),
        false,
        finished(row),
        row.getString("last_outcome"),
        row.getBoolean("last_sent_unknown"));
  }

  /** A row of a single fail: as a fail batch's, and the reason the token's own attempt keeps. */
  private static Changed ownFail(ResultSet row) throws SQLException {
    Changed failed = failedOrNot(row);
    return new Changed(
        failed.changed(),
        false,
        failed.item(),
        failed.lastOutcome(),
        failed.lastSentUnknown(),
        row.getString("attempt_error"));
  }

  /** A row of a complete or fail, with held_since: when the claim it finished began. */
  private static Item finished(ResultSet row) throws SQLException {
    Item item = ITEMS.map(row);
    java.time.OffsetDateTime since = row.getObject("held_since", java.time.OffsetDateTime.class);
    item.heldSince = since == null ? null : since.toInstant();
    return item;
  }

  private static Changed changed(ResultSet row) throws SQLException {
    return new Changed(row.getBoolean("changed"), ITEMS.map(row));
  }

  /**
   * A claimed item, with what its earlier attempts left behind: possibly_sent, and prior_attempts
   * as a JSON array of attempts (null for a claim that did not win).
   */
  private static Item claimed(ResultSet row) throws SQLException {
    Item item = ITEMS.map(row);
    item.possiblySent = row.getBoolean("possibly_sent");
    String prior = row.getString("prior_attempts");
    if (prior != null) {
      item.priorAttempts = new ArrayList<>();
      try {
        for (JsonNode attempt : JSON.readTree(prior)) {
          item.priorAttempts.add(attempt(attempt));
        }
      } catch (java.io.IOException e) {
        throw new IllegalStateException("prior_attempts is not the JSON its statement builds", e);
      }
    }
    return item;
  }

  /** One of prior_attempts: the keys are the Attempt's field names, timestamps ISO 8601. */
  private static Attempt attempt(JsonNode json) {
    Attempt attempt = new Attempt();
    attempt.attempt = json.path("attempt").asInt();
    attempt.worker = text(json, "worker");
    attempt.claimedAt = instant(json, "claimedAt");
    attempt.intentAt = instant(json, "intentAt");
    attempt.finishedAt = instant(json, "finishedAt");
    attempt.outcome = text(json, "outcome");
    attempt.error = text(json, "error");
    attempt.sentUnknown = json.path("sentUnknown").asBoolean();
    attempt.finishedBy = text(json, "finishedBy");
    attempt.lateExternalRef = text(json, "lateExternalRef");
    attempt.lateReportedAt = instant(json, "lateReportedAt");
    attempt.lateReportedBy = text(json, "lateReportedBy");
    return attempt;
  }

  private static String text(JsonNode json, String field) {
    JsonNode value = json.path(field);
    return value.isTextual() ? value.asText() : null;
  }

  private static java.time.Instant instant(JsonNode json, String field) {
    String value = text(json, field);
    return value == null ? null : java.time.OffsetDateTime.parse(value).toInstant();
  }

  private static KeyHolder keyHolder(ResultSet row) throws SQLException {
    return new KeyHolder(row.getBoolean("changed"), row.getString("differs"), ITEMS.map(row));
  }

  /** The item that holds this dedupe key in this queue, as it is now. */
  public Optional<Item> byDedupeKey(String queue, String dedupeKey) {
    return FIND_BY_DEDUPE_KEY
        .on(dataSource)
        .set("queue", queue)
        .set("dedupeKey", dedupeKey)
        .list(ITEMS)
        .stream()
        .reduce(ItemRepository::onlyOne);
  }

  /**
   * The items this key enqueued, newest first, strictly older than {@code beforeId} when given, in
   * the state (a wire name) when given, in {@code queues} when not empty.
   */
  public List<Item> enqueuedBy(
      String enqueuedBy, String state, Set<String> queues, Long beforeId, int limit) {
    return ENQUEUED_BY
        .on(dataSource)
        .set("enqueuedBy", enqueuedBy)
        .set("state", state)
        .set("queues", queues.isEmpty() ? null : queues.toArray(String[]::new))
        .set("beforeId", beforeId)
        .set("limit", limit)
        .list(ITEMS);
  }
}
