-- Version 11: the ticket events by number alone (docs/persistence.md, "One
-- sequence for several services"). Session services in partitions number
-- their events in one stream, and a node's event feed follows the stream
-- in the store by number, whichever service wrote each event: this index
-- makes "the events after N" one range read instead of a scan of the table.
CREATE INDEX session_ticket_events_by_seq ON session_ticket_events (seq);
