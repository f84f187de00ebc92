-- Version 10 on PostgreSQL: the same table as schema/010_session_player_claims.sql.
CREATE TABLE session_player_claims (
  player    BIGINT PRIMARY KEY,
  service   TEXT   NOT NULL,
  ticket_id BIGINT NOT NULL
);
CREATE INDEX session_player_claims_by_ticket ON session_player_claims (ticket_id);
