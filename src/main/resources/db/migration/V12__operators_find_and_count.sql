-- What the console asks of the table, each through an index so that none of it scans the
-- finished rows. An operator searches by whatever is in hand: a dedupe key from the agent's side,
-- an idempotency key from the provider's side, or the provider's own reference.
CREATE INDEX item_by_dedupe_key ON item (dedupe_key);
CREATE INDEX item_by_idempotency_key ON item (idempotency_key);
CREATE INDEX item_by_external_ref ON item (external_ref) WHERE external_ref IS NOT NULL;

-- Throughput: the attempts finished in the last minute, read by their finish time.
CREATE INDEX attempt_finished ON attempt (finished_at) WHERE finished_at IS NOT NULL;
