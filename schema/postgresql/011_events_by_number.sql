-- Version 11 on PostgreSQL: the same index as schema/011_events_by_number.sql.
CREATE INDEX session_ticket_events_by_seq ON session_ticket_events (seq);
