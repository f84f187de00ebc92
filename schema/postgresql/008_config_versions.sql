-- Version 8 on PostgreSQL: the same table as schema/008_config_versions.sql.

CREATE TABLE config_versions (
  scope TEXT NOT NULL,
  version BIGINT NOT NULL,
  document TEXT NOT NULL,
  author TEXT NOT NULL,
  created_unix_ms BIGINT NOT NULL,
  comment TEXT NOT NULL,
  PRIMARY KEY (scope, version)
);
