-- The item invariants that look at one column each move from the table into domains of their own,
-- under the same names. PostgreSQL 15 reads a table's CHECK constraints back from their stored
-- text on every statement that writes a row, and item is written twice per claimed item (the
-- claim and the finish), though these columns never change there (docs/performance.md). A
-- domain's constraint is checked when a value is written to its column (every insert, an update
-- that sets it), from a form cached once per session: the same refusal, the same name in the
-- error, without the cost on every other write.
-- The invariants that tie columns together (state with lease, token and pruning; attempts within
-- max_attempts) stay table CHECKs, and so does item_state_valid: every claim and finish writes
-- the state anyway, and its column is in the trigger and in every partial index's predicate.
--
-- In this order, so that the table is not rewritten: a column changes to a domain without
-- constraints as it is (the types are binary coercible), and a constraint added to the domain
-- afterwards checks the rows that are there with one read of the table. Only the two partial
-- indexes keyed on queue (item_claimable, item_held: pending and held items) are built again.
ALTER TABLE item
    DROP CONSTRAINT item_queue_name_valid,
    DROP CONSTRAINT item_dedupe_key_length,
    DROP CONSTRAINT item_payload_not_null,
    DROP CONSTRAINT item_max_attempts_range,
    DROP CONSTRAINT item_releases_not_negative,
    DROP CONSTRAINT item_traceparent_w3c;

CREATE DOMAIN item_queue_name AS text;
CREATE DOMAIN item_dedupe_key AS text;
CREATE DOMAIN item_payload AS jsonb;
CREATE DOMAIN item_max_attempts AS integer;
CREATE DOMAIN item_releases AS integer;
CREATE DOMAIN item_traceparent AS text;

ALTER TABLE item
    ALTER COLUMN queue TYPE item_queue_name,
    ALTER COLUMN dedupe_key TYPE item_dedupe_key,
    ALTER COLUMN payload TYPE item_payload,
    ALTER COLUMN max_attempts TYPE item_max_attempts,
    ALTER COLUMN releases TYPE item_releases,
    ALTER COLUMN traceparent TYPE item_traceparent;

ALTER DOMAIN item_queue_name ADD CONSTRAINT item_queue_name_valid
    CHECK (VALUE ~ '^[a-z0-9][a-z0-9._-]{0,63}$');
ALTER DOMAIN item_dedupe_key ADD CONSTRAINT item_dedupe_key_length
    CHECK (char_length(VALUE) BETWEEN 1 AND 200);
ALTER DOMAIN item_payload ADD CONSTRAINT item_payload_not_null CHECK (VALUE <> 'null'::jsonb);
ALTER DOMAIN item_max_attempts ADD CONSTRAINT item_max_attempts_range CHECK (VALUE BETWEEN 1 AND 100);
ALTER DOMAIN item_releases ADD CONSTRAINT item_releases_not_negative CHECK (VALUE >= 0);
ALTER DOMAIN item_traceparent ADD CONSTRAINT item_traceparent_w3c
    CHECK (VALUE ~ '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$');
