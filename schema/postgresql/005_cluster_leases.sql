-- The cluster's nodes and the leases through which they own what they serve
-- (docs/design.md, "Leases"). Every time here is the database's clock, so the
-- nodes' clocks never have to agree.

-- One row per process start of a node: the node's name and a number drawn
-- from this sequence ("a#17"), so a node that comes back after a kill -9 is a
-- new owner and never mistakes its former leases for its own.
CREATE SEQUENCE cluster_node_incarnations;

CREATE TABLE cluster_nodes (
  node_id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  http_url TEXT NOT NULL DEFAULT '',
  actor_endpoint TEXT NOT NULL DEFAULT '',
  pinned TEXT NOT NULL DEFAULT '',       -- resources this node pins (cluster.owned), comma-separated
  started_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
  expires_at TIMESTAMPTZ NOT NULL,       -- renewed by the node's heartbeat
  alive BOOLEAN NOT NULL DEFAULT TRUE,   -- false once it left or was declared dead: for ever
  left_at TIMESTAMPTZ
);

-- One row per resource: an async shard ("mm-3") or the session queues
-- ("sessions"). owner NULL: free. epoch grows by one at every take; a write
-- for a resource is kept only when it carries the current epoch (fencing).
CREATE TABLE cluster_leases (
  resource TEXT PRIMARY KEY,
  owner TEXT,
  epoch BIGINT NOT NULL DEFAULT 0,
  since TIMESTAMPTZ,
  takeovers BIGINT NOT NULL DEFAULT 0    -- takes from a node that had died
);

-- The epoch of the lease a snapshot was written under (NULL: by a server
-- alone): what an operator reads to see which owner wrote it.
ALTER TABLE matchmaker_state ADD COLUMN lease_epoch BIGINT;
