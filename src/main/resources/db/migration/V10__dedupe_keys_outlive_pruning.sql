-- Dedupe keys that outlive pruning. Retention no longer deletes a finished item: it slims it in
-- place to a tombstone, keeping its key, the SHA-256 of its payload (as jsonb prints it), its
-- final state and externalRef, and drops its payload, history and actions. The one unique
-- (queue, dedupe_key) constraint so still decides every enqueue: an agent that retries an
-- enqueue after the item was pruned gets a replay, not a second send. Tombstones themselves go
-- after claimq.retention.keep-keys.
ALTER TABLE item ADD COLUMN pruned_at timestamptz;
ALTER TABLE item ADD COLUMN payload_sha256 text;
ALTER TABLE item ADD CONSTRAINT item_pruned_is_finished
    CHECK (pruned_at IS NULL OR (state IN ('done', 'cancelled') AND payload_sha256 IS NOT NULL));

-- The keys' expiry scans tombstones by age.
CREATE INDEX item_pruned ON item (pruned_at) WHERE pruned_at IS NOT NULL;
