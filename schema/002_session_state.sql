-- Version 2: the session matchmaker's waiting tickets and running lobbies,
-- written at a graceful shutdown and taken (read, then deleted) at the next
-- start. `service` names the server (or cluster node) that wrote them, so
-- nodes sharing a database take back only their own.

CREATE TABLE session_tickets (
  service     TEXT    NOT NULL,
  ticket_id   INTEGER NOT NULL,  -- as the game knows it: the queue's number in the top 16 bits
  queue       TEXT    NOT NULL,
  created_at  INTEGER NOT NULL,  -- unix milliseconds
  ticket      TEXT    NOT NULL,  -- the ticket as JSON, in the HTTP API's shape
  written_at  INTEGER NOT NULL,  -- unix milliseconds
  PRIMARY KEY (service, ticket_id)
);

CREATE TABLE session_lobbies (
  service          TEXT    NOT NULL,
  lobby_id         TEXT    NOT NULL,
  mode             TEXT    NOT NULL,
  datacenter       TEXT    NOT NULL,
  max_players      INTEGER NOT NULL,
  players          INTEGER NOT NULL,
  created_by_find  INTEGER NOT NULL,
  written_at       INTEGER NOT NULL,  -- unix milliseconds
  PRIMARY KEY (service, lobby_id)
);
