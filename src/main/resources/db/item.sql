-- Every statement claimq runs on items, each written out whole, once. ItemRepository loads them by
-- name when the service starts and refuses to start when a block's :parameters are not exactly the
-- ones its code binds; bench/pgbench runs the same blocks. A block is "-- name: <name>", its
-- why-comment, and the statement up to its closing semicolon.
--
-- Every state change is one conditional statement, and all times come from the database clock.
-- A conditional statement answers with the row whether or not it changed it, and a first column
-- "changed" says which, so one round trip decides 200, 204, 404, 409 or a replay. An operator's
-- statement reads the unchanged row FOR SHARE: a plain read would see the row as the statement's
-- snapshot had it, from before a concurrent change that the UPDATE waited for and then found no
-- longer matching, and would explain the refusal with a state the item has already left. A
-- worker's report (heartbeat, complete, fail, their batches, intent, release) reads it without a
-- lock: claims pick with SKIP LOCKED, which steps past a row held FOR SHARE, so a stale or repeated
-- report would hide a due pending item from every claim while it ran. Such a snapshot row can only
-- be stale in that one way, and then it is a row the UPDATE matched in the snapshot: sending under
-- the report's own token. A token is issued once and its claim ends once, so no committed row is
-- that again after the change; ItemRepository runs the statement once more on that answer, with a
-- snapshot that has the change, and takes the second answer as it is (a release refused at its
-- limit answers sending under its token too, every time).
--
-- An operator's change of one item may be conditional (an If-Match: :conditional, and the
-- :versions it names): made only while the row is at one of those versions. An item's version is
-- its row's xmin, which every change of the row replaces; the UPDATE compares the row as it is
-- now, not as a snapshot had it, and the answer carries the version as row_version (the ETag).

-- name: enqueue
-- The unique (queue, dedupe_key) constraint decides: of any number of concurrent inserts of one
-- key, exactly one inserts. DO NOTHING (not DO UPDATE), so a duplicate writes nothing. When the
-- key was taken, the row that holds it comes back unchanged, with the first of the request's
-- terms that it does not match (differs; NULL for a replay of the same work): the payload (jsonb
-- equality: key order and white space do not matter, 1.0 equals 1), then each of priority,
-- maxAttempts and runAt that the request gives (one it leaves out is not compared; runAt with the
-- run_at the enqueue set, not the one retries moved). No row at all means the holder committed
-- after this statement's snapshot was taken, or was deleted since: go again. A tombstone holder
-- is read FOR KEY SHARE, which sees it deleted: retention may have forgotten it while this insert
-- waited for that at the key's index, and another enqueue then inserted the key anew; the
-- snapshot still has the tombstone and would refuse the same work beside its 201 (or answer a
-- replay of an item that is gone). Only tombstones are deleted (forget-keys), so a live holder is
-- read without a lock: a lock writes, and a storm of replays of live items would pay for it on
-- every call (about 40% of the statement's rate in pgbench).
-- An item without maxAttempts takes the queue's policy, or else the service's default. A replay
-- keeps the holder's traceparent: the item's trace is the one that made it. A queue whose policy
-- requires approval takes the item in held, where no claim sees it until an operator approves it.
WITH inserted AS (
  INSERT INTO item (queue, dedupe_key, payload, priority, max_attempts, run_at, enqueued_run_at,
                    enqueued_by, traceparent, state)
  VALUES (:queue, :dedupeKey, CAST(:payload AS jsonb), coalesce(:priority, 0),
          coalesce(:maxAttempts, (SELECT max_attempts FROM queue_policy WHERE queue = :queue),
                   :defaultMaxAttempts),
          coalesce(:runAt, now()), coalesce(:runAt, now()), :enqueuedBy, :traceparent,
          CASE WHEN (SELECT require_approval FROM queue_policy WHERE queue = :queue)
               THEN 'held' ELSE 'pending' END)
  ON CONFLICT (queue, dedupe_key) DO NOTHING
  RETURNING *
),
tombstone AS (
  SELECT * FROM item
  WHERE queue = :queue AND dedupe_key = :dedupeKey AND pruned_at IS NOT NULL
    AND NOT EXISTS (SELECT FROM inserted)
  FOR KEY SHARE
),
holder AS (
  SELECT * FROM item
  WHERE queue = :queue AND dedupe_key = :dedupeKey AND pruned_at IS NULL
    AND NOT EXISTS (SELECT FROM inserted)
  UNION ALL
  SELECT * FROM tombstone
)
SELECT true AS changed, CAST(NULL AS text) AS differs, * FROM inserted
UNION ALL
SELECT false,
       CASE WHEN NOT (CASE WHEN pruned_at IS NULL THEN payload = CAST(:payload AS jsonb)
                           ELSE payload_sha256
                                = encode(sha256(convert_to(CAST(:payload AS jsonb)::text,
                                                           'UTF8')), 'hex') END)
              THEN 'payload'
            WHEN priority <> :priority THEN 'priority'
            WHEN max_attempts <> :maxAttempts THEN 'maxAttempts'
            WHEN enqueued_run_at <> :runAt THEN 'runAt' END,
       *
FROM holder;

-- name: enqueue-batch
-- The batch form of enqueue: the entries travel as one JSON document unpacked by
-- jsonb_to_recordset, so a batch is one statement whatever its size. Each entry (by ord, its
-- position from 1) comes back with the row that holds its key: the row this statement inserted
-- (changed only for the first entry of that key) or the one that was there, which the snapshot
-- shows and the insert cannot have added to; a tombstone read FOR KEY SHARE as enqueue reads it,
-- so that one forgotten meanwhile is not taken for the holder. An entry without a row is decided
-- alone. Held or pending, and differs, as for a single enqueue. Two entries of one key in the batch are each
-- compared with the row (the first one's, when it inserted it).
-- The keys are inserted in key order, whatever the batch's order: an insert of a key that another
-- uncommitted batch has inserted waits for that batch, so two batches of the same keys in other
-- orders would each wait for the other (a deadlock). The ids are drawn first, in the batch's
-- order, so that the batch's items are still claimed in the order it lists them.
WITH input AS (
  SELECT * FROM jsonb_to_recordset(CAST(:batch AS jsonb))
                AS e(ord int, dedupe_key text, payload jsonb, priority int, max_attempts int,
                     run_at timestamptz, traceparent text)
),
numbered AS MATERIALIZED (
  SELECT e.*, nextval(CAST('item_id_seq' AS regclass)) AS id
  FROM (SELECT * FROM input ORDER BY ord) e
),
inserted AS (
  INSERT INTO item (id, queue, dedupe_key, payload, priority, max_attempts, run_at,
                    enqueued_run_at, enqueued_by, traceparent, state)
  OVERRIDING SYSTEM VALUE
  SELECT id, :queue, dedupe_key, payload, coalesce(priority, 0),
         coalesce(max_attempts, (SELECT max_attempts FROM queue_policy WHERE queue = :queue),
                  :defaultMaxAttempts),
         coalesce(run_at, now()), coalesce(run_at, now()), :enqueuedBy, traceparent,
         CASE WHEN (SELECT require_approval FROM queue_policy WHERE queue = :queue)
              THEN 'held' ELSE 'pending' END
  FROM numbered
  ORDER BY dedupe_key, ord
  ON CONFLICT (queue, dedupe_key) DO NOTHING
  RETURNING *
),
tombstones AS (
  SELECT * FROM item
  WHERE queue = :queue AND dedupe_key IN (SELECT dedupe_key FROM input) AND pruned_at IS NOT NULL
    AND dedupe_key NOT IN (SELECT dedupe_key FROM inserted)
  FOR KEY SHARE
),
taken AS (
  SELECT * FROM item
  WHERE queue = :queue AND dedupe_key IN (SELECT dedupe_key FROM input) AND pruned_at IS NULL
    AND dedupe_key NOT IN (SELECT dedupe_key FROM inserted)
  UNION ALL
  SELECT * FROM tombstones
),
holders AS (
  SELECT true AS inserted, * FROM inserted
  UNION ALL
  SELECT false, * FROM taken
)
SELECT input.ord,
       holders.inserted AND input.ord = min(input.ord) OVER (PARTITION BY input.dedupe_key)
         AS changed,
       CASE WHEN NOT (CASE WHEN holders.pruned_at IS NULL THEN holders.payload = input.payload
                           ELSE holders.payload_sha256
                                = encode(sha256(convert_to(input.payload::text, 'UTF8')), 'hex')
                      END)
              THEN 'payload'
            WHEN holders.priority <> input.priority THEN 'priority'
            WHEN holders.max_attempts <> input.max_attempts THEN 'maxAttempts'
            WHEN holders.enqueued_run_at <> input.run_at THEN 'runAt' END
         AS differs,
       holders.*
FROM input JOIN holders ON holders.dedupe_key = input.dedupe_key;

-- name: claim
-- Claim one named item: only a pending, due item of a queue that is not paused can be claimed,
-- and only once. The claim sets the lease on the database clock (the worker's, else the queue
-- policy's, else the service's default) and opens the attempt row in the same statement, so a
-- claim and its history cannot disagree. The claimer learns what earlier attempts left behind:
-- possibly_sent when one declared a send intent and ended without a complete, or failed not
-- knowing whether the provider acted, or reported a late success (the send went out: a newer
-- claim it told alreadySent ended without completing, and put the item back); prior_attempts,
-- each of them (the snapshot does not see the attempt this statement opens). A lost claim needs no lock to be explained: the row's being
-- there is all a 204 (rather than a 404) depends on.
WITH target AS (
  SELECT i.id, coalesce(:leaseSeconds, p.lease_seconds, :defaultLeaseSeconds) AS lease_seconds
  FROM item i LEFT JOIN queue_policy p ON p.queue = i.queue
  WHERE i.id = :id AND NOT coalesce(p.paused, false)
),
claimed AS (
  UPDATE item i SET
    state = 'sending', attempts = i.attempts + 1, claim_token = :token, claimed_by = :worker,
    lease_seconds = target.lease_seconds,
    lease_expires_at = now() + target.lease_seconds * interval '1 second', updated_at = now()
  FROM target
  WHERE i.id = target.id AND i.state = 'pending' AND i.run_at <= now()
  RETURNING i.*
),
opened AS (
  INSERT INTO attempt (item_id, attempt, worker, token_hash)
  SELECT id, attempts, claimed_by, encode(sha256(convert_to(claim_token, 'UTF8')), 'hex')
  FROM claimed
)
SELECT true AS changed, claimed.*,
       EXISTS (SELECT FROM attempt a
               WHERE a.item_id = claimed.id
                 AND (a.sent_unknown OR (a.outcome = 'lease_expired' AND a.intent_at IS NOT NULL)
                      OR a.late_reported_at IS NOT NULL))
         AS possibly_sent,
       coalesce((SELECT jsonb_agg(jsonb_build_object(
                    'attempt', a.attempt, 'worker', a.worker, 'claimedAt', a.claimed_at,
                    'intentAt', a.intent_at, 'finishedAt', a.finished_at, 'outcome', a.outcome,
                    'error', a.error, 'sentUnknown', a.sent_unknown, 'finishedBy', a.finished_by,
                    'lateExternalRef', a.late_external_ref, 'lateReportedAt', a.late_reported_at,
                    'lateReportedBy', a.late_reported_by) ORDER BY a.id)
                  FROM attempt a WHERE a.item_id = claimed.id), '[]') AS prior_attempts
FROM claimed
UNION ALL
SELECT false, item.*, false, NULL FROM item WHERE id = :id AND NOT EXISTS (SELECT FROM claimed);

-- name: claim-next
-- Claim the next due item of a queue that is not paused, as claim does one named item. The pick
-- reads the item_claimable index from the front,
-- LIMIT 1. FOR UPDATE SKIP LOCKED makes concurrent claimers step past a row another transaction
-- is claiming, instead of queueing behind it (or both taking it). The pick is MATERIALIZED: it
-- runs once, and its LIMIT fences how many rows the UPDATE can touch. Were it folded into the
-- UPDATE as a subquery, the planner could run it again for each row it joins, claiming more than
-- one item under concurrency.
WITH policy AS MATERIALIZED (
  SELECT coalesce(:leaseSeconds, (SELECT lease_seconds FROM queue_policy WHERE queue = :queue),
                  :defaultLeaseSeconds) AS lease_seconds,
         coalesce((SELECT paused FROM queue_policy WHERE queue = :queue), false) AS paused
),
next AS MATERIALIZED (
  SELECT id FROM item
  WHERE queue = :queue AND state = 'pending' AND run_at <= now()
    AND NOT (SELECT paused FROM policy)
  ORDER BY priority DESC, run_at, id
  LIMIT 1
  FOR UPDATE SKIP LOCKED
),
claimed AS (
  UPDATE item i SET
    state = 'sending', attempts = i.attempts + 1, claim_token = :token, claimed_by = :worker,
    lease_seconds = policy.lease_seconds,
    lease_expires_at = now() + policy.lease_seconds * interval '1 second', updated_at = now()
  FROM next, policy WHERE i.id = next.id
  RETURNING i.*
),
opened AS (
  INSERT INTO attempt (item_id, attempt, worker, token_hash)
  SELECT id, attempts, claimed_by, encode(sha256(convert_to(claim_token, 'UTF8')), 'hex')
  FROM claimed
)
SELECT claimed.*,
       EXISTS (SELECT FROM attempt a
               WHERE a.item_id = claimed.id
                 AND (a.sent_unknown OR (a.outcome = 'lease_expired' AND a.intent_at IS NOT NULL)
                      OR a.late_reported_at IS NOT NULL))
         AS possibly_sent,
       coalesce((SELECT jsonb_agg(jsonb_build_object(
                    'attempt', a.attempt, 'worker', a.worker, 'claimedAt', a.claimed_at,
                    'intentAt', a.intent_at, 'finishedAt', a.finished_at, 'outcome', a.outcome,
                    'error', a.error, 'sentUnknown', a.sent_unknown, 'finishedBy', a.finished_by,
                    'lateExternalRef', a.late_external_ref, 'lateReportedAt', a.late_reported_at,
                    'lateReportedBy', a.late_reported_by) ORDER BY a.id)
                  FROM attempt a WHERE a.item_id = claimed.id), '[]') AS prior_attempts
FROM claimed;

-- name: claim-next-batch
-- Up to :max items, each with its own token, matched by position. FOR UPDATE cannot sit with a
-- window function, so the locking pick is a subquery and the numbering is done outside it; both
-- are MATERIALIZED for the reason claim-next gives.
WITH policy AS MATERIALIZED (
  SELECT coalesce(:leaseSeconds, (SELECT lease_seconds FROM queue_policy WHERE queue = :queue),
                  :defaultLeaseSeconds) AS lease_seconds,
         coalesce((SELECT paused FROM queue_policy WHERE queue = :queue), false) AS paused
),
picked AS MATERIALIZED (
  SELECT id, priority, run_at FROM item
  WHERE queue = :queue AND state = 'pending' AND run_at <= now()
    AND NOT (SELECT paused FROM policy)
  ORDER BY priority DESC, run_at, id
  LIMIT :max
  FOR UPDATE SKIP LOCKED
),
next AS MATERIALIZED (
  SELECT id, row_number() OVER (ORDER BY priority DESC, run_at, id) AS n FROM picked
),
tokens AS (
  SELECT t.token, t.n FROM jsonb_array_elements_text(CAST(:tokens AS jsonb))
                           WITH ORDINALITY AS t(token, n)
),
claimed AS (
  UPDATE item i SET
    state = 'sending', attempts = i.attempts + 1, claim_token = tokens.token, claimed_by = :worker,
    lease_seconds = policy.lease_seconds,
    lease_expires_at = now() + policy.lease_seconds * interval '1 second', updated_at = now()
  FROM next JOIN tokens ON tokens.n = next.n, policy
  WHERE i.id = next.id
  RETURNING i.*
),
opened AS (
  INSERT INTO attempt (item_id, attempt, worker, token_hash)
  SELECT id, attempts, claimed_by, encode(sha256(convert_to(claim_token, 'UTF8')), 'hex')
  FROM claimed
)
SELECT claimed.*,
       EXISTS (SELECT FROM attempt a
               WHERE a.item_id = claimed.id
                 AND (a.sent_unknown OR (a.outcome = 'lease_expired' AND a.intent_at IS NOT NULL)
                      OR a.late_reported_at IS NOT NULL))
         AS possibly_sent,
       coalesce((SELECT jsonb_agg(jsonb_build_object(
                    'attempt', a.attempt, 'worker', a.worker, 'claimedAt', a.claimed_at,
                    'intentAt', a.intent_at, 'finishedAt', a.finished_at, 'outcome', a.outcome,
                    'error', a.error, 'sentUnknown', a.sent_unknown, 'finishedBy', a.finished_by,
                    'lateExternalRef', a.late_external_ref, 'lateReportedAt', a.late_reported_at,
                    'lateReportedBy', a.late_reported_by) ORDER BY a.id)
                  FROM attempt a WHERE a.item_id = claimed.id), '[]') AS prior_attempts
FROM claimed;

-- name: heartbeat
-- Extends the lease from now, by the length given, which later heartbeats then default to, or by
-- the length last set (the claim's, or an earlier heartbeat's). Only the current holder of a
-- claim can, and only while the item is still sending.
WITH extended AS (
  UPDATE item SET
    lease_seconds = coalesce(:leaseSeconds, lease_seconds),
    lease_expires_at = now() + coalesce(:leaseSeconds, lease_seconds) * interval '1 second',
    updated_at = now()
  WHERE id = :id AND claim_token = :token AND state = 'sending'
  RETURNING *
),
-- The unchanged row is read without a lock (see the top of this file).
unchanged AS (
  SELECT * FROM item WHERE id = :id AND NOT EXISTS (SELECT FROM extended)
)
SELECT true AS changed, * FROM extended
UNION ALL
SELECT false, * FROM unchanged;

-- name: complete-held
-- The common complete: the current holder finishing its claim, and nothing else. Only the current
-- holder of a claim can finish it, and only while the item is still sending: once the reaper has
-- released an expired lease, the old token matches nothing. No row means that this call changed
-- nothing, and complete (below) runs next to say why: a replay, a late success, a stale token or
-- no such item. A token is issued once and its claim never comes back, so complete's own finished
-- matches nothing either then: the pair answers as complete alone would. Kept apart because
-- PostgreSQL sets up every part of a statement on each run, and complete's late-success and
-- refusal parts, which change nothing in the common case, cost about 5% of the database's CPU
-- per drained item (docs/performance.md).
WITH finished AS (
  UPDATE item SET state = 'done', external_ref = :externalRef, lease_seconds = NULL,
                  lease_expires_at = NULL, updated_at = now(),
                  -- Told that an earlier claim's send went through, and finished with another
                  -- reference (or none): a second send, as a late success after it would be.
                  duplicate_sends = duplicate_sends
                    + CASE WHEN already_sent_attempt IS NOT NULL
                                AND already_sent_ref IS DISTINCT FROM CAST(:externalRef AS text)
                           THEN 1 ELSE 0 END
  WHERE id = :id AND claim_token = :token AND state = 'sending'
  RETURNING *
),
closed AS (
  UPDATE attempt a SET finished_at = now(), outcome = 'done', finished_by = :actor
  FROM finished WHERE a.item_id = finished.id AND a.finished_at IS NULL
)
-- held_since: when the finished claim began (its attempt, still open in this statement's
-- snapshot), for the processing-time metric, on the database clock. The row has complete's
-- shape, whose reader it shares.
SELECT true AS changed, false AS late, f.*, a.claimed_at AS held_since,
       CAST(NULL AS text) AS last_outcome FROM finished f
LEFT JOIN attempt a ON a.item_id = f.id AND a.finished_at IS NULL;

-- name: complete-held-claim-next
-- A holder's complete that asks for the next item (complete with next), in one statement:
-- complete-held, then claim-next's claim of the finished item's queue. One round trip and one
-- commit per item instead of the three round trips of a transaction of two statements, and
-- PostgreSQL sets up and commits one statement instead of two. The claim depends on the finish:
-- its queue is read from finished, so when this call finished nothing (a replay, a stale token, no
-- such item) there is no queue and nothing is claimed, and the service then runs the
-- two-statement transaction (complete-held, complete, claim-next), which says why as before. The
-- pick cannot take the item being finished: it is sending in this statement's snapshot. Pick and
-- policy are MATERIALIZED, and the pick locks with SKIP LOCKED under a LIMIT, for the reasons
-- claim-next gives; the queue's policy row is empty while it is paused, so nothing is picked then.
-- One row a part: claimed_next false for the finished item (with held_since, as complete-held
-- answers), true for the claimed one (with possibly_sent and prior_attempts, as claim-next does).
WITH finished AS (
  UPDATE item SET state = 'done', external_ref = :externalRef, lease_seconds = NULL,
                  lease_expires_at = NULL, updated_at = now(),
                  -- Told that an earlier claim's send went through, and finished with another
                  -- reference (or none): a second send, as a late success after it would be.
                  duplicate_sends = duplicate_sends
                    + CASE WHEN already_sent_attempt IS NOT NULL
                                AND already_sent_ref IS DISTINCT FROM CAST(:externalRef AS text)
                           THEN 1 ELSE 0 END
  WHERE id = :id AND claim_token = :token AND state = 'sending'
  RETURNING *
),
closed AS (
  UPDATE attempt a SET finished_at = now(), outcome = 'done', finished_by = :actor
  FROM finished WHERE a.item_id = finished.id AND a.finished_at IS NULL
),
policy AS MATERIALIZED (
  SELECT f.queue, coalesce(:leaseSeconds, p.lease_seconds, :defaultLeaseSeconds) AS lease_seconds
  FROM finished f LEFT JOIN queue_policy p ON p.queue = f.queue
  WHERE NOT coalesce(p.paused, false)
),
next AS MATERIALIZED (
  SELECT id FROM item
  WHERE queue = (SELECT queue FROM policy) AND state = 'pending' AND run_at <= now()
  ORDER BY priority DESC, run_at, id
  LIMIT 1
  FOR UPDATE SKIP LOCKED
),
claimed AS (
  UPDATE item i SET
    state = 'sending', attempts = i.attempts + 1, claim_token = :nextToken, claimed_by = :worker,
    lease_seconds = policy.lease_seconds,
    lease_expires_at = now() + policy.lease_seconds * interval '1 second', updated_at = now()
  FROM next, policy WHERE i.id = next.id
  RETURNING i.*
),
opened AS (
  INSERT INTO attempt (item_id, attempt, worker, token_hash)
  SELECT id, attempts, claimed_by, encode(sha256(convert_to(claim_token, 'UTF8')), 'hex')
  FROM claimed
)
SELECT false AS claimed_next, true AS changed, false AS late, f.*, a.claimed_at AS held_since,
       NULL AS possibly_sent, NULL AS prior_attempts
FROM finished f LEFT JOIN attempt a ON a.item_id = f.id AND a.finished_at IS NULL
UNION ALL
SELECT true, true, false, claimed.*, NULL,
       EXISTS (SELECT FROM attempt a
               WHERE a.item_id = claimed.id
                 AND (a.sent_unknown OR (a.outcome = 'lease_expired' AND a.intent_at IS NOT NULL)
                      OR a.late_reported_at IS NOT NULL)),
       coalesce((SELECT jsonb_agg(jsonb_build_object(
                    'attempt', a.attempt, 'worker', a.worker, 'claimedAt', a.claimed_at,
                    'intentAt', a.intent_at, 'finishedAt', a.finished_at, 'outcome', a.outcome,
                    'error', a.error, 'sentUnknown', a.sent_unknown, 'finishedBy', a.finished_by,
                    'lateExternalRef', a.late_external_ref, 'lateReportedAt', a.late_reported_at,
                    'lateReportedBy', a.late_reported_by) ORDER BY a.id)
                  FROM attempt a WHERE a.item_id = claimed.id), '[]')
FROM claimed;

-- name: complete
-- Only the current holder of a claim can finish it, and only while the item is still sending:
-- once the reaper has released an expired lease, the old token matches nothing. The service runs
-- complete-held first and this only when that changed nothing; this alone decides every case.
--
-- A complete with the token of an ended attempt of this item (one of its attempts' token hashes:
-- an earlier claim's, or the latest claim's after its own fail or release) and an externalRef is
-- a late success: the send happened. It is recorded on that attempt, once, and
-- acts on the item as it is when the row is locked: pending, failed or cancelled, it is done
-- with that reference and nothing is sent again (a cancel came too late: the send it meant to
-- stop went out, and an item left cancelled would invite the same work again under a new key);
-- sending under a newer claim, that claimer's next
-- heartbeat or intent says it was sent already; done already, it is a send that went out twice,
-- counted. Any other token changes nothing. The answer stays a refusal (changed is false), with
-- late saying the report was recorded.
-- A late success locks the item (target) before the attempt it records on: the item, then its
-- attempts, is the order every other statement takes. Taken the other way round, a statement that
-- holds the item and then locks its attempts would wait for this statement while it waits for
-- that one (a deadlock). target locks only for a late success (ended, in this statement's
-- snapshot): a lock on a pending item hides it from claims, while a made-up token, or a repeat of
-- a complete or of a late success, changes nothing. An attempt ended after the snapshot is open in
-- it, and the item sending under this token: then nothing is locked, and the answer is outdated,
-- which ItemRepository runs once more with a fresh snapshot. After complete-held (run first) that
-- cannot happen: it finished the claim if current, else waited for the change that ended it,
-- which this statement's snapshot then has.
WITH finished AS (
  UPDATE item SET state = 'done', external_ref = :externalRef, lease_seconds = NULL,
                  lease_expires_at = NULL, updated_at = now(),
                  -- Told that an earlier claim's send went through, and finished with another
                  -- reference (or none): a second send, as a late success after it would be.
                  duplicate_sends = duplicate_sends
                    + CASE WHEN already_sent_attempt IS NOT NULL
                                AND already_sent_ref IS DISTINCT FROM CAST(:externalRef AS text)
                           THEN 1 ELSE 0 END
  WHERE id = :id AND claim_token = :token AND state = 'sending'
  RETURNING *
),
closed AS (
  UPDATE attempt a SET finished_at = now(), outcome = 'done', finished_by = :actor
  FROM finished WHERE a.item_id = finished.id AND a.finished_at IS NULL
),
ended AS MATERIALIZED (
  SELECT a.id FROM attempt a
  WHERE a.item_id = :id AND CAST(:externalRef AS text) IS NOT NULL
    AND NOT EXISTS (SELECT FROM finished)
    -- The claim may be the item's latest, ended by its own fail or release: the send happened
    -- all the same. A repeat of its own complete finds its attempt done.
    AND a.token_hash = encode(sha256(convert_to(:token, 'UTF8')), 'hex')
    AND a.finished_at IS NOT NULL AND a.outcome <> 'done' AND a.late_reported_at IS NULL
),
target AS MATERIALIZED (
  SELECT id FROM item WHERE id = :id AND EXISTS (SELECT FROM ended) FOR NO KEY UPDATE
),
late AS (
  UPDATE attempt a SET late_external_ref = CAST(:externalRef AS text), late_reported_at = now(),
                       late_reported_by = :actor
  FROM target, ended
  -- Rechecked on the attempt as it is now: a concurrent late success of it, which held the item
  -- while target waited, has recorded it.
  WHERE a.id = ended.id AND a.item_id = target.id AND a.late_reported_at IS NULL
  -- resolved: an operator's resolve finished the item, if applied finds it done (done is final).
  -- Either this statement's snapshot has the resolve action, or the resolve committed while
  -- target waited for the item's lock: then the snapshot has the item still failed, and of what
  -- takes a failed item to done, only a resolve leaves it without a reference (a late success
  -- brings one).
  RETURNING a.item_id, a.attempt,
            EXISTS (SELECT FROM item_action r WHERE r.item_id = a.item_id AND r.action = 'resolve')
              OR (SELECT s.state FROM item s WHERE s.id = a.item_id) = 'failed' AS resolved
),
applied AS (
  UPDATE item i SET
    state = CASE WHEN i.state IN ('pending', 'failed', 'cancelled') THEN 'done' ELSE i.state END,
    -- An item an operator resolved without a reference takes the one the send came back with:
    -- the operator confirmed that a send went out, and this attempt reports having made it.
    external_ref = CASE WHEN i.state IN ('pending', 'failed', 'cancelled')
                             OR i.state = 'done' AND i.external_ref IS NULL AND late.resolved
                        THEN CAST(:externalRef AS text) ELSE i.external_ref END,
    already_sent_attempt = CASE WHEN i.state = 'sending' THEN late.attempt
                                ELSE i.already_sent_attempt END,
    already_sent_ref = CASE WHEN i.state = 'sending' THEN CAST(:externalRef AS text)
                            ELSE i.already_sent_ref END,
    -- Done with the same reference: the provider answered a repeat of the one send (the item's
    -- idempotency key at work); resolved without one: the send the operator confirmed. Done by
    -- a claim with another reference, or with none to compare with, is a second send.
    duplicate_sends = i.duplicate_sends
                      + CASE WHEN i.state = 'done'
                              AND i.external_ref IS DISTINCT FROM CAST(:externalRef AS text)
                              AND NOT (i.external_ref IS NULL AND late.resolved)
                             THEN 1 ELSE 0 END,
    updated_at = now()
  FROM late WHERE i.id = late.item_id
  RETURNING i.*
),
unchanged AS (
  SELECT * FROM item
  WHERE id = :id AND NOT EXISTS (SELECT FROM finished) AND NOT EXISTS (SELECT FROM applied)
)
-- held_since: when the finished claim began (its attempt, still open in this statement's
-- snapshot), for the processing-time metric, on the database clock.
-- last_outcome, of an unchanged row: how the item's latest attempt ended, which tells a repeat of
-- this claim's complete (done) from a complete after its own fail or release (see WorkService).
-- The unchanged row and its attempt are read without a lock, from the statement's snapshot, so
-- they agree (see the top of this file for the one case in which that snapshot is out of date).
SELECT true AS changed, false AS late, f.*, a.claimed_at AS held_since,
       CAST(NULL AS text) AS last_outcome FROM finished f
LEFT JOIN attempt a ON a.item_id = f.id AND a.finished_at IS NULL
UNION ALL
SELECT false, true, *, NULL, NULL FROM applied
UNION ALL
SELECT false, false, u.*, NULL, (SELECT a.outcome FROM attempt a WHERE a.item_id = u.id ORDER BY a.id DESC LIMIT 1) FROM unchanged u;

-- name: fail
-- A failed attempt goes back to pending while it is retryable and attempts remain, otherwise it
-- stays failed. The caller cannot know which attempt this is, so it passes the backoff schedule:
-- the delay for each attempt up to the one that reaches the cap, whose delay serves every later
-- attempt too. Which applies is decided here, against the row as it is when the statement runs.
-- A retryable fail whose sender cannot tell whether the provider acted (sentUnknown) is held,
-- failed for a human, when the queue's policy says hold: it is never sent again by itself. And
-- a retry that would come due past the provider's idempotency horizon (the queue's
-- providerKeyTtl after the item was created, less a lease for the retry to run in) is not
-- scheduled: the provider would no longer know the key, so the retry could be a second send.
-- The claim is read locked (current), so the judgement uses the item as it is now: read from the
-- snapshot, a heartbeat of the claim that changed its lease while this statement waited would be
-- missed. An unchanged row comes back with how this token's own attempt ended (outcome,
-- sent_unknown, error; the token's hash finds it): a repeated fail is told by its claim's attempt,
-- not by the item, which may have been claimed again since (by the fail's own next, or anyone).
WITH current AS (
  SELECT id, queue, attempts, lease_seconds, created_at FROM item
  WHERE id = :id AND claim_token = :token AND state = 'sending'
  FOR NO KEY UPDATE
),
judged AS (
  SELECT c.id, d.delay,
         :retryable AND :sentUnknown
           AND coalesce(p.on_unknown_outcome, :defaultOnUnknownOutcome) = 'hold' AS held,
         p.provider_key_ttl_seconds IS NOT NULL
           AND now() + d.delay * interval '1 second'
               > c.created_at + (p.provider_key_ttl_seconds - c.lease_seconds) * interval '1 second'
           AS past_horizon
  FROM current c
  LEFT JOIN queue_policy p ON p.queue = c.queue
  CROSS JOIN LATERAL (SELECT (CAST(:delays AS bigint[]))[least(c.attempts,
                               cardinality(CAST(:delays AS bigint[])))] AS delay) d
),
finished AS (
  UPDATE item i SET
    state = CASE WHEN :retryable AND i.attempts < i.max_attempts AND NOT judged.held
                      AND NOT judged.past_horizon
                 THEN 'pending' ELSE 'failed' END,
    run_at = CASE WHEN :retryable AND i.attempts < i.max_attempts AND NOT judged.held
                       AND NOT judged.past_horizon
                  THEN now() + judged.delay * interval '1 second'
                  ELSE i.run_at END,
    last_error = CASE WHEN judged.held THEN 'outcome unknown: ' || :error
                      WHEN :retryable AND i.attempts < i.max_attempts AND judged.past_horizon
                        THEN 'idempotency horizon passed: ' || :error
                      ELSE :error END,
    lease_seconds = NULL, lease_expires_at = NULL, updated_at = now()
  FROM judged
  WHERE i.id = judged.id AND i.claim_token = :token AND i.state = 'sending'
  RETURNING i.*
),
closed AS (
  UPDATE attempt a SET finished_at = now(), error = finished.last_error, finished_by = :actor,
    sent_unknown = :sentUnknown,
    outcome = CASE WHEN finished.state = 'pending' THEN 'retry' ELSE 'failed' END
  FROM finished WHERE a.item_id = finished.id AND a.finished_at IS NULL
  RETURNING a.item_id, a.claimed_at, a.sent_unknown
),
unchanged AS (
  SELECT * FROM item WHERE id = :id AND NOT EXISTS (SELECT FROM finished)
)
-- held_since as in complete.
SELECT true AS changed, f.*, c.claimed_at AS held_since, CAST(NULL AS text) AS last_outcome,
       c.sent_unknown AS last_sent_unknown, f.last_error AS attempt_error
FROM finished f
LEFT JOIN closed c ON c.item_id = f.id
UNION ALL
SELECT false, u.*, NULL, own.outcome, own.sent_unknown, own.error
FROM unchanged u
LEFT JOIN LATERAL (SELECT a.outcome, a.sent_unknown, a.error FROM attempt a
                   WHERE a.item_id = u.id
                     AND a.token_hash = encode(sha256(convert_to(:token, 'UTF8')), 'hex')) own
  ON true;

-- name: complete-batch
-- The batch form of complete, with exactly its conditions. Every entry's item comes back, changed
-- or not; an item two entries name comes back once, as this statement left it. Of entries that
-- name one claim, the first (by position) is the one applied, as if the entries came one by one:
-- the later ones are its repeats. The items it can finish are locked first, in id order (named):
-- two batches that lock the same items in other orders would each wait for the other (a
-- deadlock). Only those, sending under an entry's token in this statement's snapshot: a lock on a
-- pending item hides it from claims, and an entry with an ended or made-up token changes nothing
-- (a stale entry's late success is complete's, which BatchService runs for it). A claim a worker
-- holds is in the snapshot: it committed before the worker had its token. One that ended after
-- the snapshot is locked as the change committed, and left out then, no longer matching; its entry
-- is answered outdated (see the top of this file).
WITH input AS (
  SELECT DISTINCT ON (e.id, e.claim_token) e.id, e.claim_token, e.external_ref
  FROM ROWS FROM (jsonb_to_recordset(CAST(:batch AS jsonb))
                    AS (id bigint, claim_token text, external_ref text)) WITH ORDINALITY
         AS e(id, claim_token, external_ref, ord)
  ORDER BY e.id, e.claim_token, e.ord
),
named AS MATERIALIZED (
  SELECT id FROM item
  WHERE (id, claim_token) IN (SELECT id, claim_token FROM input) AND state = 'sending'
  ORDER BY id
  FOR NO KEY UPDATE
),
finished AS (
  UPDATE item i SET state = 'done', external_ref = input.external_ref, lease_seconds = NULL,
                    lease_expires_at = NULL, updated_at = now(),
                    -- As in complete.
                    duplicate_sends = i.duplicate_sends
                      + CASE WHEN i.already_sent_attempt IS NOT NULL
                                  AND i.already_sent_ref IS DISTINCT FROM input.external_ref
                             THEN 1 ELSE 0 END
  FROM input JOIN named ON named.id = input.id
  WHERE i.id = input.id AND i.claim_token = input.claim_token AND i.state = 'sending'
  RETURNING i.*
),
closed AS (
  UPDATE attempt a SET finished_at = now(), outcome = 'done', finished_by = :actor
  FROM finished WHERE a.item_id = finished.id AND a.finished_at IS NULL
),
unchanged AS (
  SELECT * FROM item
  WHERE id IN (SELECT id FROM input) AND id NOT IN (SELECT id FROM finished)
)
-- held_since and last_outcome as in complete.
SELECT true AS changed, f.*, a.claimed_at AS held_since, CAST(NULL AS text) AS last_outcome
FROM finished f
LEFT JOIN attempt a ON a.item_id = f.id AND a.finished_at IS NULL
UNION ALL
SELECT false, u.*, NULL, (SELECT a.outcome FROM attempt a WHERE a.item_id = u.id ORDER BY a.id DESC LIMIT 1) FROM unchanged u;

-- name: fail-batch
-- The batch form of fail, with exactly its conditions; each entry brings its own schedule. Of
-- entries that name one claim, the first (by position) is applied, and the items it can fail are
-- locked first, in id order, both as in complete-batch; the judgement reads the locked rows, so
-- each claim as it is now, as fail does.
WITH entry AS (
  SELECT DISTINCT ON (e.id, e.claim_token) e.id, e.claim_token, e.error, e.retryable,
         e.sent_unknown, e.delays
  FROM ROWS FROM (jsonb_to_recordset(CAST(:batch AS jsonb))
                    AS (id bigint, claim_token text, error text, retryable boolean,
                        sent_unknown boolean, delays bigint[])) WITH ORDINALITY
         AS e(id, claim_token, error, retryable, sent_unknown, delays, ord)
  ORDER BY e.id, e.claim_token, e.ord
),
named AS MATERIALIZED (
  SELECT id, queue, claim_token, state, attempts, lease_seconds, created_at FROM item
  WHERE (id, claim_token) IN (SELECT id, claim_token FROM entry) AND state = 'sending'
  ORDER BY id
  FOR NO KEY UPDATE
),
input AS (
  SELECT e.*,
         e.retryable AND e.sent_unknown
           AND coalesce(p.on_unknown_outcome, :defaultOnUnknownOutcome) = 'hold' AS held,
         p.provider_key_ttl_seconds IS NOT NULL
           AND now() + e.delays[least(c.attempts, cardinality(e.delays))] * interval '1 second'
               > c.created_at + (p.provider_key_ttl_seconds - c.lease_seconds) * interval '1 second'
           AS past_horizon
  FROM named c
  JOIN entry e ON e.id = c.id AND e.claim_token = c.claim_token
  LEFT JOIN queue_policy p ON p.queue = c.queue
  WHERE c.state = 'sending'
),
finished AS (
  UPDATE item i SET
    state = CASE WHEN input.retryable AND i.attempts < i.max_attempts AND NOT input.held
                      AND NOT input.past_horizon
                 THEN 'pending' ELSE 'failed' END,
    run_at = CASE WHEN input.retryable AND i.attempts < i.max_attempts AND NOT input.held
                       AND NOT input.past_horizon
                  THEN now() + input.delays[least(i.attempts, cardinality(input.delays))]
                               * interval '1 second'
                  ELSE i.run_at END,
    last_error = CASE WHEN input.held THEN 'outcome unknown: ' || input.error
                      WHEN input.retryable AND i.attempts < i.max_attempts AND input.past_horizon
                        THEN 'idempotency horizon passed: ' || input.error
                      ELSE input.error END,
    lease_seconds = NULL, lease_expires_at = NULL, updated_at = now()
  FROM input
  WHERE i.id = input.id AND i.claim_token = input.claim_token AND i.state = 'sending'
  RETURNING i.*
),
closed AS (
  UPDATE attempt a SET finished_at = now(), error = finished.last_error, finished_by = :actor,
    sent_unknown = input.sent_unknown,
    outcome = CASE WHEN finished.state = 'pending' THEN 'retry' ELSE 'failed' END
  FROM finished JOIN input ON input.id = finished.id AND input.claim_token = finished.claim_token
  WHERE a.item_id = finished.id AND a.finished_at IS NULL
  RETURNING a.item_id, a.claimed_at, a.sent_unknown
),
unchanged AS (
  SELECT * FROM item
  WHERE id IN (SELECT id FROM entry) AND id NOT IN (SELECT id FROM finished)
)
-- held_since as in fail; last_outcome and last_sent_unknown of the latest attempt. An entry this
-- batch did not change is answered by the single fail, which finds the entry's own attempt.
SELECT true AS changed, f.*, c.claimed_at AS held_since, CAST(NULL AS text) AS last_outcome,
       c.sent_unknown AS last_sent_unknown
FROM finished f
LEFT JOIN closed c ON c.item_id = f.id
UNION ALL
SELECT false, u.*, NULL, last.outcome, last.sent_unknown
FROM unchanged u
LEFT JOIN LATERAL (SELECT a.outcome, a.sent_unknown FROM attempt a WHERE a.item_id = u.id
                   ORDER BY a.id DESC LIMIT 1) last ON true;

-- name: retry
-- An operator's second chance: a fresh budget of attempts, due now. The history and the
-- idempotency key stay, so the provider still recognises earlier sends of this item, unless the
-- provider's idempotency horizon has passed (the queue's providerKeyTtl after the item was
-- created, less a lease): then only a forced retry goes ahead, and its answer says so. A proposal
-- an operator rejected (its latest approval decision a reject: item.rejected, read from the locked
-- row) was never approved: it goes back to held, before the approval gate, and never straight to
-- the workers.
WITH target AS (
  SELECT i.id,
         p.provider_key_ttl_seconds IS NOT NULL
           AND now() > i.created_at + (p.provider_key_ttl_seconds
                                       - coalesce(p.lease_seconds, :defaultLeaseSeconds))
                                      * interval '1 second' AS past_horizon
  FROM item i LEFT JOIN queue_policy p ON p.queue = i.queue
  WHERE i.id = :id
),
retried AS (
  UPDATE item i SET state = CASE WHEN i.rejected THEN 'held' ELSE 'pending' END,
                    attempts = 0, run_at = now(), claim_token = NULL, updated_at = now()
  FROM target
  WHERE i.id = target.id AND i.state IN ('failed', 'cancelled') AND i.pruned_at IS NULL
    AND (:force OR NOT target.past_horizon)
    AND (NOT :conditional OR CAST(CAST(i.xmin AS text) AS bigint) = ANY (CAST(:versions AS bigint[])))
  RETURNING i.*, CAST(CAST(i.xmin AS text) AS bigint) AS row_version
),
recorded AS (
  -- Past the horizon only a forced retry gets here: its audit entry says it was forced.
  INSERT INTO item_action (item_id, action, actor, note)
  SELECT r.id, 'retry', :actor,
         CASE WHEN t.past_horizon THEN 'forced past the provider''s idempotency horizon' END
  FROM retried r CROSS JOIN target t
),
unchanged AS (
  SELECT *, CAST(CAST(xmin AS text) AS bigint) AS row_version
  FROM item WHERE id = :id AND NOT EXISTS (SELECT FROM retried) FOR SHARE
)
SELECT true AS changed, (SELECT past_horizon FROM target), * FROM retried
UNION ALL
SELECT false, (SELECT past_horizon FROM target), * FROM unchanged;

-- name: cancel
-- Only work that is not out with a worker can be cancelled: pending or failed.
WITH cancelled AS (
  UPDATE item SET state = 'cancelled', claim_token = NULL, updated_at = now()
  WHERE id = :id AND state IN ('pending', 'failed')
    AND (NOT :conditional OR CAST(CAST(xmin AS text) AS bigint) = ANY (CAST(:versions AS bigint[])))
  RETURNING *, CAST(CAST(xmin AS text) AS bigint) AS row_version
),
recorded AS (
  INSERT INTO item_action (item_id, action, actor) SELECT id, 'cancel', :actor FROM cancelled
),
unchanged AS (
  SELECT *, CAST(CAST(xmin AS text) AS bigint) AS row_version
  FROM item WHERE id = :id AND NOT EXISTS (SELECT FROM cancelled) FOR SHARE
)
SELECT true AS changed, * FROM cancelled
UNION ALL
SELECT false, * FROM unchanged;

-- name: act-on-matching
-- An operator's retry, cancel, approve or reject (:action) of the items a filter matches, in
-- state :state, newest first, at most :limit of them; one more is picked to tell whether more
-- match. Each changes exactly as the single action changes it, and is audited (a reject with its
-- reason, :note, as its note and last error; the others with the note "bulk"). A retry does not pick
-- an item past its provider's idempotency horizon: only a single, forced retry sends it again; a
-- retried proposal that was rejected goes back to held, as a single retry sends it.
-- SKIP LOCKED steps past an item a worker or another operator is changing right now, and the
-- lock rechecks the filter. A dry run is preview-matching, below.
-- The picked rows are read whole from the lock, as they are now, and tagged: preview_tag is an
-- md5 of the action and of each picked id with its row's version (xmin). A :previewTag (from a
-- dry run) makes the change conditional: made only if the filter picks exactly the items that dry
-- run listed, each unchanged since; otherwise nothing changes and the answer lists what is picked
-- now, with as_previewed false. The answer starts from the one-row tag, so it has a row even when
-- nothing matches (its item columns are then null).
WITH picked AS MATERIALIZED (
  SELECT i.*, CAST(CAST(i.xmin AS text) AS bigint) AS row_version FROM item i
  LEFT JOIN queue_policy p ON p.queue = i.queue
  WHERE i.state = :state AND i.pruned_at IS NULL
    AND (CAST(:queues AS text[]) IS NULL OR i.queue = ANY (CAST(:queues AS text[])))
    AND (CAST(:reason AS text) IS NULL
         OR strpos(lower(i.last_error), lower(CAST(:reason AS text))) > 0)
    AND (CAST(:updatedAfter AS timestamptz) IS NULL
         OR i.updated_at >= CAST(:updatedAfter AS timestamptz))
    AND (CAST(:updatedBefore AS timestamptz) IS NULL
         OR i.updated_at < CAST(:updatedBefore AS timestamptz))
    AND NOT (:action = 'retry' AND p.provider_key_ttl_seconds IS NOT NULL
             AND now() > i.created_at + (p.provider_key_ttl_seconds
                                         - coalesce(p.lease_seconds, :defaultLeaseSeconds))
                                        * interval '1 second')
  ORDER BY i.id DESC
  LIMIT :limit + 1
  FOR UPDATE OF i SKIP LOCKED
),
chosen AS (
  SELECT * FROM picked ORDER BY id DESC LIMIT :limit
),
decided AS (
  SELECT tag AS preview_tag, (SELECT count(*) FROM picked) > :limit AS more,
         CAST(:previewTag AS text) IS NULL OR tag = CAST(:previewTag AS text) AS as_previewed
  FROM (SELECT md5(CAST(:action AS text) || ':'
                   || coalesce(string_agg(id || '@' || row_version, ',' ORDER BY id), '')) AS tag
        FROM chosen) tagged
),
acted AS (
  UPDATE item i SET
    state = CASE WHEN :action = 'retry' AND i.rejected THEN 'held'
                 WHEN :action IN ('retry', 'approve') THEN 'pending'
                 ELSE 'cancelled' END,
    rejected = CASE WHEN :action = 'reject' THEN true
                    WHEN :action = 'approve' THEN false
                    ELSE i.rejected END,
    attempts = CASE WHEN :action = 'retry' THEN 0 ELSE i.attempts END,
    run_at = CASE WHEN :action = 'retry' THEN now() ELSE i.run_at END,
    last_error = CASE WHEN :action = 'reject' THEN CAST(:note AS text) ELSE i.last_error END,
    claim_token = NULL, updated_at = now()
  FROM chosen, decided
  WHERE i.id = chosen.id AND decided.as_previewed
  RETURNING i.*, CAST(CAST(i.xmin AS text) AS bigint) AS row_version
),
recorded AS (
  INSERT INTO item_action (item_id, action, actor, note)
  SELECT id, :action, :actor, coalesce(CAST(:note AS text), 'bulk') FROM acted
),
answered AS (
  SELECT true AS changed, * FROM acted
  UNION ALL
  SELECT false, * FROM chosen WHERE NOT (SELECT as_previewed FROM decided)
)
SELECT decided.*, answered.*
FROM decided LEFT JOIN answered ON true
ORDER BY answered.id DESC;

-- name: preview-matching
-- A dry run of act-on-matching: the items it would pick now, and their tag, with nothing changed.
-- The filter, the order, the limit and the tag are act-on-matching's, clause for clause (a
-- confirmation compares its tag with this one). The rows are read from the statement's snapshot,
-- without a lock: claims pick with SKIP LOCKED, so a preview that locked the pending items it
-- lists would hide due work from every claim while it ran. An item a worker is changing right now
-- is listed as it was; if the change commits, the confirmation's tag differs and nothing is done.
WITH picked AS MATERIALIZED (
  SELECT i.*, CAST(CAST(i.xmin AS text) AS bigint) AS row_version FROM item i
  LEFT JOIN queue_policy p ON p.queue = i.queue
  WHERE i.state = :state AND i.pruned_at IS NULL
    AND (CAST(:queues AS text[]) IS NULL OR i.queue = ANY (CAST(:queues AS text[])))
    AND (CAST(:reason AS text) IS NULL
         OR strpos(lower(i.last_error), lower(CAST(:reason AS text))) > 0)
    AND (CAST(:updatedAfter AS timestamptz) IS NULL
         OR i.updated_at >= CAST(:updatedAfter AS timestamptz))
    AND (CAST(:updatedBefore AS timestamptz) IS NULL
         OR i.updated_at < CAST(:updatedBefore AS timestamptz))
    AND NOT (:action = 'retry' AND p.provider_key_ttl_seconds IS NOT NULL
             AND now() > i.created_at + (p.provider_key_ttl_seconds
                                         - coalesce(p.lease_seconds, :defaultLeaseSeconds))
                                        * interval '1 second')
  ORDER BY i.id DESC
  LIMIT :limit + 1
),
chosen AS (
  SELECT * FROM picked ORDER BY id DESC LIMIT :limit
),
decided AS (
  SELECT tag AS preview_tag, (SELECT count(*) FROM picked) > :limit AS more,
         true AS as_previewed
  FROM (SELECT md5(CAST(:action AS text) || ':'
                   || coalesce(string_agg(id || '@' || row_version, ',' ORDER BY id), '')) AS tag
        FROM chosen) tagged
)
SELECT decided.*, false AS changed, chosen.*
FROM decided LEFT JOIN chosen ON true
ORDER BY chosen.id DESC;

-- name: reap-expired-leases
-- Releases claims whose lease ran out. SKIP LOCKED steps past an item whose complete, fail or
-- intent is in flight; if that commits first, the row no longer matches state = 'sending' when
-- it is locked, so a finished item is never overwritten. Several instances may run this at once.
-- An expired item goes back to pending while attempts remain, except:
-- - held: its attempt declared a send intent, so it may have sent, and the queue's policy says
--   hold: it is failed for a human, never sent again by itself. The attempts are read locked
--   (open_attempt), which reads them as they are now: an intent that committed after this
--   statement's snapshot, before the item was locked here, is seen. A plain read misses it and
--   sends again an item whose worker was told to send. A CTE, because a locking read inside
--   the EXISTS below still answers the snapshot's version;
-- - a crash loop: this lease and the crashLoopAfter - 1 attempts before it (since the last
--   operator's retry) all expired, which is what a payload that kills its worker looks like:
--   failed at once, attempts left or not;
-- - past the provider's idempotency horizon (see fail): a retry now could be a second send.
WITH expired AS MATERIALIZED (
  SELECT id FROM item
  WHERE state = 'sending' AND lease_expires_at <= now()
  ORDER BY lease_expires_at
  LIMIT :batchSize
  FOR UPDATE SKIP LOCKED
),
open_attempt AS MATERIALIZED (
  SELECT a.item_id, a.intent_at FROM expired e JOIN attempt a ON a.item_id = e.id
  WHERE a.finished_at IS NULL
  FOR SHARE OF a
),
judged AS (
  SELECT e.id, k.crash_loop_after,
         coalesce(p.on_unknown_outcome, :defaultOnUnknownOutcome) = 'hold'
           AND EXISTS (SELECT FROM open_attempt o
                       WHERE o.item_id = e.id AND o.intent_at IS NOT NULL) AS held,
         (SELECT count(*) FILTER (WHERE last.outcome = 'lease_expired') = k.crash_loop_after - 1
                 AND count(*) = k.crash_loop_after - 1
          FROM (SELECT a.outcome FROM attempt a
                WHERE a.item_id = e.id AND a.finished_at IS NOT NULL
                  -- An operator's retry gives a fresh budget: earlier expiries are not this loop.
                  AND a.claimed_at > coalesce((SELECT max(r.at) FROM item_action r
                                               WHERE r.item_id = e.id AND r.action = 'retry'),
                                              '-infinity')
                ORDER BY a.id DESC
                LIMIT k.crash_loop_after - 1) last) AS crash_loop,
         p.provider_key_ttl_seconds IS NOT NULL
           AND now() > i.created_at
                       + (p.provider_key_ttl_seconds - i.lease_seconds) * interval '1 second'
           AS past_horizon
  FROM expired e
  JOIN item i ON i.id = e.id
  LEFT JOIN queue_policy p ON p.queue = i.queue
  CROSS JOIN LATERAL (SELECT coalesce(p.crash_loop_after, :defaultCrashLoopAfter)
                               AS crash_loop_after) k
),
released AS (
  UPDATE item i SET
    state = CASE WHEN judged.held OR judged.crash_loop OR judged.past_horizon
                      OR i.attempts >= i.max_attempts
                 THEN 'failed' ELSE 'pending' END,
    run_at = now(),
    last_error =
      CASE WHEN judged.held THEN 'outcome unknown: '
           WHEN judged.crash_loop
             THEN 'crash loop: ' || judged.crash_loop_after || ' leases expired in a row; '
           WHEN judged.past_horizon AND i.attempts < i.max_attempts
             THEN 'idempotency horizon passed: '
           ELSE '' END
      || 'lease expired: ' || coalesce('worker "' || i.claimed_by || '"', 'the worker')
      || ' did not complete, fail or heartbeat within ' || i.lease_seconds || ' s',
    claim_token = NULL, lease_seconds = NULL, lease_expires_at = NULL, updated_at = now()
  FROM judged WHERE i.id = judged.id
  RETURNING i.id, i.queue, i.last_error
),
closed AS (
  UPDATE attempt a SET finished_at = now(), outcome = 'lease_expired', error = released.last_error
  FROM released WHERE a.item_id = released.id AND a.finished_at IS NULL
)
SELECT queue, count(*) AS released FROM released GROUP BY queue;

-- name: intent
-- A worker's word, just before it calls the provider, that this attempt is about to send. Fenced
-- like complete (only the current claim, only while sending) and repeat-safe (the first intent's
-- time stays). The item is read FOR SHARE first, so the reaper (FOR UPDATE SKIP LOCKED) cannot
-- release the claim between the check and the write and decide without seeing the intent; and the
-- reaper reads the attempt locked, so it sees an intent that committed while its statement ran.
-- Only that current claim is locked: the unchanged row of a stale or repeated intent is read
-- without a lock (see the top of this file).
WITH current AS (
  SELECT id FROM item WHERE id = :id AND claim_token = :token AND state = 'sending' FOR SHARE
),
declared AS (
  UPDATE attempt a SET intent_at = coalesce(a.intent_at, now())
  FROM current WHERE a.item_id = current.id AND a.finished_at IS NULL
  RETURNING a.item_id
),
unchanged AS (
  SELECT * FROM item WHERE id = :id AND NOT EXISTS (SELECT FROM declared)
)
SELECT true AS changed, item.* FROM item JOIN declared ON declared.item_id = item.id
UNION ALL
SELECT false, * FROM unchanged;

-- name: release
-- Hands a claim back without counting it as an attempt: for a worker shutting down, or a
-- provider's rate limit. Due again after :delaySeconds. Bounded per item (the queue's
-- maxReleases, else the service's default) so that it cannot go round forever; past the bound it
-- changes nothing and the worker must complete or fail. The token stays, so a repeat is known.
WITH released AS (
  UPDATE item i SET
    state = 'pending', attempts = i.attempts - 1, releases = i.releases + 1,
    run_at = now() + :delaySeconds * interval '1 second',
    lease_seconds = NULL, lease_expires_at = NULL, updated_at = now()
  WHERE i.id = :id AND i.claim_token = :token AND i.state = 'sending'
    AND i.releases < coalesce((SELECT max_releases FROM queue_policy p WHERE p.queue = i.queue),
                              :defaultMaxReleases)
  RETURNING i.*
),
closed AS (
  UPDATE attempt a SET finished_at = now(), outcome = 'released', finished_by = :actor
  FROM released WHERE a.item_id = released.id AND a.finished_at IS NULL
),
unchanged AS (
  SELECT * FROM item WHERE id = :id AND NOT EXISTS (SELECT FROM released)
)
-- last_outcome, of an unchanged row: how this token's own attempt ended, as in fail. A repeated
-- release finds it released, even when the item has been claimed again since.
SELECT true AS changed, *, CAST(NULL AS text) AS last_outcome FROM released
UNION ALL
SELECT false, u.*,
       (SELECT a.outcome FROM attempt a
        WHERE a.item_id = u.id AND a.token_hash = encode(sha256(convert_to(:token, 'UTF8')), 'hex'))
FROM unchanged u;

-- name: resolve
-- An operator's word that a failed item's side effect did happen (confirmed with the provider,
-- say, after an outcome unknown): done by hand, with the provider's reference when given.
WITH resolved AS (
  UPDATE item SET state = 'done', external_ref = coalesce(:externalRef, external_ref),
                  updated_at = now()
  WHERE id = :id AND state = 'failed'
    AND (NOT :conditional OR CAST(CAST(xmin AS text) AS bigint) = ANY (CAST(:versions AS bigint[])))
  RETURNING *, CAST(CAST(xmin AS text) AS bigint) AS row_version
),
recorded AS (
  INSERT INTO item_action (item_id, action, actor, note)
  SELECT id, 'resolve', :actor, :note FROM resolved
),
unchanged AS (
  SELECT *, CAST(CAST(xmin AS text) AS bigint) AS row_version
  FROM item WHERE id = :id AND NOT EXISTS (SELECT FROM resolved) FOR SHARE
)
SELECT true AS changed, * FROM resolved
UNION ALL
SELECT false, * FROM unchanged;

-- name: approve
-- An operator lets a held item go: pending, due at its runAt, claimable like any other. Only a
-- held item can be approved, so of concurrent approvals and rejections exactly one takes effect.
WITH approved AS (
  UPDATE item SET state = 'pending', rejected = false, updated_at = now()
  WHERE id = :id AND state = 'held'
    AND (NOT :conditional OR CAST(CAST(xmin AS text) AS bigint) = ANY (CAST(:versions AS bigint[])))
  RETURNING *, CAST(CAST(xmin AS text) AS bigint) AS row_version
),
recorded AS (
  INSERT INTO item_action (item_id, action, actor, note)
  SELECT id, 'approve', :actor, :note FROM approved
),
unchanged AS (
  SELECT *, CAST(CAST(xmin AS text) AS bigint) AS row_version
  FROM item WHERE id = :id AND NOT EXISTS (SELECT FROM approved) FOR SHARE
)
SELECT true AS changed, * FROM approved
UNION ALL
SELECT false, * FROM unchanged;

-- name: reject
-- An operator refuses a held item: cancelled, never sent. The reason is kept as the item's last
-- error, where its proposer reads it, and in the action's note.
WITH rejected AS (
  UPDATE item SET state = 'cancelled', rejected = true, last_error = :reason, updated_at = now()
  WHERE id = :id AND state = 'held'
    AND (NOT :conditional OR CAST(CAST(xmin AS text) AS bigint) = ANY (CAST(:versions AS bigint[])))
  RETURNING *, CAST(CAST(xmin AS text) AS bigint) AS row_version
),
recorded AS (
  INSERT INTO item_action (item_id, action, actor, note)
  SELECT id, 'reject', :actor, :reason FROM rejected
),
unchanged AS (
  SELECT *, CAST(CAST(xmin AS text) AS bigint) AS row_version
  FROM item WHERE id = :id AND NOT EXISTS (SELECT FROM rejected) FOR SHARE
)
SELECT true AS changed, * FROM rejected
UNION ALL
SELECT false, * FROM unchanged;

-- name: policy
-- The queue's policy as set; no row means every setting is the service's default.
SELECT * FROM queue_policy WHERE queue = :queue;

-- name: set-policy
-- Replaces the queue's settings (a null one means the service's default) and keeps its pause,
-- recording the change with the key's name and counting up its version. Settings equal to those
-- the queue has change nothing and are not recorded (changed is false): a PUT repeated because its
-- answer was lost is not a second change. With :conditional (an If-Match), the change is made only
-- while the version is one of :versions (0: no policy yet); the decision is the conflict's, on the
-- row as it is now, not on this statement's snapshot. The unchanged row is read FOR SHARE, so it is
-- that row too, with as_requested saying whether it already has these settings (a repeat whose
-- answer was lost, or the same change made by someone else): then the If-Match no longer matters.
-- A queue without a policy row has every setting null already: settings all null insert nothing,
-- and the row that comes back, as_requested whatever :versions are (as a resume of a running
-- queue), has every column null, the queue's policy being none. A policy another request
-- inserted after this statement's snapshot is not seen by it: then no row comes back, unless the
-- settings are all null (this statement then comes first, finding none).
WITH wanted AS (
  SELECT CAST(:maxAttempts AS integer) AS max_attempts,
         CAST(:leaseSeconds AS integer) AS lease_seconds,
         CAST(:crashLoopAfter AS integer) AS crash_loop_after,
         CAST(:onUnknownOutcome AS text) AS on_unknown_outcome,
         CAST(:maxReleases AS integer) AS max_releases,
         CAST(:providerKeyTtlSeconds AS bigint) AS provider_key_ttl_seconds,
         CAST(:backoffBaseSeconds AS integer) AS backoff_base_seconds,
         CAST(:backoffCapSeconds AS integer) AS backoff_cap_seconds,
         CAST(:requireApproval AS boolean) AS require_approval,
         NOT :conditional OR 0 = ANY (CAST(:versions AS bigint[])) AS may_insert
),
defaults AS (
  -- Every setting null, as a queue without a policy row has (a row IS NULL when all its fields are).
  SELECT (max_attempts, lease_seconds, crash_loop_after, on_unknown_outcome, max_releases,
          provider_key_ttl_seconds, backoff_base_seconds, backoff_cap_seconds, require_approval)
         IS NULL AS wanted
  FROM wanted
),
saved AS (
  INSERT INTO queue_policy (queue, max_attempts, lease_seconds, crash_loop_after,
                            on_unknown_outcome, max_releases, provider_key_ttl_seconds,
                            backoff_base_seconds, backoff_cap_seconds, require_approval,
                            updated_by)
  SELECT :queue, max_attempts, lease_seconds, crash_loop_after, on_unknown_outcome, max_releases,
         provider_key_ttl_seconds, backoff_base_seconds, backoff_cap_seconds, require_approval,
         :actor
  FROM wanted, defaults
  -- A row this snapshot sees goes on to the conflict, which decides on the version.
  WHERE (may_insert AND NOT defaults.wanted)
     OR EXISTS (SELECT FROM queue_policy WHERE queue = :queue)
  ON CONFLICT (queue) DO UPDATE SET
    max_attempts = EXCLUDED.max_attempts, lease_seconds = EXCLUDED.lease_seconds,
    crash_loop_after = EXCLUDED.crash_loop_after,
    on_unknown_outcome = EXCLUDED.on_unknown_outcome, max_releases = EXCLUDED.max_releases,
    provider_key_ttl_seconds = EXCLUDED.provider_key_ttl_seconds,
    backoff_base_seconds = EXCLUDED.backoff_base_seconds,
    backoff_cap_seconds = EXCLUDED.backoff_cap_seconds,
    require_approval = EXCLUDED.require_approval,
    updated_at = now(), updated_by = EXCLUDED.updated_by, version = queue_policy.version + 1
  WHERE (queue_policy.max_attempts, queue_policy.lease_seconds, queue_policy.crash_loop_after,
         queue_policy.on_unknown_outcome, queue_policy.max_releases,
         queue_policy.provider_key_ttl_seconds, queue_policy.backoff_base_seconds,
         queue_policy.backoff_cap_seconds, queue_policy.require_approval)
        IS DISTINCT FROM
        (EXCLUDED.max_attempts, EXCLUDED.lease_seconds, EXCLUDED.crash_loop_after,
         EXCLUDED.on_unknown_outcome, EXCLUDED.max_releases, EXCLUDED.provider_key_ttl_seconds,
         EXCLUDED.backoff_base_seconds, EXCLUDED.backoff_cap_seconds, EXCLUDED.require_approval)
    AND (NOT :conditional OR queue_policy.version = ANY (CAST(:versions AS bigint[])))
  RETURNING *
),
recorded AS (
  INSERT INTO queue_action (queue, action, actor, policy)
  SELECT queue, 'policy', :actor, CAST(:policy AS jsonb) FROM saved
),
unchanged AS (
  SELECT * FROM queue_policy WHERE queue = :queue AND NOT EXISTS (SELECT FROM saved) FOR SHARE
)
SELECT true AS changed, true AS as_requested, saved.* FROM saved
UNION ALL
SELECT false,
       (u.max_attempts, u.lease_seconds, u.crash_loop_after, u.on_unknown_outcome, u.max_releases,
        u.provider_key_ttl_seconds, u.backoff_base_seconds, u.backoff_cap_seconds,
        u.require_approval)
       IS NOT DISTINCT FROM
       (w.max_attempts, w.lease_seconds, w.crash_loop_after, w.on_unknown_outcome, w.max_releases,
        w.provider_key_ttl_seconds, w.backoff_base_seconds, w.backoff_cap_seconds,
        w.require_approval),
       u.*
FROM unchanged u, wanted w
UNION ALL
SELECT false, true, none.*
FROM defaults LEFT JOIN queue_policy none ON false
WHERE defaults.wanted AND NOT EXISTS (SELECT FROM queue_policy WHERE queue = :queue);

-- name: set-paused
-- Pauses or resumes the queue's claims, keeping its settings; recorded with the key's name and
-- counting up its version. A pause of a paused queue, or a resume of a running one, changes
-- nothing and is not recorded (changed is false): it may be a request repeated because its answer
-- was lost. A queue without a policy row is running: a resume of it inserts nothing. :conditional
-- and :versions (an If-Match) decide as in set-policy, and the unchanged row is read as there,
-- with as_requested saying whether the queue is already as asked.
WITH saved AS (
  INSERT INTO queue_policy (queue, paused, updated_by)
  SELECT :queue, :paused, :actor
  WHERE (:paused OR EXISTS (SELECT FROM queue_policy WHERE queue = :queue))
    AND (NOT :conditional OR 0 = ANY (CAST(:versions AS bigint[]))
         OR EXISTS (SELECT FROM queue_policy WHERE queue = :queue))
  ON CONFLICT (queue) DO UPDATE SET
    paused = EXCLUDED.paused, updated_at = now(), updated_by = EXCLUDED.updated_by,
    version = queue_policy.version + 1
  WHERE queue_policy.paused <> EXCLUDED.paused
    AND (NOT :conditional OR queue_policy.version = ANY (CAST(:versions AS bigint[])))
  RETURNING *
),
recorded AS (
  INSERT INTO queue_action (queue, action, actor)
  SELECT queue, CASE WHEN paused THEN 'pause' ELSE 'resume' END, :actor FROM saved
),
unchanged AS (
  SELECT * FROM queue_policy WHERE queue = :queue AND NOT EXISTS (SELECT FROM saved) FOR SHARE
)
SELECT true AS changed, true AS as_requested, saved.* FROM saved
UNION ALL
SELECT false, u.paused = :paused, u.* FROM unchanged u;

-- name: backoff-of
-- The backoff of each item's queue, for the schedule a fail passes: a read of settings, not of
-- the item's state, which the fail statement itself decides on. Null: the service's default.
SELECT i.id, p.backoff_base_seconds, p.backoff_cap_seconds
FROM item i LEFT JOIN queue_policy p ON p.queue = i.queue
WHERE i.id = ANY (CAST(:ids AS bigint[]));

-- name: queue-actions
-- The queue's log, oldest first; queue_action_by_queue serves it.
SELECT * FROM queue_action WHERE queue = :queue ORDER BY id;

-- name: prune-finished
-- Retention: finished items past their keep time become tombstones, a batch at a time. The row
-- keeps its key, so the unique constraint goes on deciding enqueues of it; the payload gives way
-- to its SHA-256 (of jsonb's text, so key order and white space do not matter), and the attempts
-- and actions go. SKIP LOCKED so several instances prune side by side. item_prunable holds only
-- the rows still to prune, so no batch walks past the tombstones (LargeTableTest).
WITH picked AS MATERIALIZED (
  SELECT id FROM item
  WHERE state IN ('done', 'cancelled') AND pruned_at IS NULL
    AND updated_at < now() - :keepSeconds * interval '1 second'
  LIMIT :batchSize
  FOR UPDATE SKIP LOCKED
),
slimmed AS (
  UPDATE item i SET payload_sha256 = encode(sha256(convert_to(i.payload::text, 'UTF8')), 'hex'),
                    payload = '{}', last_error = NULL, claim_token = NULL, pruned_at = now()
  FROM picked WHERE i.id = picked.id
  RETURNING i.id
),
attempts_gone AS (
  DELETE FROM attempt a USING slimmed WHERE a.item_id = slimmed.id
),
actions_gone AS (
  DELETE FROM item_action x USING slimmed WHERE x.item_id = slimmed.id
)
SELECT count(*) FROM slimmed;

-- name: forget-keys
-- Tombstones past claimq.retention.keep-keys, a batch at a time: their keys may name new work.
DELETE FROM item WHERE id IN (
  SELECT id FROM item
  WHERE pruned_at < now() - :keepKeysSeconds * interval '1 second'
  LIMIT :batchSize
  FOR UPDATE SKIP LOCKED
);

-- name: find-by-id
-- The item as it is now, for reads by id; not for deciding a change (each change decides itself).
-- row_version is its ETag: every change of the row writes a new version of it, with the changing
-- transaction's id as its xmin.
SELECT *, CAST(CAST(xmin AS text) AS bigint) AS row_version FROM item WHERE id = :id;

-- name: queues-by-id
-- The queues of many items, for a key limited to some queues: a queue never changes.
SELECT id, queue FROM item WHERE id = ANY (CAST(:ids AS bigint[]));

-- name: queue-stats
-- Per queue: live items by state, how long the oldest due pending item and the oldest held item
-- have waited, how many pending items come due within the next minute, and whether claims are
-- paused. An item is due from its run_at, or from its enqueue when run_at was earlier (an agent
-- may name a time long past). Only the live states are read, each through its own index
-- (item_held, item_claimable, item_lease_expiry, item_state_newest), so the cost follows the
-- live items and never the done, cancelled and pruned rows, however many the table holds; the
-- pending items, the many, from item_claimable alone (LargeTableTest). A queue with a policy and
-- no live items is listed.
WITH live AS (
  SELECT queue, 0 AS held, count(*) AS pending, 0 AS sending, 0 AS failed,
         min(greatest(run_at, created_at)) FILTER (WHERE run_at <= now()) AS oldest_due,
         count(*) FILTER (WHERE run_at > now() AND run_at <= now() + interval '1 minute')
           AS due_next_minute,
         NULL::timestamptz AS oldest_held
  FROM item WHERE state = 'pending' GROUP BY queue
  UNION ALL
  SELECT queue, 0, 0, count(*), 0, NULL, 0, NULL FROM item WHERE state = 'sending' GROUP BY queue
  UNION ALL
  SELECT queue, 0, 0, 0, count(*), NULL, 0, NULL FROM item WHERE state = 'failed' GROUP BY queue
  UNION ALL
  -- Held since its last change: an enqueue, or a retry of a rejected proposal, puts an item in
  -- held, and nothing changes a held item but taking it out.
  SELECT queue, count(*), 0, 0, 0, NULL, 0, min(updated_at) FROM item WHERE state = 'held'
  GROUP BY queue
),
per_queue AS (
  SELECT queue, sum(held) AS held, sum(pending) AS pending, sum(sending) AS sending,
         sum(failed) AS failed, min(oldest_due) AS oldest_due,
         sum(due_next_minute) AS due_next_minute, min(oldest_held) AS oldest_held
  FROM live GROUP BY queue
)
SELECT coalesce(q.queue, p.queue) AS queue, coalesce(q.held, 0) AS held,
       coalesce(q.pending, 0) AS pending, coalesce(q.sending, 0) AS sending,
       coalesce(q.failed, 0) AS failed, coalesce(q.due_next_minute, 0) AS due_next_minute,
       extract(epoch FROM now() - q.oldest_due) AS oldest_due_pending_age_seconds,
       extract(epoch FROM now() - q.oldest_held) AS oldest_held_age_seconds,
       coalesce(p.paused, false) AS paused
FROM per_queue q
FULL JOIN queue_policy p ON p.queue = q.queue
ORDER BY 1;

-- name: queue-throughput
-- Per queue, the attempts finished in the last minute: completes, and failures (a fail, retried
-- or final, or a lease that expired: the reaper retries or fails the item for it). A release is
-- neither. attempt_finished serves it, so the cost follows the last minute's work, not the table.
SELECT i.queue, count(*) FILTER (WHERE a.outcome = 'done') AS done,
       count(*) FILTER (WHERE a.outcome IN ('retry', 'failed', 'lease_expired')) AS failed
FROM attempt a
JOIN item i ON i.id = a.item_id
WHERE a.finished_at > now() - interval '1 minute'
GROUP BY i.queue;

-- name: search
-- An operator's lookup by whatever is in hand: the item's id, its dedupe key, its idempotency
-- key (as the provider knows it) or the provider's reference. Exact matches, each through its
-- own index; the newest 20, in the queues the key may see.
SELECT * FROM item
WHERE (id = CAST(:id AS bigint) OR dedupe_key = :text OR idempotency_key = :text
       OR external_ref = :text)
  AND (CAST(:queues AS text[]) IS NULL OR queue = ANY (CAST(:queues AS text[])))
ORDER BY id DESC
LIMIT 20;

-- name: refuses-writes
-- Whether a transaction begun now is read-only: a replica, or a primary told to refuse writes
-- (default_transaction_read_only), on which every enqueue, claim and finish fails.
SELECT current_setting('transaction_read_only') = 'on';

-- name: migrated-since
-- The newest migration applied after :rank (this release's newest, SchemaWatch), if any: a newer
-- release's, said as an operator reads it. installed_rank counts every row, failed ones too.
SELECT CASE WHEN version IS NULL THEN 'a repeatable migration' ELSE 'version ' || version END
  || ' (' || description || ')'
  || CASE WHEN success THEN '' ELSE ', which failed' END
FROM flyway_schema_history
WHERE installed_rank > :rank
ORDER BY installed_rank DESC
LIMIT 1;

-- name: dead-rows
-- PostgreSQL's own count, kept up to date by every backend without scanning anything.
SELECT coalesce(max(n_dead_tup), 0) FROM pg_stat_user_tables
WHERE relid = CAST('item' AS regclass);

-- name: may-vacuum
-- Whether this session's role may VACUUM the item table: its owner, the database's owner, or a
-- superuser (pg_has_role holds for a superuser), and from PostgreSQL 17 a role with MAINTAIN on
-- it (asked only there: the privilege's name is read when the branch runs). Otherwise VACUUM
-- skips the table with a warning that only the server's log shows.
SELECT pg_has_role(c.relowner, 'USAGE')
    OR pg_has_role((SELECT datdba FROM pg_database WHERE datname = current_database()), 'USAGE')
    OR CASE WHEN current_setting('server_version_num')::int >= 170000
            THEN has_table_privilege(c.oid, 'MAINTAIN') ELSE false END
FROM pg_class c
WHERE c.oid = CAST('item' AS regclass);

-- name: vacuums
-- VACUUMs of the item table that finished, whoever ran them.
SELECT coalesce(max(vacuum_count), 0) FROM pg_stat_user_tables
WHERE relid = CAST('item' AS regclass);

-- name: oldest-snapshot
-- The session whose snapshot is oldest: VACUUM cannot remove a row that died after it began.
-- Seconds since its transaction (or, without one, the session) began.
SELECT pid, coalesce(application_name, ''), coalesce(state, ''),
       CAST(extract(epoch FROM now() - coalesce(xact_start, backend_start)) AS bigint)
FROM pg_stat_activity
WHERE backend_xmin IS NOT NULL AND pid <> pg_backend_pid() AND datname = current_database()
ORDER BY age(backend_xmin) DESC
LIMIT 1;

-- name: vacuum
-- SKIP_LOCKED: when autovacuum or another instance is at the table already, leave it to them.
-- INDEX_CLEANUP ON: the dead entries at the front of the claim index are what slows claims, and
-- with few dead rows in a large table VACUUM would otherwise skip the indexes.
VACUUM (SKIP_LOCKED, INDEX_CLEANUP ON) item;

-- name: find-by-dedupe-key
-- An agent asks after its work by the key it enqueued it under: the unique (queue, dedupe_key)
-- constraint's index finds the one row.
SELECT * FROM item WHERE queue = :queue AND dedupe_key = :dedupeKey;

-- name: enqueued-by
-- An agent's own work, newest first, a page at a time: keyset paging below the last id seen, so a
-- page costs its rows however long the list, through item_enqueued_by (enqueued_by, id DESC). The
-- state is compared as text, so that a state the code does not know yet matches nothing instead
-- of failing. A key limited to some queues sees only its items in them.
SELECT * FROM item
WHERE enqueued_by = :enqueuedBy
  AND (CAST(:state AS text) IS NULL OR state = CAST(:state AS text))
  AND (CAST(:queues AS text[]) IS NULL OR queue = ANY (CAST(:queues AS text[])))
  AND (CAST(:beforeId AS bigint) IS NULL OR id < CAST(:beforeId AS bigint))
ORDER BY id DESC
LIMIT :limit;
