-- Version 2 on PostgreSQL: the same tables as schema/002_session_state.sql.

CREATE TABLE session_tickets (
  service     TEXT   NOT NULL,
  ticket_id   BIGINT NOT NULL,  -- ids below 2^63, as on SQLite
  queue       TEXT   NOT NULL,
  created_at  BIGINT NOT NULL,
  ticket      TEXT   NOT NULL,
  written_at  BIGINT NOT NULL,
  PRIMARY KEY (service, ticket_id)
);

CREATE TABLE session_lobbies (
  service          TEXT   NOT NULL,
  lobby_id         TEXT   NOT NULL,
  mode             TEXT   NOT NULL,
  datacenter       TEXT   NOT NULL,
  max_players      BIGINT NOT NULL,
  players          BIGINT NOT NULL,
  created_by_find  BIGINT NOT NULL,
  written_at       BIGINT NOT NULL,
  PRIMARY KEY (service, lobby_id)
);
