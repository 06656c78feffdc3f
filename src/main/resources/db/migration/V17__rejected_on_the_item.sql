-- Whether an item's latest approval decision was a reject, kept on the item itself: an operator's
-- retry sends a rejected proposal back to held, never to the workers, and decides that from the
-- row it locks. Read from item_action, as before, the retry's snapshot could miss an approval (and
-- a cancel) that committed while it waited for the row, and send an approved item back to held.
-- Approve clears it and reject sets it, in the statements that change the state.
ALTER TABLE item ADD COLUMN rejected boolean NOT NULL DEFAULT false;
UPDATE item i SET rejected = true
WHERE i.state = 'cancelled'
  AND (SELECT a.action FROM item_action a WHERE a.item_id = i.id ORDER BY a.id DESC LIMIT 1)
      = 'reject';
