-- Batch drain, as a worker does with POST /v1/queues/{queue}/claim {"max": 10} and one
-- POST /v1/items:complete for what it got: two transactions per ten items.
-- pgbench cannot carry ten rows from one statement to the next, so each client claims under its
-- own worker name and the complete reads its entries (id, token) back from the item table: a
-- small read of the claimed items (the partial index on state = 'sending') that the service
-- does not make, so this limit is, if anything, a little low.
-- Variables: -D queue, max, tokens, leaseSeconds, actor (see bench/run.sh).
-- ItemRepository.CLAIM_NEXT_BATCH (worker: 'w' || :client_id)
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
    claimed_by = 'w' || :client_id, lease_seconds = :leaseSeconds,
    lease_expires_at = now() + :leaseSeconds * interval '1 second', updated_at = now()
  FROM next JOIN tokens ON tokens.n = next.n
  WHERE i.id = next.id
  RETURNING i.*
),
opened AS (
  INSERT INTO attempt (item_id, attempt, worker)
  SELECT id, attempts, claimed_by FROM claimed
)
SELECT * FROM claimed;
-- ItemRepository.COMPLETE_BATCH (batch: (SELECT jsonb_agg(jsonb_build_object('id', id, 'claim_token', claim_token, 'external_ref', 'bench')) FROM item WHERE state = 'sending' AND claimed_by = 'w' || :client_id))
WITH input AS (
  SELECT * FROM jsonb_to_recordset(CAST((SELECT jsonb_agg(jsonb_build_object('id', id, 'claim_token', claim_token, 'external_ref', 'bench')) FROM item WHERE state = 'sending' AND claimed_by = 'w' || :client_id) AS jsonb))
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
SELECT * FROM finished;
