-- Version 10: the player claims of session services that share the store
-- (docs/persistence.md, "Player claims"). When the session queues run in
-- several services (partitions served by different nodes), a player may
-- wait in one ticket across all of them: each waiting player of such a
-- service has a row here, taken in a transaction of its own before the
-- ticket's journal row is written, and deleted in the transaction that
-- writes the ticket's outcome. A service alone does not use it: its books
-- keep the rule in memory.
CREATE TABLE session_player_claims (
  player    INTEGER PRIMARY KEY,  -- the player's id
  service   TEXT    NOT NULL,     -- the service whose ticket holds the claim
  ticket_id INTEGER NOT NULL      -- that ticket's serial (session_ticket_journal)
);
CREATE INDEX session_player_claims_by_ticket ON session_player_claims (ticket_id);
