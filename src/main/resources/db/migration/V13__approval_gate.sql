-- The approval gate: a queue whose policy requires approval keeps each new item "held", where no
-- worker can claim it, until an operator approves it (to pending) or rejects it (to cancelled).
ALTER TABLE item DROP CONSTRAINT item_state_valid;
ALTER TABLE item ADD CONSTRAINT item_state_valid
    CHECK (state IN ('held', 'pending', 'sending', 'done', 'failed', 'cancelled'));

-- Null: the service's default, which is off.
ALTER TABLE queue_policy ADD COLUMN require_approval boolean;

ALTER TABLE item_action DROP CONSTRAINT item_action_valid;
ALTER TABLE item_action ADD CONSTRAINT item_action_valid
    CHECK (action IN ('retry', 'cancel', 'resolve', 'approve', 'reject'));

-- Operators see, per queue, how many items wait for approval and since when: the held items are
-- read through this index alone, as the other live states are through theirs.
CREATE INDEX item_held ON item (queue, created_at) WHERE state = 'held';
