package dev.claimq.queue;

import io.quarkus.hibernate.orm.panache.PanacheRepository;
import io.quarkus.panache.common.Parameters;
import io.quarkus.panache.common.Sort;
import jakarta.enterprise.context.ApplicationScoped;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.hibernate.query.NativeQuery;

/**
 * Owns every statement that touches the queue. Each state change is one conditional statement: the
 * rows it returns are the answer (none = the change did not happen), never a read followed by a
 * write. All times come from the database clock ({@code now()}), never the JVM's.
 */
@ApplicationScoped
public class ItemRepository implements PanacheRepository<Item> {

  // The unique (queue, dedupe_key) constraint decides: of any number of concurrent inserts of
  // one key, exactly one returns a row. DO NOTHING (not DO UPDATE) so a duplicate writes nothing.
  private static final String INSERT_IF_ABSENT =
      """
      INSERT INTO item (queue, dedupe_key, payload, priority, max_attempts, run_at, enqueued_by)
      VALUES (:queue, :dedupeKey, CAST(:payload AS jsonb), :priority, :maxAttempts,
              coalesce(:runAt, now()), :enqueuedBy)
      ON CONFLICT (queue, dedupe_key) DO NOTHING
      RETURNING *
      """;

  // jsonb equality: key order and white space do not matter, 1.0 equals 1.
  private static final String FIND_WITH_EQUAL_PAYLOAD =
      """
      SELECT * FROM item
      WHERE queue = :queue AND dedupe_key = :dedupeKey AND payload = CAST(:payload AS jsonb)
      """;

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
  private static final String CLAIM_BY_ID =
      "WITH claimed AS (UPDATE item i SET "
          + CLAIM_SET
          + """
          WHERE i.id = :id AND i.state = 'pending' AND i.run_at <= now()
          RETURNING i.*
          ),
          """
          + OPEN_ATTEMPT;

  // Claim the next due item of a queue. The CTE with LIMIT 1 picks exactly one row in the order
  // of the item_claimable index; FOR UPDATE SKIP LOCKED makes concurrent claimers step past rows
  // another transaction is claiming instead of queueing behind it (and instead of both taking it).
  private static final String CLAIM_NEXT =
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
          + OPEN_ATTEMPT;

  // Batch variants: the entries travel as one JSON document unpacked by jsonb_to_recordset, so
  // a batch is one statement whatever its size, with exactly the same conditions as the single
  // statements above.

  private static final String INSERT_BATCH_IF_ABSENT =
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
      """;

  // For each entry (by its ord, its position from 1): the item that holds its key and whether the
  // payloads
  // are equal.
  private static final String MATCH_BATCH =
      """
      SELECT e.ord, i.id, i.payload = e.payload
      FROM jsonb_to_recordset(CAST(:batch AS jsonb)) AS e(ord int, dedupe_key text, payload jsonb)
      JOIN item i ON i.queue = :queue AND i.dedupe_key = e.dedupe_key
      """;

  // Up to :max items, each with its own token (matched by position). FOR UPDATE cannot sit with
  // a window function, so the locking pick is a subquery and the numbering is done outside it.
  private static final String CLAIM_NEXT_BATCH =
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
          + OPEN_ATTEMPT;

  private static final String COMPLETE_BATCH =
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
      """;

  private static final String ATTEMPTS_OF_CLAIMS =
      """
      SELECT i.id, i.attempts
      FROM jsonb_to_recordset(CAST(:batch AS jsonb)) AS e(id bigint, claim_token text)
      JOIN item i ON i.id = e.id AND i.claim_token = e.claim_token AND i.state = 'sending'
      """;

  private static final String FAIL_BATCH =
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
      """;

  // Only the current holder of a claim can finish it, and only while the item is still sending:
  // once the reaper has released an expired lease, the old token matches nothing.
  private static final String COMPLETE =
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
      """;

  // The caller computes the backoff delay; whether the item may go round again is decided here,
  // against the row as it is when the statement runs.
  private static final String FAIL =
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
      """;

  private static final String ATTEMPTS_OF_CLAIM =
      "SELECT attempts FROM item WHERE id = :id AND claim_token = :token AND state = 'sending'";

  private static final String HEARTBEAT =
      """
      UPDATE item SET
        lease_seconds = coalesce(:leaseSeconds, lease_seconds),
        lease_expires_at = now() + coalesce(:leaseSeconds, lease_seconds) * interval '1 second',
        updated_at = now()
      WHERE id = :id AND claim_token = :token AND state = 'sending'
      RETURNING *
      """;

  // Releases claims whose lease ran out. SKIP LOCKED steps past an item whose complete or fail is
  // in flight; if that commits first, the row no longer matches state = 'sending' when it is
  // locked, so a finished item is never overwritten. Several instances may run this at once.
  private static final String REAP_EXPIRED_LEASES =
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
      """;

  // Retention: finished items past their keep time, a batch at a time. SKIP LOCKED so several
  // instances prune side by side; attempts and actions go with their item (ON DELETE CASCADE).
  private static final String PRUNE_FINISHED =
      """
      DELETE FROM item WHERE id IN (
        SELECT id FROM item
        WHERE state IN ('done', 'cancelled') AND updated_at < now() - :keepSeconds * interval '1 second'
        LIMIT :batchSize
        FOR UPDATE SKIP LOCKED
      )
      """;

  // An operator's second chance: a fresh budget of attempts, due now. The history and the
  // idempotency key stay, so the provider still recognises earlier sends of this item.
  private static final String RETRY =
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
      """;

  private static final String CANCEL =
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
      """;

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

  /** Inserts the item unless its (queue, dedupe key) exists; empty when it did exist. */
  public Optional<Item> insertIfAbsent(NewItem item) {
    return single(
        itemQuery(INSERT_IF_ABSENT)
            .setParameter("queue", item.queue())
            .setParameter("dedupeKey", item.dedupeKey())
            .setParameter("payload", item.payload())
            .setParameter("priority", item.priority())
            .setParameter("maxAttempts", item.maxAttempts())
            .setParameter("runAt", item.runAt(), Instant.class)
            .setParameter("enqueuedBy", item.enqueuedBy(), String.class));
  }

  /** The item with this (queue, dedupe key), if its payload is equal to this one. */
  public Optional<Item> findWithEqualPayload(String queue, String dedupeKey, String payload) {
    return single(
        itemQuery(FIND_WITH_EQUAL_PAYLOAD)
            .setParameter("queue", queue)
            .setParameter("dedupeKey", dedupeKey)
            .setParameter("payload", payload));
  }

  public Optional<Item> findByDedupeKey(String queue, String dedupeKey) {
    return find("queue = ?1 and dedupeKey = ?2", queue, dedupeKey).firstResultOptional();
  }

  /** Inserts every entry whose key is new; returns the inserted items. */
  public List<Item> insertBatchIfAbsent(String queue, String batchJson, String enqueuedBy) {
    return itemQuery(INSERT_BATCH_IF_ABSENT)
        .setParameter("queue", queue)
        .setParameter("batch", batchJson)
        .setParameter("enqueuedBy", enqueuedBy, String.class)
        .getResultList();
  }

  /** For each entry position (from 1) whose key names an item: that item's id and payload match. */
  public Map<Integer, KeyMatch> matchBatch(String queue, String batchJson) {
    List<?> rows =
        getEntityManager()
            .createNativeQuery(MATCH_BATCH)
            .setParameter("queue", queue)
            .setParameter("batch", batchJson)
            .getResultList();
    Map<Integer, KeyMatch> matches = new java.util.HashMap<>();
    for (Object row : rows) {
      Object[] columns = (Object[]) row;
      matches.put(
          ((Number) columns[0]).intValue(),
          new KeyMatch(((Number) columns[1]).longValue(), (Boolean) columns[2]));
    }
    return matches;
  }

  /** The item holding an entry's key, and whether its payload equals the entry's. */
  public record KeyMatch(long id, boolean samePayload) {}

  /** Claims up to {@code tokens.size()} due items of the queue, one token each. */
  public List<Item> claimNextBatch(
      String queue, List<String> tokens, String worker, int leaseSeconds, String tokensJson) {
    return itemQuery(CLAIM_NEXT_BATCH)
        .setParameter("queue", queue)
        .setParameter("max", tokens.size())
        .setParameter("tokens", tokensJson)
        .setParameter("worker", worker, String.class)
        .setParameter("leaseSeconds", leaseSeconds)
        .getResultList();
  }

  /** Completes every entry whose token is its item's current claim; returns those items. */
  public List<Item> completeBatch(String batchJson, String actor) {
    return itemQuery(COMPLETE_BATCH)
        .setParameter("batch", batchJson)
        .setParameter("actor", actor, String.class)
        .getResultList();
  }

  /** Attempt numbers of the entries whose token is their item's current claim, by item id. */
  public Map<Long, Integer> attemptsOfClaims(String batchJson) {
    List<?> rows =
        getEntityManager()
            .createNativeQuery(ATTEMPTS_OF_CLAIMS)
            .setParameter("batch", batchJson)
            .getResultList();
    Map<Long, Integer> attempts = new java.util.HashMap<>();
    for (Object row : rows) {
      Object[] columns = (Object[]) row;
      attempts.put(((Number) columns[0]).longValue(), ((Number) columns[1]).intValue());
    }
    return attempts;
  }

  /** Records every entry's failure whose token is its item's current claim. */
  public List<Item> failBatch(String batchJson, String actor) {
    return itemQuery(FAIL_BATCH)
        .setParameter("batch", batchJson)
        .setParameter("actor", actor, String.class)
        .getResultList();
  }

  /** The items with these ids (any order). */
  public List<Item> findAllById(java.util.Collection<Long> ids) {
    return ids.isEmpty() ? List.of() : list("id in ?1", ids);
  }

  /** Claims this item if it is pending and due; empty when this call did not win it. */
  public Optional<Item> claim(long id, String token, String worker, int leaseSeconds) {
    return single(
        claimParameters(itemQuery(CLAIM_BY_ID), token, worker, leaseSeconds)
            .setParameter("id", id));
  }

  /** Claims the next due item of the queue; empty when there is none to claim. */
  public Optional<Item> claimNext(String queue, String token, String worker, int leaseSeconds) {
    return single(
        claimParameters(itemQuery(CLAIM_NEXT), token, worker, leaseSeconds)
            .setParameter("queue", queue));
  }

  /** Marks the claimed item done; empty when the token is not the item's current claim. */
  public Optional<Item> complete(long id, String token, String externalRef, String actor) {
    return single(
        itemQuery(COMPLETE)
            .setParameter("id", id)
            .setParameter("token", token)
            .setParameter("actor", actor, String.class)
            .setParameter("externalRef", externalRef, String.class));
  }

  /** The attempt number of this claim, if it is the item's current one. */
  public Optional<Integer> attemptsOfClaim(long id, String token) {
    List<?> rows =
        getEntityManager()
            .createNativeQuery(ATTEMPTS_OF_CLAIM)
            .setParameter("id", id)
            .setParameter("token", token)
            .getResultList();
    return rows.stream().findFirst().map(n -> ((Number) n).intValue());
  }

  /**
   * Records a failed attempt: back to pending after {@code delaySeconds} when retryable and
   * attempts remain, otherwise failed. Empty when the token is not the item's current claim.
   */
  public Optional<Item> fail(
      long id, String token, String error, boolean retryable, long delaySeconds, String actor) {
    return single(
        itemQuery(FAIL)
            .setParameter("id", id)
            .setParameter("token", token)
            .setParameter("actor", actor, String.class)
            .setParameter("error", error)
            .setParameter("retryable", retryable)
            .setParameter("delaySeconds", delaySeconds));
  }

  /** Extends the lease from now; empty when the token is not the item's current claim. */
  public Optional<Item> heartbeat(long id, String token, Integer leaseSeconds) {
    return single(
        itemQuery(HEARTBEAT)
            .setParameter("id", id)
            .setParameter("token", token)
            .setParameter("leaseSeconds", leaseSeconds, Integer.class));
  }

  /** Releases up to {@code batchSize} expired claims; returns how many. */
  public int reapExpiredLeases(int batchSize) {
    Number released =
        (Number)
            getEntityManager()
                .createNativeQuery(REAP_EXPIRED_LEASES)
                .setParameter("batchSize", batchSize)
                .getSingleResult();
    return released.intValue();
  }

  /** Deletes up to {@code batchSize} done or cancelled items older than the keep time. */
  public int pruneFinished(long keepSeconds, int batchSize) {
    return getEntityManager()
        .createNativeQuery(PRUNE_FINISHED)
        .setParameter("keepSeconds", keepSeconds)
        .setParameter("batchSize", batchSize)
        .executeUpdate();
  }

  /** Moves a failed or cancelled item back to pending; empty when it is in another state. */
  public Optional<Item> retry(long id, String actor) {
    return single(itemQuery(RETRY).setParameter("id", id).setParameter("actor", actor));
  }

  /** Cancels a pending or failed item; empty when it is in another state. */
  public Optional<Item> cancel(long id, String actor) {
    return single(itemQuery(CANCEL).setParameter("id", id).setParameter("actor", actor));
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

  private static NativeQuery<Item> claimParameters(
      NativeQuery<Item> query, String token, String worker, int leaseSeconds) {
    return query
        .setParameter("token", token)
        .setParameter("worker", worker, String.class)
        .setParameter("leaseSeconds", leaseSeconds);
  }

  @SuppressWarnings("unchecked")
  private NativeQuery<Item> itemQuery(String sql) {
    // A native query hands back the managed instance when an entity with the same id is already
    // in the persistence context, which would hide the row a statement just changed.
    getEntityManager().clear();
    return getEntityManager().createNativeQuery(sql, Item.class).unwrap(NativeQuery.class);
  }

  /** A conditional statement on one row changes zero rows or one: more is a bug, not an answer. */
  private static Optional<Item> single(NativeQuery<Item> query) {
    List<Item> rows = query.getResultList();
    if (rows.size() > 1) {
      throw new IllegalStateException("a single-row statement changed " + rows.size() + " rows");
    }
    return rows.stream().findFirst();
  }
}
