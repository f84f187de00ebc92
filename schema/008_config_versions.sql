-- Version 8: configuration changed while the server runs (docs/operations.md,
-- "Live configuration"). Every version of a scope's document ("sessions":
-- the session queues; "profile": the async tunables that are safe at run
-- time): who applied it (an identity's name, "file" for the one a config
-- file seeded), when, and why. A scope's latest version is the one every
-- node runs; a rollback is a new version with an older document.

CREATE TABLE config_versions (
  scope TEXT NOT NULL,
  version INTEGER NOT NULL,
  document TEXT NOT NULL,
  author TEXT NOT NULL,
  created_unix_ms INTEGER NOT NULL,
  comment TEXT NOT NULL,
  PRIMARY KEY (scope, version)
) WITHOUT ROWID;
