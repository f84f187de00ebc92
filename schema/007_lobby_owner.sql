-- Version 7: who registered each running lobby a graceful stop kept (or
-- whose find created it): only that identity (or an admin) may update or
-- close it after the restart, as before it (docs/security.md). Lobbies kept
-- by an older version have no owner: only an admin may change them.

ALTER TABLE session_lobbies ADD COLUMN owner TEXT NOT NULL DEFAULT '';
