-- Enqueue of a key that exists with an equal payload (a replay, answered 200): the insert does
-- nothing, then the existing row is read. bench/run.sh preloads the keys 1..:dupeKeys.
-- Variables: -D queue, payload, priority, maxAttempts, enqueuedBy, dupeKeys (see bench/run.sh).
\set dedupeKey random(1, :dupeKeys)
-- ItemRepository.INSERT_IF_ABSENT (runAt: NULL)
INSERT INTO item (queue, dedupe_key, payload, priority, max_attempts, run_at, enqueued_by)
VALUES (:queue, :dedupeKey, CAST(:payload AS jsonb), :priority, :maxAttempts,
        coalesce(NULL, now()), :enqueuedBy)
ON CONFLICT (queue, dedupe_key) DO NOTHING
RETURNING *;
-- ItemRepository.FIND_WITH_EQUAL_PAYLOAD
SELECT * FROM item
WHERE queue = :queue AND dedupe_key = :dedupeKey AND payload = CAST(:payload AS jsonb);
