-- Version 12 on PostgreSQL: the same table as schema/012_session_match_claims.sql.
CREATE TABLE session_match_claims (
  stream   TEXT NOT NULL,
  match_id TEXT NOT NULL,
  service  TEXT NOT NULL,
  PRIMARY KEY (stream, match_id)
);
CREATE INDEX session_match_claims_by_service ON session_match_claims (service);
