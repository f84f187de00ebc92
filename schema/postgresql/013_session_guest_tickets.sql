-- Version 13 on PostgreSQL: the same table as schema/013_session_guest_tickets.sql.
CREATE TABLE session_guest_tickets (
  guest     TEXT   NOT NULL,
  ticket_id BIGINT NOT NULL,
  PRIMARY KEY (guest, ticket_id)
);
CREATE INDEX session_guest_tickets_by_ticket ON session_guest_tickets (ticket_id);
ALTER TABLE session_ticket_events ADD COLUMN services TEXT NOT NULL DEFAULT '';
