-- Claim-next then complete, as a worker loop does with POST /v1/queues/{queue}/claim and
-- POST /v1/items/{id}/complete: two transactions. The claim's row (id) is kept with \gset and
-- passed to the complete, as the claim token is.
-- Variables: -D queue, worker, leaseSeconds, externalRef, actor (see bench/run.sh).
\set token random(1, 999999999999999)
-- ItemRepository.CLAIM_NEXT
WITH next AS (
  SELECT id FROM item
  WHERE queue = :queue AND state = 'pending' AND run_at <= now()
  ORDER BY priority DESC, run_at, id
  LIMIT 1
  FOR UPDATE SKIP LOCKED
),
claimed AS (
  UPDATE item i SET
  state = 'sending', attempts = i.attempts + 1, claim_token = :token, claimed_by = :worker,
  lease_seconds = :leaseSeconds, lease_expires_at = now() + :leaseSeconds * interval '1 second',
  updated_at = now()
  FROM next WHERE i.id = next.id
  RETURNING i.*
),
opened AS (
  INSERT INTO attempt (item_id, attempt, worker)
  SELECT id, attempts, claimed_by FROM claimed
)
SELECT * FROM claimed
\gset
-- ItemRepository.COMPLETE
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
SELECT * FROM finished;
