// The session tickets' journal as an actor: the one writer of the ticket
// journal (mm/storage/ticket_journal.hpp), and what makes a session ticket
// durable before anyone is told of it.
//
// Shared claims (config.claims): a batch's new tickets first claim their
// players in a transaction of their own; the refused ones are answered with
// errc::conflict and not written.
//
// Group commit: records that arrive while the journal is busy wait in one
// batch; the batch is written in one transaction when the journal reaches the
// flush it sent itself after the first of them (so every record already in
// its mailbox joins), or at once when it holds `max_batch` records. Only then
// are the writers answered (a create's id, a cancel's true) and the listener
// (the session service) told the events, in sequence order, before any
// answer: so the service's books are up to date when a caller hears back.
//
// Order: the journal handles its mailbox in order, and a queue actor sends
// every record of its tickets' lives to it, so a ticket's creation is always
// written before its outcome; a load (a queue starting again) first writes
// everything sent before it.
//
// A failed write answers its writers with the store's error and tells the
// listener which queues lost records, so that they start again from what
// the store holds. Spawn it detached in a server (it blocks on the
// database); tests run it on the deterministic scheduler.
#pragma once

#include <atomic>
#include <caf/all.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "mm/actors/backfill_messages.hpp"
#include "mm/actors/interface.hpp"
#include "mm/actors/journal_contest.hpp"
#include "mm/session/public_id.hpp"
#include "mm/storage/player_store.hpp"

namespace mm::actors {

using journal_atom = caf::atom_constant<caf::atom("journal")>;
using flush_atom = caf::atom_constant<caf::atom("flush")>;
using prune_atom = caf::atom_constant<caf::atom("prune")>;
using committed_atom = caf::atom_constant<caf::atom("committed")>;
using lost_atom = caf::atom_constant<caf::atom("lost")>;
using finish_atom = caf::atom_constant<caf::atom("finish")>;
using reload_atom = caf::atom_constant<caf::atom("reload")>;
using sync_atom = caf::atom_constant<caf::atom("sync")>;
using claim_atom = caf::atom_constant<caf::atom("claim")>;
using guest_atom = caf::atom_constant<caf::atom("guest")>;
using forget_atom = caf::atom_constant<caf::atom("forget")>;

// A ticket as the journal keeps it: what a queue needs to take it back.
struct durable_ticket {
  std::uint64_t id = 0;
  std::vector<std::string> queues;  // the first is the one whose actor journals it
  std::int64_t created_ms = 0;      // engine time (since the service's epoch)
  session_ticket ticket;            // with its credential
  // Its queues fall in several partitions (journal_contest.hpp): set by the
  // service that hands it to a queue, which then places it into new
  // matches only (session::ticket_request::new_matches_only).
  bool contested = false;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, durable_ticket& x) {
  return f(caf::meta::type_name("durable_ticket"), x.id, x.queues, x.created_ms, x.ticket,
           x.contested);
}

// Who hears of what the journal wrote: the events in sequence order (a new
// ticket's as waiting), the queues whose records a failed write lost, and
// the outcomes of the matches (and lone outcomes) that lost a contested
// ticket to another partition's outcome, written first (journal_contest.hpp):
// none of them was written, their other tickets still wait.
using journal_listener =
    caf::typed_actor<caf::reacts_to<journal_atom, committed_atom, std::vector<ticket_outcome>>,
                     caf::reacts_to<journal_atom, lost_atom, std::vector<std::string>>,
                     caf::reacts_to<journal_atom, lost_atom, std::vector<ticket_outcome>>>;

using session_journal_actor = caf::typed_actor<
    // A new ticket: its id once it is written.
    caf::replies_to<journal_atom, create_atom, durable_ticket>::with<std::uint64_t>,
    // A cancel (its outcome): true once it is written.
    caf::replies_to<journal_atom, cancel_atom, ticket_outcome>::with<bool>,
    // Outcomes of tickets that left (a restored ticket that fails): written,
    // then told.
    caf::reacts_to<journal_atom, finish_atom, std::vector<ticket_outcome>>,
    // A tick's outcomes (matched, expired, failed): the same, one a ticket;
    // with the running matches it changed, in the same transaction.
    caf::reacts_to<journal_atom, finish_atom, tick_outcomes>,
    // A running match as it is now (backfill_messages.hpp), or its row
    // deleted (`stopped`): true once written.
    caf::replies_to<journal_atom, backfill_atom, backfill_state, bool>::with<bool>,
    // With shared claims and an event stream: a new running match's id
    // claimed across the partitions (player_store::claim_match), in a
    // transaction of its own: true when this service holds it, false when
    // another does.
    caf::replies_to<journal_atom, claim_atom, backfill_atom, std::string>::with<bool>,
    // That claim released (a registration its queue refused).
    caf::reacts_to<journal_atom, release_atom, backfill_atom, std::string>,
    // The running matches of a queue, after every record sent before.
    caf::replies_to<journal_atom, reload_atom, backfill_atom,
                    std::string>::with<std::vector<backfill_state>>,
    // The waiting tickets of a queue, after every record sent before: its
    // own and its guests (tickets of other partitions that wait in it too).
    caf::replies_to<journal_atom, reload_atom, std::string>::with<std::vector<durable_ticket>>,
    // The tickets of other partitions among these ids that still wait (the
    // new guests an event named): read from the store, kept as contested.
    caf::replies_to<journal_atom, guest_atom,
                    std::vector<std::uint64_t>>::with<std::vector<durable_ticket>>,
    // Contested tickets whose outcome another partition wrote: forgotten.
    caf::reacts_to<journal_atom, forget_atom, std::vector<std::uint64_t>>,
    // Everything sent before is written: true (or the store's error).
    caf::replies_to<journal_atom, sync_atom>::with<bool>,
    // The same for one queue: an error also when a write of that queue's
    // records failed and the queue has not read its rows back since (it is
    // starting again from the store). A view answered after it shows only
    // what is written.
    caf::replies_to<journal_atom, sync_atom, std::string>::with<bool>,
    // Who hears of what was written (the session service, once it runs).
    caf::reacts_to<journal_atom, journal_listener>,
    // Its own timers.
    caf::reacts_to<journal_atom, flush_atom>, caf::reacts_to<journal_atom, prune_atom>>;

// The journal's last write to the store (a batch, or the prune every
// prune_every), for readiness (GET /readyz): set by the journal actor, read
// by any thread.
struct journal_health {
  std::atomic<bool> last_write_failed{false};
  std::atomic<std::uint64_t> failures{0};
};

struct session_journal_config {
  std::shared_ptr<player_store> store;           // used by the journal alone
  std::string service = "matchmakerd";           // the rows' owner (a cluster node's name)
  caf::actor_clock::time_point epoch;            // engine time 0 on the actor clock
  std::int64_t unix_epoch_ms = 0;                // the same instant in unix milliseconds
  std::uint64_t last_seq = 0;                    // the highest event sequence written before
  std::size_t max_batch = 4096;                  // records per transaction
  std::chrono::milliseconds retention{600'000};  // outcomes and events kept this long
  std::size_t max_retained = 100'000;            // and at most this many of each
  std::chrono::milliseconds prune_every{10'000};
  std::shared_ptr<journal_health> health;  // none: nobody asks
  // The permutation of the ticket ids: the store keys a ticket's row by its
  // serial (ticket_journal.hpp), which keeps a batch's rows on a few pages.
  // None: by public id (tests of the journal alone).
  std::shared_ptr<const session::id_permutation> ids;
  // The service shares its players' claims with the other services of the
  // store (the session queues in partitions, docs/design.md): a new ticket's
  // players are claimed before its row is written, and an outcome frees them
  // in its own transaction (ticket_journal.hpp, player_claim). Off: the
  // service's books alone keep one ticket per player.
  bool claims = false;
  // The event sequence the service shares with the other partitions of the
  // store (ticket_journal.hpp, journal_batch::event_stream): the store
  // numbers each batch's events, and the journal tells them with the
  // store's numbers. Empty: the service's own sequence, numbered here. With
  // a stream and claims, running match ids are claimed there too
  // (claim_atom).
  std::string event_stream;
  // With a stream: the credentials of the tickets waiting at the start (by
  // public id), which their outcomes' event rows carry.
  std::unordered_map<std::uint64_t, std::string> waiting_credentials;
  // The partition it journals, of the stream's partitions: a ticket whose
  // queues fall in several is contested (journal_contest.hpp). One
  // partition: none is.
  session::partition_slice partition;
  // The contested tickets waiting at the start (its own and its guests), by
  // public id: their services.
  std::unordered_map<std::uint64_t, std::string> contested_waiting;
};

// The times of a running match shifted by `by` ms (engine time to unix
// time and back).
void shift_times(backfill_state& b, std::int64_t by);

// A ticket's key in the journal's store, and back (none: the id itself).
std::uint64_t serial_of(const session::id_permutation* ids, std::uint64_t public_id);
std::uint64_t public_of(const session::id_permutation* ids, std::uint64_t serial);

struct session_journal_state;
using session_journal_pointer = session_journal_actor::stateful_pointer<session_journal_state>;

struct session_journal_state {
  session_journal_state() = default;  // not an aggregate (CAF)
  session_journal_config config;
  journal_listener listener;
  struct pending_create {
    durable_ticket ticket;
    caf::typed_response_promise<std::uint64_t> promise;
  };
  struct pending_finish {
    ticket_outcome outcome;
    std::optional<caf::typed_response_promise<bool>> promise;  // a cancel's
  };
  struct pending_backfill {
    backfill_state state;
    bool stopped = false;
    std::optional<caf::typed_response_promise<bool>> promise;
  };
  std::vector<pending_create> creates;
  std::vector<pending_finish> finishes;
  std::vector<pending_backfill> backfills;
  std::vector<ticket_outcome> copies;  // placements told to game servers: events only
  // Tickets (serials) whose claims a failed write may have left: released
  // by the next batch written, unless the ticket waits.
  std::vector<std::uint64_t> claims_to_release;
  // With an event stream: each waiting ticket's credential (by public id),
  // from its creation's commit to its outcome's, for the outcome's event row
  // (an outcome comes from its queue without it).
  std::unordered_map<std::uint64_t, std::string> stream_credentials;
  contested_tickets contested;
  bool flush_sent = false;
  std::uint64_t last_seq = 0;
  std::uint64_t batches = 0, records = 0, failures = 0;
  // Queues whose records a failed write lost, until they read their rows back.
  std::set<std::string> lost_queues;
  static inline const char* name = "mm.session_journal";
};

session_journal_actor::behavior_type session_journal(session_journal_pointer self,
                                                     session_journal_config config);

// Comma-separated queue names and back (queue names have no comma).
std::string join_queues(const std::vector<std::string>& queues);
std::vector<std::string> split_queues(const std::string& text);

// What a start reads back from the store, decoded.
struct session_journal_contents {
  std::vector<durable_ticket> waiting;    // created_ms relative to the new epoch
  std::vector<ticket_outcome> retained;   // oldest first, with their credentials
  std::vector<ticket_outcome> events;     // the newest events (at most max_retained), oldest first
  std::vector<backfill_state> backfills;  // the running matches, times relative to the new epoch
  // With partitions: the tickets of other partitions that also wait in this
  // one's queues (read_guest_tickets), created_ms relative to the new epoch.
  std::vector<durable_ticket> guests;
  std::uint64_t last_seq = 0;
  std::size_t unreadable = 0;  // rows that did not decode (left in the store)
};
// Moves the service's rows kept before version 9 (by public id) into the
// journal by serial, then deletes them; a crash between the two is repaired
// by the next call (the writes are idempotent). Called by the start that
// serves the service, before load_session_journal. The number of rows moved.
std::size_t adopt_v8_journal(player_store& store, const std::string& service,
                             const session::id_permutation& ids);

// `ids`: as session_journal_config::ids. Events without a credential (all but
// a game server's copies) take their ticket's, when it was read back.
session_journal_contents load_session_journal(
    player_store& store, const std::string& service, const session::id_permutation* ids,
    std::int64_t unix_epoch_ms, std::chrono::milliseconds retention, std::size_t max_retained,
    const std::string& event_stream = {}, bool guests = false);

// The tickets of the journal's rows, decoded; the rows that do not decode are
// counted in `unreadable`.
std::vector<durable_ticket> decode_waiting(const std::vector<journal_ticket>& rows,
                                           const session::id_permutation* ids,
                                           std::int64_t unix_epoch_ms, std::size_t* unreadable);
// The same for the running matches' rows.
std::vector<backfill_state> decode_backfills(const std::vector<journal_backfill>& rows,
                                             std::int64_t unix_epoch_ms, std::size_t* unreadable);

}  // namespace mm::actors
