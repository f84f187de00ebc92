-- Version 7 on PostgreSQL: the same column as schema/007_lobby_owner.sql.

ALTER TABLE session_lobbies ADD COLUMN owner TEXT NOT NULL DEFAULT '';
