// The session tickets' journal in the store (schema/003_ticket_journal.sql):
// what makes a session ticket durable. A ticket's row is written when it is
// created and changed once, when it leaves (its outcome); each of those is
// also an event with a per-server sequence number. A batch of such changes
// is one transaction (group commit). The rows are opaque here: the ticket
// and outcome bytes are the actors' (mm/actors/ticket_codec.hpp).
//
// Ids: a generation counter (never the same number twice, across restarts and
// nodes sharing the database) and the deployment's key for the id
// permutation (mm/session/public_id.hpp).
//
// Keys: a journal row's and an outcome's `id` is the ticket's serial (its
// public id before the permutation, schema/009_journal_by_serial.sql), which
// the actors' journal translates; an event's `ticket` is the public id. The
// store takes both as given.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mm/storage/database.hpp"

namespace mm {

struct journal_ticket {
  std::uint64_t id = 0;
  std::string queues;  // comma-separated
  std::string credential;
  std::int64_t created_unix_ms = 0;
  std::string ticket;  // opaque bytes
  // The other services (partitions) the ticket also waits in: a row for
  // each in session_guest_tickets (schema/013_session_guest_tickets.sql),
  // written with the ticket's row and deleted with its outcome, which each
  // of them reads at its start (read_guest_tickets). Written only.
  std::vector<std::string> guests{};
};

struct journal_outcome {
  std::uint64_t id = 0;
  std::string credential;  // read back from the ticket's row; ignored when written
  std::uint8_t state = 0;  // 1 matched, 2 cancelled, 3 expired, 4 failed
  std::int64_t finished_unix_ms = 0;
  std::string outcome;  // opaque bytes
  // A ticket that waits in several services (its row's own and its
  // guests'): any of them may write its outcome. Such an outcome is written
  // only when the store finds its row still waiting, and then with every
  // outcome and event of its `group`; else none of them is (the group is
  // lost: write_journal). A contested outcome always has a group.
  bool contested = false;
  std::uint32_t group = 0;  // 0: none (written as always)
};

struct journal_event {
  std::uint64_t seq = 0;
  std::uint64_t ticket = 0;
  // Ignored when written: read back from the ticket's row (which the batch
  // or an earlier one wrote), while the store still holds it.
  std::string credential;
  std::string queue;
  std::int64_t at_unix_ms = 0;
  std::string event;        // opaque bytes
  std::uint32_t group = 0;  // journal_outcome::group; 0: none
  // A ticket that waits in several services: all of them, comma-separated,
  // its home's first (schema 013), on each of its events, so that a node
  // following the stream tells the ones it runs; else empty. Read back by
  // read_stream_events only.
  std::string services{};
};

// A running match that backfills, with its reservations (schema/006): the
// row of (queue, match_id) is replaced by `state`, or deleted when `state`
// is empty.
struct journal_backfill {
  std::string queue, match_id, credential;
  std::int64_t updated_unix_ms = 0;
  std::string state;  // opaque bytes; empty: the match stopped backfilling
};

// One transaction: the created rows first, then the outcomes (of tickets
// still waiting; an outcome for a ticket that left already is ignored), then
// the events, then the backfills in their order.
//
// Groups: the contested outcomes' rows are checked first, in the
// transaction, and each group with one that no longer waits (another
// service finished it first) is left out whole: its outcomes and its events.
// A row created in the same batch is not checked (no other service knows
// it yet). The groups left out are the caller's to undo (a match that lost
// puts its other tickets back); the rest of the batch is written. Backfills
// and created rows have no group.
//
// An event's credential is the ticket row's, unless the event gives one (an
// event for the game server of the running match a ticket was placed into).
//
// `released`: tickets (serials) whose player claims go in the same
// transaction, unless the ticket still waits after it: the finished ones of
// a service that claims its players, and those a failed write may have left
// claimed without their row (see player_claim).
//
// Event numbers: without `event_stream` the events carry their own (the
// service's sequence, which the caller keeps). With it, the store numbers
// them in the batch's order after the stream's last number, in the same
// transaction, so services writing one stream (the session queues in
// partitions) share one sequence with no number twice and numbers in commit
// order; the events' own `seq` is ignored.
struct journal_batch {
  std::string event_stream;
  std::vector<journal_ticket> created;
  std::vector<journal_outcome> finished;
  std::vector<journal_event> events;
  std::vector<journal_backfill> backfills;
  std::vector<std::uint64_t> released;
};

// A ticket's claim of its players (schema/010_session_player_claims.sql),
// for session services that share a store and each keep only their own
// tickets in memory: a player waits in at most one ticket across all of
// them. Claims are taken in a transaction of their own, before the ticket's
// journal row is written, all of a ticket's players or none; they go in the
// transaction that writes the ticket's outcome (journal_batch::released).
// Invariant once no write is under way: a claim's ticket is waiting in its
// service's journal. A start restores it (drop_orphan_claims) for claims
// whose ticket's row was never written (a crash or a failed batch between).
struct player_claim {
  std::uint64_t ticket = 0;            // the ticket's serial
  std::vector<std::uint64_t> players;  // distinct
};

// What the backends share of the groups (journal_groups.cpp): the serials
// of the contested outcomes whose rows must still wait (those not created
// in the batch), sorted and distinct (throws errc::invalid_argument for a
// contested outcome without a group); those of `rows` not among `waiting`;
// the groups of the contested outcomes among `gone` (sorted), in increasing
// order; and the batch without the outcomes and events of `groups` (sorted).
std::vector<std::uint64_t> contested_rows(const journal_batch& b);
std::vector<std::uint64_t> not_waiting(const std::vector<std::uint64_t>& rows,
                                       std::vector<std::uint64_t> waiting);
std::vector<std::uint32_t> groups_of(const journal_batch& b,
                                     const std::vector<std::uint64_t>& gone);
journal_batch without_groups(const journal_batch& b, const std::vector<std::uint32_t>& groups);
// The groups of the contested outcomes whose ticket an earlier outcome of
// the batch finishes already (sorted): left out like those whose rows no
// longer wait, so a ticket has one outcome and one outcome event. And the
// union of two sorted lists of groups.
std::vector<std::uint32_t> repeated_groups(const journal_batch& b);
std::vector<std::uint32_t> merged(std::vector<std::uint32_t> a,
                                  const std::vector<std::uint32_t>& b);

// The batch's highest event sequence (0 without events).
inline std::uint64_t highest_seq(const journal_batch& b) {
  std::uint64_t top = 0;
  for (const auto& e : b.events) top = e.seq > top ? e.seq : top;
  return top;
}

// The session_counters row that keeps a service's highest event sequence
// ever written: events are pruned, the counter never goes back.
std::string event_counter_name(const std::string& service);

// What a start reads back.
struct journal_contents {
  std::vector<journal_ticket> waiting;      // by creation time
  std::vector<journal_outcome> retained;    // finished since the given time, newest first, bounded
  std::vector<journal_event> events;        // after the given sequence, oldest first, bounded
  std::uint64_t last_seq = 0;               // the service's highest event sequence ever written
  std::vector<journal_backfill> backfills;  // every row of the service
};

// What to read at a start. `event_stream`: the stream the service's events
// are numbered in (journal_batch), whose last number is `last_seq`; empty:
// the service's own.
struct journal_read {
  std::string event_stream;
  std::int64_t retained_since_unix_ms = 0;
  std::size_t max_retained = 0;
  std::uint64_t events_after = 0;
  std::size_t max_events = 0;
};

// What a prune deletes: finished rows and events older than the time, and
// events beyond the newest `keep_events`.
struct journal_prune {
  std::int64_t before_unix_ms = 0;
  std::size_t keep_events = 0;
  std::size_t keep_finished = 0;
};

// A row the journal kept before version 9, by the ticket's public id: the
// first start that serves its service moves it to the journal by serial
// (mm/actors/session_journal.hpp, adopt_v8_journal).
struct journal_v8_row {
  journal_ticket ticket;   // ticket.id: the public id
  std::uint8_t state = 0;  // 0 waiting, else its outcome's
  std::int64_t finished_unix_ms = 0;
  std::string outcome;
};

using id_key_words = std::array<std::uint64_t, 2>;

// SQLite (the same functions exist on PostgreSQL, pg_store.hpp).
// The highest event number of the batch (0 without events). `lost_groups`:
// the groups left out (above), in increasing order, when asked.
std::uint64_t write_journal(database& db, const std::string& service, const journal_batch& b,
                            std::vector<std::uint32_t>* lost_groups = nullptr);
// At most `max` events of the stream (of the services named `stream` and
// `stream/...`, mm/session/partitions.hpp) after number `after`, by number.
std::vector<journal_event> read_stream_events(database& db, const std::string& stream,
                                              std::uint64_t after, std::size_t max);
journal_contents read_journal(database& db, const std::string& service, const journal_read& r);
std::vector<journal_ticket> read_waiting_tickets(database& db, const std::string& service);
// The waiting tickets of other services that also wait in `service` (their
// guest rows name it), by creation time.
std::vector<journal_ticket> read_guest_tickets(database& db, const std::string& service);
// The rows of `serials` that still wait (any service's), in no given order.
std::vector<journal_ticket> read_waiting_rows(database& db,
                                              const std::vector<std::uint64_t>& serials);
std::vector<journal_backfill> read_backfills(database& db, const std::string& service);
void prune_journal(database& db, const std::string& service, const journal_prune& p);
// The service's rows of before version 9, and their removal (fenced).
std::vector<journal_v8_row> read_v8_journal(database& db, const std::string& service);
void drop_v8_journal(database& db, const std::string& service);
// Claims each ticket's players for `service`, each ticket whole or not at
// all (fenced on PostgreSQL); the tickets refused, because one of their
// players is claimed already (by any service).
std::vector<std::uint64_t> claim_players(database& db, const std::string& service,
                                         const std::vector<player_claim>& claims);
// Deletes the service's claims whose ticket is not waiting in its journal;
// how many. Called by a start before any ticket is written (fenced).
std::size_t drop_orphan_claims(database& db, const std::string& service);
// A running match's id across the partitions of the session queues
// (schema/012_session_match_claims.sql), for the services of one `stream`:
// claim_match takes `match_id` for `service` unless another service holds
// it, and answers the holder's service after (== service: taken, or held
// already). Fenced on PostgreSQL. The claim goes with the match's row
// (journal_batch::backfills with an event stream) or by release_match, when
// the partition did not take the registration.
std::string claim_match(database& db, const std::string& stream, const std::string& match_id,
                        const std::string& service);
std::optional<std::string> match_holder(database& db, const std::string& stream,
                                        const std::string& match_id);
void release_match(database& db, const std::string& stream, const std::string& match_id,
                   const std::string& service);
// Deletes the service's match claims without a running match row (a crash
// between the claim and the row); how many. Called by a start (fenced).
std::size_t drop_orphan_match_claims(database& db, const std::string& service);
std::uint64_t reserve_id_generation(database& db);
// The deployment's key: `fresh` is stored when there is none yet, and the
// stored one returned either way.
id_key_words ticket_id_key(database& db, const id_key_words& fresh);

// Text of a key and back (throws store_error for a stored value that is not
// 32 hex digits).
std::string key_text(const id_key_words& k);
id_key_words key_from_text(const std::string& text);

}  // namespace mm
