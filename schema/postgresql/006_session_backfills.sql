-- Version 6 on PostgreSQL: the same table as schema/006_session_backfills.sql.

CREATE TABLE session_backfills (
  service    TEXT   NOT NULL,
  queue      TEXT   NOT NULL,
  match_id   TEXT   NOT NULL,
  credential TEXT   NOT NULL,
  updated_at BIGINT NOT NULL,
  state      BYTEA  NOT NULL,
  PRIMARY KEY (service, queue, match_id)
);
