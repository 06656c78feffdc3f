-- Queue policies, send intents, released claims and resolved items.

-- Per-queue settings an operator can change while the service runs. A null column means the
-- service's configured default, so a queue without a row (or with an empty one) behaves as
-- before. The statements read this table in the same statement that acts on an item: a paused
-- queue refuses its claims, and a policy change takes effect with the next statement.
CREATE TABLE queue_policy (
    queue              text        PRIMARY KEY,
    max_attempts       integer,
    lease_seconds      integer,
    crash_loop_after   integer,
    on_unknown_outcome text,
    max_releases       integer,
    paused             boolean     NOT NULL DEFAULT false,
    updated_at         timestamptz NOT NULL DEFAULT now(),
    updated_by         text        NOT NULL,

    CONSTRAINT queue_policy_queue_name_valid CHECK (queue ~ '^[a-z0-9][a-z0-9._-]{0,63}$'),
    CONSTRAINT queue_policy_max_attempts_range CHECK (max_attempts BETWEEN 1 AND 100),
    CONSTRAINT queue_policy_lease_seconds_range CHECK (lease_seconds BETWEEN 1 AND 43200),
    CONSTRAINT queue_policy_crash_loop_after_range CHECK (crash_loop_after BETWEEN 1 AND 100),
    CONSTRAINT queue_policy_on_unknown_outcome_valid CHECK (on_unknown_outcome IN ('retry', 'hold')),
    CONSTRAINT queue_policy_max_releases_range CHECK (max_releases BETWEEN 0 AND 1000)
);

-- What operators did to a queue (policy changes, pause, resume), and whose key did it.
CREATE TABLE queue_action (
    id     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    queue  text        NOT NULL,
    action text        NOT NULL,
    actor  text        NOT NULL,
    at     timestamptz NOT NULL DEFAULT now(),
    -- The policy as it was set, for a policy change.
    policy jsonb,

    CONSTRAINT queue_action_valid CHECK (action IN ('policy', 'pause', 'resume'))
);

CREATE INDEX queue_action_by_queue ON queue_action (queue, id);

-- A worker's declaration, just before it calls the provider, that this attempt is about to send.
-- An attempt with an intent that ends without a complete may have sent: the next claim says so.
ALTER TABLE attempt ADD COLUMN intent_at timestamptz;
-- A retryable fail whose sender could not tell whether the provider acted (a timeout after the
-- request went out).
ALTER TABLE attempt ADD COLUMN sent_unknown boolean NOT NULL DEFAULT false;

-- A released claim is handed back without using up an attempt; the count bounds how often.
ALTER TABLE item ADD COLUMN releases integer NOT NULL DEFAULT 0;
ALTER TABLE item ADD CONSTRAINT item_releases_not_negative CHECK (releases >= 0);

ALTER TABLE attempt DROP CONSTRAINT attempt_outcome_valid;
ALTER TABLE attempt ADD CONSTRAINT attempt_outcome_valid
    CHECK (outcome IN ('done', 'retry', 'failed', 'lease_expired', 'released'));

-- An operator's resolve marks a failed item done by hand, with a note saying why.
ALTER TABLE item_action ADD COLUMN note text;
ALTER TABLE item_action DROP CONSTRAINT item_action_valid;
ALTER TABLE item_action ADD CONSTRAINT item_action_valid
    CHECK (action IN ('retry', 'cancel', 'resolve'));
