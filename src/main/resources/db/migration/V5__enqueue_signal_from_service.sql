-- A NOTIFY inside a transaction holds a server-wide lock through its commit, which serialized
-- every enqueue's commit behind every other's. Enqueues are now signalled by the service after
-- commit, outside the enqueue transaction (see ClaimableListener); the trigger stays for items
-- put back to pending (failed with retries left, released leases, operator retries).
DROP TRIGGER item_claimable_on_insert ON item;
