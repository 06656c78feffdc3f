-- Long-polling claims wait for this instead of querying: whenever an item becomes claimable now
-- (enqueued due, or put back to pending due), the queue's name is sent on the channel
-- 'claimq.<schema>'. PostgreSQL folds identical notifications of one transaction into one.
-- Items that become due later (backoff, runAt) are found by the service's fallback poll.
CREATE FUNCTION notify_claimable() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('claimq.' || TG_TABLE_SCHEMA, NEW.queue);
    RETURN NULL;
END
$$;

CREATE TRIGGER item_claimable_on_insert
    AFTER INSERT ON item
    FOR EACH ROW
    WHEN (NEW.state = 'pending' AND NEW.run_at <= now())
    EXECUTE FUNCTION notify_claimable();

CREATE TRIGGER item_claimable_on_update
    AFTER UPDATE OF state ON item
    FOR EACH ROW
    WHEN (NEW.state = 'pending' AND OLD.state <> 'pending' AND NEW.run_at <= now())
    EXECUTE FUNCTION notify_claimable();
