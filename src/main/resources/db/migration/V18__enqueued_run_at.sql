-- The runAt an item's enqueue gave it (now, when it gave none), kept apart from run_at, which
-- retries, releases and backoff move: a replay of the enqueue that names a runAt is compared with
-- this one. Items enqueued before this version have none (NULL), and a replay of one of them is
-- not compared on runAt; adding a column without a default does not rewrite the table.
ALTER TABLE item ADD COLUMN enqueued_run_at timestamptz;
