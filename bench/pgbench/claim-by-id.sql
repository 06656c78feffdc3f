-- Claim of a named item, as POST /v1/items/{id}/claim runs it when the claim wins. Each
-- transaction takes the next preloaded pending id from a sequence that bench/run.sh creates in
-- the bench database (public.bench_claim_ids); that nextval is the only statement here the
-- service does not run.
-- Variables: -D worker, leaseSeconds (see bench/run.sh).
\set token random(1, 999999999999999)
SELECT nextval('public.bench_claim_ids') AS id
\gset
-- ItemRepository.CLAIM_BY_ID
WITH claimed AS (UPDATE item i SET
  state = 'sending', attempts = i.attempts + 1, claim_token = :token, claimed_by = :worker,
  lease_seconds = :leaseSeconds, lease_expires_at = now() + :leaseSeconds * interval '1 second',
  updated_at = now()
  WHERE i.id = :id AND i.state = 'pending' AND i.run_at <= now()
  RETURNING i.*
),
opened AS (
  INSERT INTO attempt (item_id, attempt, worker)
  SELECT id, attempts, claimed_by FROM claimed
)
SELECT * FROM claimed;
