-- A listing by reason (GET /v1/items?reason=, the bulk actions' dry runs) without a state walked
-- every row newest first, tombstones included, for text that only items with a last error hold:
-- a reason that matched nothing read the whole table (a 503 at its 4 s bound among 5 million
-- rows). Those items, newest first, are this index: the few that ever failed and are not pruned.
CREATE INDEX item_with_reason ON item (id) WHERE last_error IS NOT NULL;
