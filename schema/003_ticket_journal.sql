-- Version 3: the session tickets' journal. Every ticket a server acknowledged
-- is a row from its creation on (state 0, waiting); its outcome is written in
-- the same row before anyone is told of it, and kept for the outcome
-- retention. Each change is also an event with a sequence number per server,
-- which clients resume from. Ids come from a counter of generations and a
-- key drawn at the first start (docs/persistence.md, "Session tickets").

CREATE TABLE session_ticket_journal (
  ticket_id   INTEGER PRIMARY KEY,  -- the public id as a signed 64-bit integer
  service     TEXT    NOT NULL,     -- the server (or cluster node) that took it
  queues      TEXT    NOT NULL,     -- the queues it waits in, comma-separated
  credential  TEXT    NOT NULL,     -- who created it
  created_at  INTEGER NOT NULL,     -- unix milliseconds
  ticket      BLOB    NOT NULL,     -- the ticket as the queues took it (versioned binary)
  state       INTEGER NOT NULL,     -- 0 waiting, 1 matched, 2 cancelled, 3 expired, 4 failed
  finished_at INTEGER,              -- unix milliseconds, when it left
  outcome     BLOB                  -- its outcome (versioned binary), when it left
);
CREATE INDEX session_ticket_journal_by_state
  ON session_ticket_journal (service, state, finished_at);

CREATE TABLE session_ticket_events (
  service    TEXT    NOT NULL,
  seq        INTEGER NOT NULL,      -- 1, 2, ... per service, never reused
  ticket_id  INTEGER NOT NULL,
  credential TEXT    NOT NULL,
  queue      TEXT    NOT NULL,
  at         INTEGER NOT NULL,      -- unix milliseconds
  event      BLOB    NOT NULL,      -- the ticket's outcome at that event (versioned binary)
  PRIMARY KEY (service, seq)
);

CREATE TABLE session_counters (
  name  TEXT    PRIMARY KEY,
  value INTEGER NOT NULL
);

CREATE TABLE session_secrets (
  name  TEXT PRIMARY KEY,
  value TEXT NOT NULL               -- hexadecimal
);
