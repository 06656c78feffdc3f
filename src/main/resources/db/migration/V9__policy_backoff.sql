-- A queue's own backoff: the first retry's delay, doubling to the cap. Null: the service's.
ALTER TABLE queue_policy ADD COLUMN backoff_base_seconds integer;
ALTER TABLE queue_policy ADD COLUMN backoff_cap_seconds integer;
ALTER TABLE queue_policy ADD CONSTRAINT queue_policy_backoff_base_range
    CHECK (backoff_base_seconds BETWEEN 1 AND 86400);
ALTER TABLE queue_policy ADD CONSTRAINT queue_policy_backoff_cap_range
    CHECK (backoff_cap_seconds BETWEEN 1 AND 604800);
