-- Who did what: the name of the API key behind each enqueue, each finished attempt and each
-- operator action. Names only; keys themselves are never stored.

ALTER TABLE item ADD COLUMN enqueued_by text;
ALTER TABLE attempt ADD COLUMN finished_by text;

CREATE TABLE item_action (
    id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    item_id bigint      NOT NULL REFERENCES item (id) ON DELETE CASCADE,
    action  text        NOT NULL,
    actor   text        NOT NULL,
    at      timestamptz NOT NULL DEFAULT now(),

    CONSTRAINT item_action_valid CHECK (action IN ('retry', 'cancel'))
);

CREATE INDEX item_action_by_item ON item_action (item_id, id);
