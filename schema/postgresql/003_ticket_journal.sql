-- Version 3 on PostgreSQL: the same tables as schema/003_ticket_journal.sql.

CREATE TABLE session_ticket_journal (
  ticket_id   BIGINT PRIMARY KEY,
  service     TEXT   NOT NULL,
  queues      TEXT   NOT NULL,
  credential  TEXT   NOT NULL,
  created_at  BIGINT NOT NULL,
  ticket      BYTEA  NOT NULL,
  state       SMALLINT NOT NULL,
  finished_at BIGINT,
  outcome     BYTEA
);
CREATE INDEX session_ticket_journal_by_state
  ON session_ticket_journal (service, state, finished_at);

CREATE TABLE session_ticket_events (
  service    TEXT   NOT NULL,
  seq        BIGINT NOT NULL,
  ticket_id  BIGINT NOT NULL,
  credential TEXT   NOT NULL,
  queue      TEXT   NOT NULL,
  at         BIGINT NOT NULL,
  event      BYTEA  NOT NULL,
  PRIMARY KEY (service, seq)
);

CREATE TABLE session_counters (
  name  TEXT   PRIMARY KEY,
  value BIGINT NOT NULL
);

CREATE TABLE session_secrets (
  name  TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
