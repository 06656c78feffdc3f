-- An agent lists the work its key enqueued, newest first (the MCP tool list_my_work): this index
-- matches that statement's filter and order, so a page reads its rows and no others.
CREATE INDEX item_enqueued_by ON item (enqueued_by, id DESC);
