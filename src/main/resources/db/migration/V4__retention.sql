-- Keeping the queue fast over time. Finished items are pruned after claimq.retention.keep-finished
-- (see Retention); this index finds them without scanning live work.
CREATE INDEX item_finished_age ON item (updated_at) WHERE state IN ('done', 'cancelled');

-- Every claim and finish rewrites a row, so dead tuples pile up in proportion to throughput, not
-- table size. Vacuum after ~1% churn instead of PostgreSQL's default 20%, so the claim index
-- stays lean on a large table.
ALTER TABLE item SET (
    autovacuum_vacuum_scale_factor = 0.01,
    autovacuum_vacuum_threshold = 1000,
    autovacuum_analyze_scale_factor = 0.02,
    autovacuum_vacuum_cost_delay = 1
);
ALTER TABLE attempt SET (
    autovacuum_vacuum_scale_factor = 0.02,
    autovacuum_vacuum_threshold = 1000
);
