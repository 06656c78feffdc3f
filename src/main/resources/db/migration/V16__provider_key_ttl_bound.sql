-- A providerKeyTtl is at most 3,650 days (PT87600H), as the API has it: every statement that reads
-- it adds it to a timestamp as an interval, and a value near bigint's end overflowed that interval,
-- failing every fail, retry and lease reap that met it (the reaper releases all queues' leases in
-- one statement, so one such policy stopped it for every queue). The check is the second guard.
-- A longer one that was stored before the API refused it is lowered to the bound first, or the
-- check could not be added: 3,650 days is as far past any provider's horizon as what was asked,
-- and such a policy had already stopped the reaper.
UPDATE queue_policy SET provider_key_ttl_seconds = 315360000
WHERE provider_key_ttl_seconds > 315360000;
ALTER TABLE queue_policy ADD CONSTRAINT queue_policy_provider_key_ttl_at_most_3650_days
    CHECK (provider_key_ttl_seconds <= 315360000);
