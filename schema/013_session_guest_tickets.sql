-- Version 13: the tickets that wait in the queues of several services (the
-- session queues in partitions, docs/design.md). A ticket's journal row
-- stays with its home service (its first queue's); each other service it
-- waits in has a row here, written in the transaction that writes the
-- ticket's row and deleted in the one that writes its outcome, whichever
-- service writes it. A service reads its rows at its start and takes the
-- tickets into its queues as guests.
CREATE TABLE session_guest_tickets (
  guest     TEXT    NOT NULL,  -- the service the ticket also waits in
  ticket_id INTEGER NOT NULL,  -- the ticket's serial (session_ticket_journal)
  PRIMARY KEY (guest, ticket_id)
) WITHOUT ROWID;
CREATE INDEX session_guest_tickets_by_ticket ON session_guest_tickets (ticket_id);
-- Each event of such a ticket names the services it waits in (its home's
-- first), so that a node that follows the event stream tells those it runs
-- (a new guest, or an outcome another service wrote); '' for the others.
ALTER TABLE session_ticket_events ADD COLUMN services TEXT NOT NULL DEFAULT '';
