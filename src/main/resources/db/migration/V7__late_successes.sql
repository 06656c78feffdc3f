-- Late successes: a complete whose claim is no longer current, but that says the send happened.

-- Which attempt a claim token belonged to, without keeping the token: its SHA-256, hex. A late
-- complete counts only with a token this item really issued.
ALTER TABLE attempt ADD COLUMN token_hash text;
-- A late complete's report, on the attempt whose send it was.
ALTER TABLE attempt ADD COLUMN late_external_ref text;
ALTER TABLE attempt ADD COLUMN late_reported_at timestamptz;
ALTER TABLE attempt ADD COLUMN late_reported_by text;

-- A late success reported while another claim holds the item: that claimer's next heartbeat or
-- intent says it was sent already, by which attempt and with which reference.
ALTER TABLE item ADD COLUMN already_sent_attempt integer;
ALTER TABLE item ADD COLUMN already_sent_ref text;
-- Late successes of an item that was done already: sends that went out twice, for operators.
ALTER TABLE item ADD COLUMN duplicate_sends integer NOT NULL DEFAULT 0;

