-- The queue: one row per logical piece of work, plus one row per claim of it.
-- Every state change is a single conditional UPDATE in ItemRepository; these constraints
-- are the last line of defence if a statement there is ever wrong.

CREATE TABLE item (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    queue            text        NOT NULL,
    dedupe_key       text        NOT NULL,
    state            text        NOT NULL DEFAULT 'pending',
    payload          jsonb       NOT NULL,
    priority         integer     NOT NULL DEFAULT 0,
    attempts         integer     NOT NULL DEFAULT 0,
    max_attempts     integer     NOT NULL,
    run_at           timestamptz NOT NULL DEFAULT now(),
    -- Handed to the downstream provider on every attempt, so a send retried after a crash
    -- is recognised there as the same send. Never changes.
    idempotency_key  text        NOT NULL DEFAULT gen_random_uuid()::text,
    -- The current (or, after done/fail, the last) claim. Only the holder knows it.
    claim_token      text,
    claimed_by       text,
    lease_seconds    integer,
    lease_expires_at timestamptz,
    external_ref     text,
    last_error       text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),

    -- Idempotent enqueue: the database, not the caller, refuses the second row.
    CONSTRAINT item_queue_dedupe_key_unique UNIQUE (queue, dedupe_key),
    CONSTRAINT item_state_valid CHECK (state IN ('pending', 'sending', 'done', 'failed', 'cancelled')),
    CONSTRAINT item_queue_name_valid CHECK (queue ~ '^[a-z0-9][a-z0-9._-]{0,63}$'),
    CONSTRAINT item_dedupe_key_length CHECK (char_length(dedupe_key) BETWEEN 1 AND 200),
    CONSTRAINT item_payload_not_null CHECK (payload <> 'null'::jsonb),
    CONSTRAINT item_attempts_bounded CHECK (attempts >= 0 AND attempts <= max_attempts),
    CONSTRAINT item_max_attempts_range CHECK (max_attempts BETWEEN 1 AND 100),
    -- Exactly the claimed items carry a lease, and every claimed item has a holder.
    CONSTRAINT item_lease_iff_sending CHECK ((state = 'sending') = (lease_expires_at IS NOT NULL)),
    CONSTRAINT item_sending_has_token CHECK (state <> 'sending' OR claim_token IS NOT NULL)
);

-- The claim query's filter and order, exactly: claim-next reads this index from the front.
CREATE INDEX item_claimable ON item (queue, priority DESC, run_at, id) WHERE state = 'pending';

-- The lease reaper's scan.
CREATE INDEX item_lease_expiry ON item (lease_expires_at) WHERE state = 'sending';

-- Operators browse newest first, by queue and/or state (keyset pagination on id).
CREATE INDEX item_queue_newest ON item (queue, id);
CREATE INDEX item_state_newest ON item (state, id);

-- One row per claim: who held it, when, and how it ended.
CREATE TABLE attempt (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    item_id     bigint      NOT NULL REFERENCES item (id) ON DELETE CASCADE,
    attempt     integer     NOT NULL,
    worker      text,
    claimed_at  timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz,
    outcome     text,
    error       text,

    CONSTRAINT attempt_outcome_valid CHECK (outcome IN ('done', 'retry', 'failed', 'lease_expired')),
    CONSTRAINT attempt_finished_has_outcome CHECK ((finished_at IS NULL) = (outcome IS NULL))
);

-- At most one open claim per item at any moment.
CREATE UNIQUE INDEX attempt_one_open_per_item ON attempt (item_id) WHERE finished_at IS NULL;
CREATE INDEX attempt_by_item ON attempt (item_id, id);
