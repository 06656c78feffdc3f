-- Indexes that keep two background statements' cost with the live work, not the table.
--
-- Retention found finished items through an index of every done and cancelled row, tombstones
-- included, and so walked past every tombstone before each batch of 1,000 (tombstones stay for
-- claimq.retention.keep-keys, 400 days by default): 2.5 s a batch among 5 million rows. This one
-- holds only what retention has still to prune.
CREATE INDEX item_prunable ON item (updated_at)
    WHERE state IN ('done', 'cancelled') AND pruned_at IS NULL;
DROP INDEX item_finished_age;

-- The queue stats read each pending item's run_at and created_at. With created_at in the claim
-- index they read the index alone, not the table's pages, however long the backlog: a backlog of
-- 120,000 among 2 million rows made the sampler read the whole table every 5 s.
DROP INDEX item_claimable;
CREATE INDEX item_claimable ON item (queue, priority DESC, run_at, id) INCLUDE (created_at)
    WHERE state = 'pending';
