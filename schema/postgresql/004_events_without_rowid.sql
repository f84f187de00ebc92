-- SQLite's version 4 rebuilds its ticket events as a table without rowid.
-- PostgreSQL keeps a table's rows apart from its key's index either way, so
-- nothing changes here but a comment: the two schemas keep the same version
-- numbers.
COMMENT ON TABLE session_ticket_events IS
  'Ticket events: (service, seq), seq 1, 2, ... per server, never reused';
