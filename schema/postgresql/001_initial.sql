-- Version 1 on PostgreSQL: the same tables and columns as schema/001_initial.sql,
-- in PostgreSQL's types (BIGINT for SQLite's 64-bit INTEGER, DOUBLE PRECISION
-- for REAL, BYTEA for BLOB, an identity column for AUTOINCREMENT).

-- One row per player. Ids are 64-bit and below 2^63, as on SQLite.
CREATE TABLE players (
  id          BIGINT           PRIMARY KEY,
  mmr         DOUBLE PRECISION NOT NULL,
  attr0       BIGINT           NOT NULL DEFAULT 0,
  attr1       BIGINT           NOT NULL DEFAULT 0,
  attr2       BIGINT           NOT NULL DEFAULT 0,
  attr3       BIGINT           NOT NULL DEFAULT 0,
  payload     BYTEA,
  is_bot      BIGINT           NOT NULL DEFAULT 0,
  updated_at  BIGINT           NOT NULL  -- unix milliseconds
);

-- One row per matchmaker instance: its last snapshot.
CREATE TABLE matchmaker_state (
  instance_id     TEXT   PRIMARY KEY,
  persisted_at    BIGINT NOT NULL,  -- unix milliseconds
  payload_version BIGINT NOT NULL,
  payload         BYTEA  NOT NULL
);

-- Snapshots that failed to decode, kept for inspection.
CREATE TABLE matchmaker_state_rejected (
  id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id  TEXT   NOT NULL,
  set_aside_at BIGINT NOT NULL,  -- unix milliseconds
  reason       TEXT   NOT NULL,
  persisted_at BIGINT,
  payload      BYTEA  NOT NULL
);
