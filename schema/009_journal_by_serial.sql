-- Version 9: the ticket journal keyed by each ticket's serial, the number its
-- public id is a keyed permutation of (docs/persistence.md, "Session
-- tickets"). Serials grow as tickets are made, so a batch's new rows and the
-- outcomes of recent tickets share a few B-tree pages; keyed by public ids,
-- which are spread over all 64 bits on purpose, every row of a batch landed
-- on a page of its own and the writer wrote a page per record. The rows
-- written before keep their public ids in session_ticket_journal_v8 until
-- the first start that serves them moves them here (it knows the key).
-- Events still name tickets by public id, and take their credential from
-- the tickets read back.
DROP INDEX session_ticket_journal_by_state;
ALTER TABLE session_ticket_journal RENAME TO session_ticket_journal_v8;

CREATE TABLE session_ticket_journal (
  ticket_id   INTEGER PRIMARY KEY,  -- the ticket's serial (its public id before the permutation)
  service     TEXT    NOT NULL,
  queues      TEXT    NOT NULL,
  credential  TEXT    NOT NULL,
  created_at  INTEGER NOT NULL,
  ticket      BLOB    NOT NULL,
  state       INTEGER NOT NULL,
  finished_at INTEGER,
  outcome     BLOB
);
CREATE INDEX session_ticket_journal_by_state
  ON session_ticket_journal (service, state, finished_at);
