-- Enqueue of a new item: what POST /v1/queues/{queue}/items runs when the key is new.
-- Variables: -D queue, payload, priority, maxAttempts, enqueuedBy (see bench/run.sh).
\set dedupeKey random(1, 999999999999999)
-- ItemRepository.INSERT_IF_ABSENT (runAt: NULL)
INSERT INTO item (queue, dedupe_key, payload, priority, max_attempts, run_at, enqueued_by)
VALUES (:queue, :dedupeKey, CAST(:payload AS jsonb), :priority, :maxAttempts,
        coalesce(NULL, now()), :enqueuedBy)
ON CONFLICT (queue, dedupe_key) DO NOTHING
RETURNING *;
