-- Each change of a queue's policy row (its settings, a pause, a resume) counts up its version: the
-- entity tag its reads answer, which a PUT's If-Match names so that a change made from a stale read
-- is refused instead of overwriting another operator's. A queue without a row is version 0. Rows
-- are never deleted, so a version never names two different states. A constant default does not
-- rewrite the table.
ALTER TABLE queue_policy ADD COLUMN version bigint NOT NULL DEFAULT 1;
