-- The ticket events keyed by (service, seq) alone: a table without rowid is
-- its key's B-tree, so writing an event is one B-tree insert instead of two
-- (a rowid table and its key's index). The journal's writer is CPU-bound
-- under load (docs/performance.md, "Session service"). Same columns, same
-- rows.
CREATE TABLE session_ticket_events_keyed (
  service    TEXT    NOT NULL,
  seq        INTEGER NOT NULL,
  ticket_id  INTEGER NOT NULL,
  credential TEXT    NOT NULL,
  queue      TEXT    NOT NULL,
  at         INTEGER NOT NULL,
  event      BLOB    NOT NULL,
  PRIMARY KEY (service, seq)
) WITHOUT ROWID;

INSERT INTO session_ticket_events_keyed (service, seq, ticket_id, credential, queue, at, event)
  SELECT service, seq, ticket_id, credential, queue, at, event FROM session_ticket_events;
DROP TABLE session_ticket_events;
ALTER TABLE session_ticket_events_keyed RENAME TO session_ticket_events;
