-- Version 6: the running matches that backfill, each with the reservations
-- of its seats (docs/session.md, "Backfill"). A row is written in the same
-- transaction as the records of the tickets placed into the match, changed
-- when its players or seats change, and deleted when it stops; a start reads
-- the rows back into their queues (docs/persistence.md).

CREATE TABLE session_backfills (
  service    TEXT    NOT NULL,     -- the server (or cluster) whose journal holds it
  queue      TEXT    NOT NULL,
  match_id   TEXT    NOT NULL,     -- the game server's id of its match
  credential TEXT    NOT NULL,     -- who registered it
  updated_at INTEGER NOT NULL,     -- unix milliseconds
  state      BLOB    NOT NULL,     -- the match and its reservations (versioned binary)
  PRIMARY KEY (service, queue, match_id)
);
