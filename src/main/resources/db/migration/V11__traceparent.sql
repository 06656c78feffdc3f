-- The W3C traceparent of the request that enqueued the item, as the agent sent it, so that its
-- claims and finishes, and the worker's send, continue the agent's trace. Null when the enqueue
-- carried none. The service refuses any other form with a 400 before it gets here; the CHECK is
-- the last line of defence, so that every stored value parses.
ALTER TABLE item ADD COLUMN traceparent text;
ALTER TABLE item ADD CONSTRAINT item_traceparent_w3c
    CHECK (traceparent ~ '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$');
