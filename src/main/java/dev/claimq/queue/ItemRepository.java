package dev.claimq.queue;

import io.quarkus.hibernate.orm.panache.PanacheRepository;
import io.quarkus.panache.common.Parameters;
import io.quarkus.panache.common.Sort;
import jakarta.enterprise.context.ApplicationScoped;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import javax.sql.DataSource;

/**
 * Owns every statement that touches the queue. Each state change is one conditional statement: the
 * rows it returns are the answer (none = the change did not happen), never a read followed by a
 * write. All times come from the database clock ({@code now()}), never the JVM's.
 *
 * <p>The statements run through plain JDBC ({@link Sql}): each is complete on its own, so the
 * workers' and agents' calls need neither an ORM session nor a JTA transaction, which cut the
 * service's CPU per drained item about fivefold (see the README's benchmark). Operators' listings
 * and histories are read through Panache.
 */
@ApplicationScoped
public class ItemRepository implements PanacheRepository<Item> {

  // The unique (queue, dedupe_key) constraint decides: of any number of concurrent inserts of
  // one key, exactly one returns a row. DO NOTHING (not DO UPDATE) so a duplicate writes nothing.
  private static final Sql INSERT_IF_ABSENT =
      Sql.of(
          """
      INSERT INTO item (queue, dedupe_key, payload, priority, max_attempts, run_at, enqueued_by)
      VALUES (:queue, :dedupeKey, CAST(:payload AS jsonb), :priority, :maxAttempts,
              coalesce(:runAt, now()), :enqueuedBy)
      ON CONFLICT (queue, dedupe_key) DO NOTHING
      RETURNING *
      """);

  // jsonb equality: key order and white space do not matter, 1.0 equals 1.
  private static final Sql FIND_WITH_EQUAL_PAYLOAD =
      Sql.of(
          """
      SELECT * FROM item
      WHERE queue = :queue AND dedupe_key = :dedupeKey AND payload = CAST(:payload AS jsonb)
      """);

  // The claim itself. Sets the lease on the database clock and opens the attempt row in the same
  // statement, so a claim and its history cannot disagree.
  private static final String CLAIM_SET =
      """
      state = 'sending', attempts = i.attempts + 1, claim_token = :token, claimed_by = :worker,
      lease_seconds = :leaseSeconds, lease_expires_at = now() + :leaseSeconds * interval '1 second',
      updated_at = now()
      """;

  private static final String OPEN_ATTEMPT =
      """
      opened AS (
        INSERT INTO attempt (item_id, attempt, worker)
        SELECT id, attempts, claimed_by FROM claimed
      )
      SELECT * FROM claimed
      """;

  // Claim one named item: only a pending, due item can be claimed, and only once.
  private static final Sql CLAIM_BY_ID =
      Sql.of(
          "WITH claimed AS (UPDATE item i SET "
              + CLAIM_SET
              + """
          WHERE i.id = :id AND i.state = 'pending' AND i.run_at <= now()
          RETURNING i.*
          ),
          """
              + OPEN_ATTEMPT);

  // Claim the next due item of a queue. The CTE with LIMIT 1 picks exactly one row in the order
  // of the item_claimable index; FOR UPDATE SKIP LOCKED makes concurrent claimers step past rows
  // another transaction is claiming instead of queueing behind it (and instead of both taking it).
  private static final Sql CLAIM_NEXT =
      Sql.of(
          """
      WITH next AS (
        SELECT id FROM item
        WHERE queue = :queue AND state = 'pending' AND run_at <= now()
        ORDER BY priority DESC, run_at, id
        LIMIT 1
        FOR UPDATE SKIP LOCKED
      ),
      claimed AS (
        UPDATE item i SET
      """
              + CLAIM_SET
              + """
          FROM next WHERE i.id = next.id
          RETURNING i.*
          ),
          """
              + OPEN_ATTEMPT);

  // Batch variants: the entries travel as one JSON document unpacked by jsonb_to_recordset, so
  // a batch is one statement whatever its size, with exactly the same conditions as the single
  // statements above.

  private static final Sql INSERT_BATCH_IF_ABSENT =
      Sql.of(
          """
      INSERT INTO item (queue, dedupe_key, payload, priority, max_attempts, run_at, enqueued_by)
      SELECT :queue, e.dedupe_key, e.payload, e.priority, e.max_attempts,
             coalesce(e.run_at, now()), :enqueuedBy
      FROM jsonb_to_recordset(CAST(:batch AS jsonb))
           AS e(ord int, dedupe_key text, payload jsonb, priority int, max_attempts int,
                run_at timestamptz)
      ORDER BY e.ord
      ON CONFLICT (queue, dedupe_key) DO NOTHING
      RETURNING *
      """);

  // For each entry (by its ord, its position from 1): the item that holds its key and whether the
  // payloads are equal.
  private static final Sql MATCH_BATCH =
      Sql.of(
          """
      SELECT e.ord, i.id, i.payload = e.payload
      FROM jsonb_to_recordset(CAST(:batch AS jsonb)) AS e(ord int, dedupe_key text, payload jsonb)
      JOIN item i ON i.queue = :queue AND i.dedupe_key = e.dedupe_key
      """);

  // Up to :max items, each with its own token (matched by position). FOR UPDATE cannot sit with
  // a window function, so the locking pick is a subquery and the numbering is done outside it.
  private static final Sql CLAIM_NEXT_BATCH =
      Sql.of(
          """
      WITH next AS (
        SELECT id, row_number() OVER (ORDER BY priority DESC, run_at, id) AS n
        FROM (
          SELECT id, priority, run_at FROM item
          WHERE queue = :queue AND state = 'pending' AND run_at <= now()
          ORDER BY priority DESC, run_at, id
          LIMIT :max
          FOR UPDATE SKIP LOCKED
        ) picked
      ),
      tokens AS (
        SELECT t.token, t.n FROM jsonb_array_elements_text(CAST(:tokens AS jsonb))
                                 WITH ORDINALITY AS t(token, n)
      ),
      claimed AS (
        UPDATE item i SET
          state = 'sending', attempts = i.attempts + 1, claim_token = tokens.token,
          claimed_by = :worker, lease_seconds = :leaseSeconds,
          lease_expires_at = now() + :leaseSeconds * interval '1 second', updated_at = now()
        FROM next JOIN tokens ON tokens.n = next.n
        WHERE i.id = next.id
        RETURNING i.*
      ),
      """
              + OPEN_ATTEMPT);

  private static final Sql COMPLETE_BATCH =
      Sql.of(
          """
      WITH input AS (
        SELECT * FROM jsonb_to_recordset(CAST(:batch AS jsonb))
                      AS e(id bigint, claim_token text, external_ref text)
      ),
      finished AS (
        UPDATE item i SET state = 'done', external_ref = input.external_ref, lease_seconds = NULL,
                          lease_expires_at = NULL, updated_at = now()
        FROM input
        WHERE i.id = input.id AND i.claim_token = input.claim_token AND i.state = 'sending'
        RETURNING i.*
      ),
      closed AS (
        UPDATE attempt a SET finished_at = now(), outcome = 'done', finished_by = :actor
        FROM finished WHERE a.item_id = finished.id AND a.finished_at IS NULL
      )
      SELECT * FROM finished
      """);

  private static final Sql ATTEMPTS_OF_CLAIMS =
      Sql.of(
          """
      SELECT i.id, i.attempts
      FROM jsonb_to_recordset(CAST(:batch AS jsonb)) AS e(id bigint, claim_token text)
      JOIN item i ON i.id = e.id AND i.claim_token = e.claim_token AND i.state = 'sending'
      """);

  private static final Sql FAIL_BATCH =
      Sql.of(
          """
      WITH input AS (
        SELECT * FROM jsonb_to_recordset(CAST(:batch AS jsonb))
                      AS e(id bigint, claim_token text, error text, retryable boolean,
                           delay_seconds bigint)
      ),
      finished AS (
        UPDATE item i SET
          state = CASE WHEN input.retryable AND i.attempts < i.max_attempts
                       THEN 'pending' ELSE 'failed' END,
          run_at = CASE WHEN input.retryable AND i.attempts < i.max_attempts
                        THEN now() + input.delay_seconds * interval '1 second' ELSE i.run_at END,
          last_error = input.error, lease_seconds = NULL, lease_expires_at = NULL,
          updated_at = now()
        FROM input
        WHERE i.id = input.id AND i.claim_token = input.claim_token AND i.state = 'sending'
        RETURNING i.*
      ),
      closed AS (
        UPDATE attempt a SET finished_at = now(), error = finished.last_error,
          finished_by = :actor,
          outcome = CASE WHEN finished.state = 'pending' THEN 'retry' ELSE 'failed' END
        FROM finished WHERE a.item_id = finished.id AND a.finished_at IS NULL
      )
      SELECT * FROM finished
      """);

  // Only the current holder of a claim can finish it, and only while the item is still sending:
  // once the reaper has released an expired lease, the old token matches nothing.
  private static final Sql COMPLETE =
      Sql.of(
          """
      WITH finished AS (
        UPDATE item SET state = 'done', external_ref = :externalRef, lease_seconds = NULL,
                        lease_expires_at = NULL, updated_at = now()
        WHERE id = :id AND claim_token = :token AND state = 'sending'
        RETURNING *
      ),
      closed AS (
        UPDATE attempt a SET finished_at = now(), outcome = 'done', finished_by = :actor
        FROM finished WHERE a.item_id = finished.id AND a.finished_at IS NULL
      )
      SELECT * FROM finished
      """);

  // The caller computes the backoff delay; whether the item may go round again is decided here,
  // against the row as it is when the statement runs.
  private static final Sql FAIL =
      Sql.of(
          """
      WITH finished AS (
        UPDATE item SET
          state = CASE WHEN :retryable AND attempts < max_attempts THEN 'pending' ELSE 'failed' END,
          run_at = CASE WHEN :retryable AND attempts < max_attempts
                        THEN now() + :delaySeconds * interval '1 second' ELSE run_at END,
          last_error = :error, lease_seconds = NULL, lease_expires_at = NULL, updated_at = now()
        WHERE id = :id AND claim_token = :token AND state = 'sending'
        RETURNING *
      ),
      closed AS (
        UPDATE attempt a SET finished_at = now(), error = :error, finished_by = :actor,
          outcome = CASE WHEN finished.state = 'pending' THEN 'retry' ELSE 'failed' END
        FROM finished WHERE a.item_id = finished.id AND a.finished_at IS NULL
      )
      SELECT * FROM finished
      """);

  private static final Sql ATTEMPTS_OF_CLAIM =
      Sql.of(
          "SELECT attempts FROM item WHERE id = :id AND claim_token = :token AND state = 'sending'");

  private static final Sql HEARTBEAT =
      Sql.of(
          """
      UPDATE item SET
        lease_seconds = coalesce(:leaseSeconds, lease_seconds),
        lease_expires_at = now() + coalesce(:leaseSeconds, lease_seconds) * interval '1 second',
        updated_at = now()
      WHERE id = :id AND claim_token = :token AND state = 'sending'
      RETURNING *
      """);

  // Releases claims whose lease ran out. SKIP LOCKED steps past an item whose complete or fail is
  // in flight; if that commits first, the row no longer matches state = 'sending' when it is
  // locked, so a finished item is never overwritten. Several instances may run this at once.
  private static final Sql REAP_EXPIRED_LEASES =
      Sql.of(
          """
      WITH expired AS (
        SELECT id FROM item
        WHERE state = 'sending' AND lease_expires_at <= now()
        ORDER BY lease_expires_at
        LIMIT :batchSize
        FOR UPDATE SKIP LOCKED
      ),
      released AS (
        UPDATE item i SET
          state = CASE WHEN i.attempts >= i.max_attempts THEN 'failed' ELSE 'pending' END,
          run_at = now(),
          last_error = 'lease expired: ' || coalesce('worker "' || i.claimed_by || '"', 'the worker')
                       || ' did not complete, fail or heartbeat within '
                       || i.lease_seconds || ' s',
          claim_token = NULL, lease_seconds = NULL, lease_expires_at = NULL, updated_at = now()
        FROM expired WHERE i.id = expired.id
        RETURNING i.id, i.last_error
      ),
      closed AS (
        UPDATE attempt a SET finished_at = now(), outcome = 'lease_expired',
                             error = released.last_error
        FROM released WHERE a.item_id = released.id AND a.finished_at IS NULL
      )
      SELECT count(*) FROM released
      """);

  // Retention: finished items past their keep time, a batch at a time. SKIP LOCKED so several
  // instances prune side by side; attempts and actions go with their item (ON DELETE CASCADE).
  private static final Sql PRUNE_FINISHED =
      Sql.of(
          """
      DELETE FROM item WHERE id IN (
        SELECT id FROM item
        WHERE state IN ('done', 'cancelled') AND updated_at < now() - :keepSeconds * interval '1 second'
        LIMIT :batchSize
        FOR UPDATE SKIP LOCKED
      )
      """);

  // An operator's second chance: a fresh budget of attempts, due now. The history and the
  // idempotency key stay, so the provider still recognises earlier sends of this item.
  private static final Sql RETRY =
      Sql.of(
          """
      WITH changed AS (
        UPDATE item SET state = 'pending', attempts = 0, run_at = now(), claim_token = NULL,
                        updated_at = now()
        WHERE id = :id AND state IN ('failed', 'cancelled')
        RETURNING *
      ),
      recorded AS (
        INSERT INTO item_action (item_id, action, actor) SELECT id, 'retry', :actor FROM changed
      )
      SELECT * FROM changed
      """);

  private static final Sql CANCEL =
      Sql.of(
          """
      WITH changed AS (
        UPDATE item SET state = 'cancelled', claim_token = NULL, updated_at = now()
        WHERE id = :id AND state IN ('pending', 'failed')
        RETURNING *
      ),
      recorded AS (
        INSERT INTO item_action (item_id, action, actor) SELECT id, 'cancel', :actor FROM changed
      )
      SELECT * FROM changed
      """);

  private static final String QUEUE_STATS =
      """
      SELECT queue,
             count(*) FILTER (WHERE state = 'pending'),
             count(*) FILTER (WHERE state = 'sending'),
             count(*) FILTER (WHERE state = 'done'),
             count(*) FILTER (WHERE state = 'failed'),
             count(*) FILTER (WHERE state = 'cancelled'),
             extract(epoch FROM now() - min(run_at) FILTER (
                 WHERE state = 'pending' AND run_at <= now()))
      FROM item
      GROUP BY queue
      ORDER BY queue
      """;

  // Reads by key for the paths that run without the ORM.
  private static final Sql FIND_BY_ID = Sql.of("SELECT * FROM item WHERE id = :id");

  private static final Sql FIND_ALL_BY_ID =
      Sql.of("SELECT * FROM item WHERE id = ANY (CAST(:ids AS bigint[]))");

  private static final Sql QUEUES_BY_ID =
      Sql.of("SELECT id, queue FROM item WHERE id = ANY (CAST(:ids AS bigint[]))");

  private static final Sql FIND_BY_DEDUPE_KEY =
      Sql.of("SELECT * FROM item WHERE queue = :queue AND dedupe_key = :dedupeKey");

  // PostgreSQL's own count, kept up to date by every backend without scanning anything.
  private static final Sql DEAD_ROWS =
      Sql.of(
          "SELECT coalesce(max(n_dead_tup), 0) FROM pg_stat_user_tables"
              + " WHERE relid = CAST('item' AS regclass)");

  // SKIP_LOCKED: when autovacuum or another instance is at the table already, leave it to them.
  // INDEX_CLEANUP ON: the dead entries at the front of the claim index are what slows claims, and
  // with few dead rows in a large table VACUUM would otherwise skip the indexes.
  private static final String VACUUM = "VACUUM (SKIP_LOCKED, INDEX_CLEANUP ON) item";

  private final DataSource dataSource;

  ItemRepository(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  /** Inserts the item unless its (queue, dedupe key) exists; empty when it did exist. */
  public Optional<Item> insertIfAbsent(NewItem item) {
    return single(
        INSERT_IF_ABSENT
            .on(dataSource)
            .set("queue", item.queue())
            .set("dedupeKey", item.dedupeKey())
            .set("payload", item.payload())
            .set("priority", item.priority())
            .set("maxAttempts", item.maxAttempts())
            .set("runAt", item.runAt())
            .set("enqueuedBy", item.enqueuedBy()));
  }

  /** The item with this (queue, dedupe key), if its payload is equal to this one. */
  public Optional<Item> findWithEqualPayload(String queue, String dedupeKey, String payload) {
    return single(
        FIND_WITH_EQUAL_PAYLOAD
            .on(dataSource)
            .set("queue", queue)
            .set("dedupeKey", dedupeKey)
            .set("payload", payload));
  }

  public Optional<Item> findByDedupeKey(String queue, String dedupeKey) {
    return single(
        FIND_BY_DEDUPE_KEY.on(dataSource).set("queue", queue).set("dedupeKey", dedupeKey));
  }

  /** The item as it is now, read without the ORM (for the worker and agent paths). */
  public Optional<Item> findCurrent(long id) {
    return single(FIND_BY_ID.on(dataSource).set("id", id));
  }

  /** The items with these ids (any order). */
  public List<Item> findAllById(java.util.Collection<Long> ids) {
    if (ids.isEmpty()) {
      return List.of();
    }
    return FIND_ALL_BY_ID.on(dataSource).set("ids", idArray(ids)).list(ItemRepository::item);
  }

  /** The queues of these items (which never change), by id; unknown ids are left out. */
  public Map<Long, String> queuesOf(java.util.Collection<Long> ids) {
    Map<Long, String> queues = new HashMap<>();
    if (!ids.isEmpty()) {
      QUEUES_BY_ID
          .on(dataSource)
          .set("ids", idArray(ids))
          .list(row -> queues.put(row.getLong(1), row.getString(2)));
    }
    return queues;
  }

  /** A bigint[] literal: ids are numbers, so nothing in it needs quoting. */
  private static String idArray(java.util.Collection<Long> ids) {
    return ids.stream().map(String::valueOf).collect(Collectors.joining(",", "{", "}"));
  }

  /** Inserts every entry whose key is new; returns the inserted items. */
  public List<Item> insertBatchIfAbsent(String queue, String batchJson, String enqueuedBy) {
    return INSERT_BATCH_IF_ABSENT
        .on(dataSource)
        .set("queue", queue)
        .set("batch", batchJson)
        .set("enqueuedBy", enqueuedBy)
        .list(ItemRepository::item);
  }

  /** For each entry position (from 1) whose key names an item: that item's id and payload match. */
  public Map<Integer, KeyMatch> matchBatch(String queue, String batchJson) {
    Map<Integer, KeyMatch> matches = new HashMap<>();
    MATCH_BATCH
        .on(dataSource)
        .set("queue", queue)
        .set("batch", batchJson)
        .list(row -> matches.put(row.getInt(1), new KeyMatch(row.getLong(2), row.getBoolean(3))));
    return matches;
  }

  /** The item holding an entry's key, and whether its payload equals the entry's. */
  public record KeyMatch(long id, boolean samePayload) {}

  /** Claims up to {@code tokens.size()} due items of the queue, one token each. */
  public List<Item> claimNextBatch(
      String queue, List<String> tokens, String worker, int leaseSeconds, String tokensJson) {
    return CLAIM_NEXT_BATCH
        .on(dataSource)
        .set("queue", queue)
        .set("max", tokens.size())
        .set("tokens", tokensJson)
        .set("worker", worker)
        .set("leaseSeconds", leaseSeconds)
        .list(ItemRepository::item);
  }

  /** Completes every entry whose token is its item's current claim; returns those items. */
  public List<Item> completeBatch(String batchJson, String actor) {
    return COMPLETE_BATCH
        .on(dataSource)
        .set("batch", batchJson)
        .set("actor", actor)
        .list(ItemRepository::item);
  }

  /** Attempt numbers of the entries whose token is their item's current claim, by item id. */
  public Map<Long, Integer> attemptsOfClaims(String batchJson) {
    Map<Long, Integer> attempts = new HashMap<>();
    ATTEMPTS_OF_CLAIMS
        .on(dataSource)
        .set("batch", batchJson)
        .list(row -> attempts.put(row.getLong(1), row.getInt(2)));
    return attempts;
  }

  /** Records every entry's failure whose token is its item's current claim. */
  public List<Item> failBatch(String batchJson, String actor) {
    return FAIL_BATCH
        .on(dataSource)
        .set("batch", batchJson)
        .set("actor", actor)
        .list(ItemRepository::item);
  }

  /** Claims this item if it is pending and due; empty when this call did not win it. */
  public Optional<Item> claim(long id, String token, String worker, int leaseSeconds) {
    return single(
        CLAIM_BY_ID
            .on(dataSource)
            .set("id", id)
            .set("token", token)
            .set("worker", worker)
            .set("leaseSeconds", leaseSeconds));
  }

  /** Claims the next due item of the queue; empty when there is none to claim. */
  public Optional<Item> claimNext(String queue, String token, String worker, int leaseSeconds) {
    return single(
        CLAIM_NEXT
            .on(dataSource)
            .set("queue", queue)
            .set("token", token)
            .set("worker", worker)
            .set("leaseSeconds", leaseSeconds));
  }

  /** Marks the claimed item done; empty when the token is not the item's current claim. */
  public Optional<Item> complete(long id, String token, String externalRef, String actor) {
    return single(
        COMPLETE
            .on(dataSource)
            .set("id", id)
            .set("token", token)
            .set("actor", actor)
            .set("externalRef", externalRef));
  }

  /** The attempt number of this claim, if it is the item's current one. */
  public Optional<Integer> attemptsOfClaim(long id, String token) {
    return ATTEMPTS_OF_CLAIM
        .on(dataSource)
        .set("id", id)
        .set("token", token)
        .list(row -> row.getInt(1))
        .stream()
        .findFirst();
  }

  /**
   * Records a failed attempt: back to pending after {@code delaySeconds} when retryable and
   * attempts remain, otherwise failed. Empty when the token is not the item's current claim.
   */
  public Optional<Item> fail(
      long id, String token, String error, boolean retryable, long delaySeconds, String actor) {
    return single(
        FAIL.on(dataSource)
            .set("id", id)
            .set("token", token)
            .set("actor", actor)
            .set("error", error)
            .set("retryable", retryable)
            .set("delaySeconds", delaySeconds));
  }

  /** Extends the lease from now; empty when the token is not the item's current claim. */
  public Optional<Item> heartbeat(long id, String token, Integer leaseSeconds) {
    return single(
        HEARTBEAT
            .on(dataSource)
            .set("id", id)
            .set("token", token)
            .set("leaseSeconds", leaseSeconds));
  }

  /** Releases up to {@code batchSize} expired claims; returns how many. */
  public int reapExpiredLeases(int batchSize) {
    return REAP_EXPIRED_LEASES
        .on(dataSource)
        .set("batchSize", batchSize)
        .list(row -> row.getInt(1))
        .get(0);
  }

  /** Deletes up to {@code batchSize} done or cancelled items older than the keep time. */
  public int pruneFinished(long keepSeconds, int batchSize) {
    return PRUNE_FINISHED
        .on(dataSource)
        .set("keepSeconds", keepSeconds)
        .set("batchSize", batchSize)
        .update();
  }

  /** Dead rows in the item table, as PostgreSQL's statistics count them. */
  public long deadRows() {
    return DEAD_ROWS.on(dataSource).list(row -> row.getLong(1)).get(0);
  }

  /** Vacuums the item table (outside any transaction: VACUUM cannot run inside one). */
  public void vacuum() {
    try (Connection connection = dataSource.getConnection();
        Statement statement = connection.createStatement()) {
      // A large table may take longer than the pool's statement timeout; RESET brings back the
      // connection's own setting.
      statement.execute("SET statement_timeout = 0");
      try {
        statement.execute(VACUUM);
      } finally {
        statement.execute("RESET statement_timeout");
      }
    } catch (SQLException e) {
      throw new Sql.StatementFailedException(e);
    }
  }

  /** Moves a failed or cancelled item back to pending; empty when it is in another state. */
  public Optional<Item> retry(long id, String actor) {
    return single(RETRY.on(dataSource).set("id", id).set("actor", actor));
  }

  /** Cancels a pending or failed item; empty when it is in another state. */
  public Optional<Item> cancel(long id, String actor) {
    return single(CANCEL.on(dataSource).set("id", id).set("actor", actor));
  }

  /** The queue an item belongs to (it never changes); empty for no such item. */
  public Optional<String> queueOf(long id) {
    return getEntityManager()
        .createQuery("select queue from Item where id = :id", String.class)
        .setParameter("id", id)
        .getResultStream()
        .findFirst();
  }

  public List<ItemAction> actions(long itemId) {
    return getEntityManager()
        .createQuery("from ItemAction where itemId = :itemId order by id", ItemAction.class)
        .setParameter("itemId", itemId)
        .getResultList();
  }

  /**
   * Newest first, strictly older than {@code beforeId} when given, in {@code queues} when not
   * empty.
   */
  public List<Item> newestFirst(
      java.util.Set<String> queues, ItemState state, Long beforeId, int limit) {
    List<String> filters = new ArrayList<>();
    Parameters parameters = new Parameters();
    if (!queues.isEmpty()) {
      filters.add("queue in :queues");
      parameters.and("queues", queues);
    }
    if (state != null) {
      filters.add("state = :state");
      parameters.and("state", state);
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

  public List<QueueStats> queueStats() {
    List<?> rows = getEntityManager().createNativeQuery(QUEUE_STATS).getResultList();
    return rows.stream()
        .map(Object[].class::cast)
        .map(
            row ->
                new QueueStats(
                    (String) row[0],
                    count(row[1]),
                    count(row[2]),
                    count(row[3]),
                    count(row[4]),
                    count(row[5]),
                    row[6] == null ? null : ((BigDecimal) row[6]).doubleValue()))
        .toList();
  }

  private static long count(Object value) {
    return ((Number) value).longValue();
  }

  /** A conditional statement on one row changes zero rows or one: more is a bug, not an answer. */
  private static Optional<Item> single(Sql.Call call) {
    List<Item> rows = call.list(ItemRepository::item);
    if (rows.size() > 1) {
      throw new IllegalStateException("a single-row statement changed " + rows.size() + " rows");
    }
    return rows.stream().findFirst();
  }

  /** An item row of the statements above (all return item.*). */
  private static Item item(ResultSet row) throws SQLException {
    Item item = new Item();
    item.id = row.getLong("id");
    item.queue = row.getString("queue");
    item.dedupeKey = row.getString("dedupe_key");
    item.state = ItemState.fromWireName(row.getString("state"));
    item.payload = row.getString("payload");
    item.priority = row.getInt("priority");
    item.attempts = row.getInt("attempts");
    item.maxAttempts = row.getInt("max_attempts");
    item.runAt = instant(row, "run_at");
    item.idempotencyKey = row.getString("idempotency_key");
    item.claimToken = row.getString("claim_token");
    item.claimedBy = row.getString("claimed_by");
    item.leaseSeconds = row.getObject("lease_seconds", Integer.class);
    item.leaseExpiresAt = instant(row, "lease_expires_at");
    item.externalRef = row.getString("external_ref");
    item.lastError = row.getString("last_error");
    item.enqueuedBy = row.getString("enqueued_by");
    item.createdAt = instant(row, "created_at");
    item.updatedAt = instant(row, "updated_at");
    return item;
  }

  private static Instant instant(ResultSet row, String column) throws SQLException {
    OffsetDateTime value = row.getObject(column, OffsetDateTime.class);
    return value == null ? null : value.toInstant();
  }
}
