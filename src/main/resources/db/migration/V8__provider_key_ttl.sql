-- The provider's idempotency horizon: how long it remembers an idempotency key (Stripe: 24 h).
-- A retry that would run past it could be a second send, so it is not scheduled.
ALTER TABLE queue_policy ADD COLUMN provider_key_ttl_seconds bigint;
ALTER TABLE queue_policy ADD CONSTRAINT queue_policy_provider_key_ttl_positive
    CHECK (provider_key_ttl_seconds > 0);
