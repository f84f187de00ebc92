-- Version 9 on PostgreSQL: the same change as schema/009_journal_by_serial.sql.

ALTER TABLE session_ticket_journal RENAME TO session_ticket_journal_v8;
ALTER INDEX session_ticket_journal_pkey RENAME TO session_ticket_journal_v8_pkey;
ALTER INDEX session_ticket_journal_by_state RENAME TO session_ticket_journal_v8_by_state;

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
