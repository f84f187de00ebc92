-- Version 1: the player table the scan reads, and the matchmaker state table.

-- One row per player. Games and tools upsert it; the scan reads it in id order
-- from random starting points. Ids are 64-bit and below 2^63 (SQLite integers
-- are signed). attr0..attr3 are the generic profile's attributes.
CREATE TABLE players (
  id          INTEGER PRIMARY KEY,
  mmr         REAL    NOT NULL,
  attr0       INTEGER NOT NULL DEFAULT 0,
  attr1       INTEGER NOT NULL DEFAULT 0,
  attr2       INTEGER NOT NULL DEFAULT 0,
  attr3       INTEGER NOT NULL DEFAULT 0,
  payload     BLOB,
  is_bot      INTEGER NOT NULL DEFAULT 0,
  updated_at  INTEGER NOT NULL  -- unix milliseconds
);

-- One row per matchmaker instance: its last snapshot (a versioned cereal
-- payload: sizing model, strategy states, a sample of cached players).
CREATE TABLE matchmaker_state (
  instance_id     TEXT    PRIMARY KEY,
  persisted_at    INTEGER NOT NULL,  -- unix milliseconds
  payload_version INTEGER NOT NULL,
  payload         BLOB    NOT NULL
);

-- Snapshots that failed to decode, kept for inspection instead of being
-- overwritten; the instance started empty instead.
CREATE TABLE matchmaker_state_rejected (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  instance_id  TEXT    NOT NULL,
  set_aside_at INTEGER NOT NULL,  -- unix milliseconds
  reason       TEXT    NOT NULL,
  persisted_at INTEGER,
  payload      BLOB    NOT NULL
);
