-- Version 12: the running matches' ids across the partitions of the session
-- queues (docs/persistence.md, "Running match claims"). A game server names
-- its running match (POST /api/backfills, "match_id"); with the queues in
-- partitions, each partition's service keeps only its own matches in
-- memory, so the id is claimed here, in a transaction of its own, before
-- the partition takes the registration: one running match per id across
-- every partition, and any node finds which partition holds an id. The
-- claim goes in the transaction that deletes the match's row
-- (session_backfills). A service alone does not use it.
CREATE TABLE session_match_claims (
  stream   TEXT NOT NULL,  -- the partitions' common name (their event stream's)
  match_id TEXT NOT NULL,  -- the game server's id of the running match
  service  TEXT NOT NULL,  -- the partition's service that holds it
  PRIMARY KEY (stream, match_id)
);
CREATE INDEX session_match_claims_by_service ON session_match_claims (service);
