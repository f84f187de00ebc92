// A session queue as an actor: it owns one session_queue (nothing else
// touches it) and runs its match loop on a timer every `tick`. The engine's
// time is the actor clock's since `epoch`, so CAF's deterministic test
// scheduler drives it on a virtual clock, and a restarted queue keeps its
// tickets' times.
//
// Durability: every record of its tickets' lives goes to the journal
// (session_journal.hpp), from this one actor and so in order: a new ticket
// (answered with its id once written), a cancel (answered once written), and
// each tick's matches, expiries and failures (whose owners the service tells
// once they are written). The queue keeps no owners and no outcomes: a crash
// loses nothing the journal has not got, and the queue starts again from it.
//
// A multi-queue ticket (session::ticket_claims) is claimed before it is
// matched, expired, failed or cancelled here; a ticket another queue claimed
// first is dropped without a word (withdrawn).
#pragma once

#include <caf/all.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "mm/actors/backfill_messages.hpp"
#include "mm/actors/interface.hpp"
#include "mm/actors/session_journal.hpp"
#include "mm/actors/session_reconfigure.hpp"
#include "mm/actors/ticket_recorder.hpp"
#include "mm/session/public_id.hpp"
#include "mm/session/session_queue.hpp"
#include "mm/session/ticket_claims.hpp"

namespace mm::actors {

using withdraw_atom = caf::atom_constant<caf::atom("withdraw")>;
using restore_atom = caf::atom_constant<caf::atom("restore")>;
using check_atom = caf::atom_constant<caf::atom("check")>;

// A ticket as the service hands it to one of its queues.
struct queued_ticket {
  durable_ticket ticket;
  // This queue writes its creation to the journal and answers once written
  // (the first queue of a ticket); false: another of a multi-queue ticket's
  // queues, answered at once.
  bool journal = true;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, queued_ticket& x) {
  return f(caf::meta::type_name("queued_ticket"), x.ticket, x.journal);
}

// One queue (the queue actor, and the supervisor in front of it).
using session_queue_handle = caf::typed_actor<
    // A ticket with its id: the id once durable, or an error naming the field.
    caf::replies_to<create_atom, queued_ticket>::with<std::uint64_t>,
    // Whether create would take the ticket, but for its players waiting
    // already (true), or the error naming the field; nothing changes.
    caf::replies_to<check_atom, queued_ticket>::with<bool>,
    // Cancel a waiting ticket: true once durable; false when it is not waiting here.
    caf::replies_to<cancel_atom, std::uint64_t>::with<bool>,
    // A multi-queue ticket left through another queue: drop it without a word.
    caf::reacts_to<withdraw_atom, std::uint64_t>,
    // A match of this queue lost a contested ticket to another partition's
    // outcome at its commit (journal_contest.hpp): the tickets the store
    // holds as waiting in this queue that the engine lacks (that match's
    // others) are taken back, with their ids and times.
    caf::reacts_to<restore_atom>,
    // Its counts.
    caf::replies_to<info_atom>::with<session_queue_report>,
    // A page (offset, limit) of its waiting tickets, oldest first.
    caf::replies_to<inspect_atom, std::uint32_t,
                    std::uint32_t>::with<std::vector<waiting_ticket_view>>,
    // Backfill (session_queue_backfills.hpp): a running match registered,
    // updated, its seats confirmed or released (its state once durable), or
    // stopped (true once durable; false when the queue does not hold it);
    // errors name the field. The credentials are the service's to check.
    caf::replies_to<backfill_atom, create_atom, backfill_registration>::with<backfill_state>,
    caf::replies_to<backfill_atom, update_atom, backfill_registration>::with<backfill_state>,
    caf::replies_to<backfill_atom, close_atom, std::string>::with<bool>,
    caf::replies_to<backfill_atom, confirm_atom, seat_change>::with<backfill_state>,
    caf::replies_to<backfill_atom, release_atom, seat_change>::with<backfill_state>,
    // Its running matches, their seats counted; one of them.
    caf::replies_to<backfill_atom, inspect_atom>::with<std::vector<backfill_state>>,
    caf::replies_to<backfill_atom, status_atom, std::string>::with<backfill_state>,
    // Why a waiting ticket waits, or a running match's open seats (the
    // candidates judged at most): errc::not_found when it does not hold it.
    caf::replies_to<explain_atom, std::uint64_t, std::uint32_t>::with<session::explanation>,
    caf::replies_to<backfill_atom, explain_atom, std::string,
                    std::uint32_t>::with<session::explanation>>;

using session_queue_actor_type = session_queue_handle::extend<
    caf::reacts_to<session_tick_atom>,
    // A new config (session_reconfigure.hpp): true once the queue runs
    // under it, or the error naming the key.
    caf::replies_to<configure_atom, session::queue_config>::with<bool>>;

struct session_queue_actor_config {
  session::queue_config queue;
  session::latency_model latency;
  std::uint64_t seed = 1;
  // Engine time 0; unset: when the actor starts.
  std::optional<caf::actor_clock::time_point> epoch;
  session_journal_actor journal;
  std::shared_ptr<session::ticket_claims> claims;  // for multi-queue tickets
  // The journal claims the players of each new ticket in the store
  // (session_journal_config::claims), and may refuse it: a ticket is then
  // checked, written, and only then taken into the queue, so that no tick
  // matches a ticket the journal refused. Off: taken at once, written after.
  bool admit_after_write = false;
  std::shared_ptr<session::id_source> ids;         // match ids; null: the engine's own
  std::vector<durable_ticket> restored;            // waiting tickets to take back
  std::vector<backfill_state> restored_backfills;  // running matches to take back
  caf::actor parent;  // the queue stops when it is gone (monitored, not linked)
  // Why its tickets wait: every `wait_reasons_every` (0: never), after a
  // tick, `wait_reasons_sample` waiting tickets drawn at random are
  // explained (200 candidates each) and counted by their main reason.
  std::chrono::milliseconds wait_reasons_every{5000};
  std::uint32_t wait_reasons_sample = 8;
  // A recorded queue's recorder (ticket_recorder.hpp), told of its start
  // and its ticks in unix ms (engine time + unix_epoch_ms); null: none.
  std::shared_ptr<ticket_recorder> recorder;
  std::int64_t unix_epoch_ms = 0;
};

struct session_queue_state {
  session_queue_state() = default;  // not an aggregate (CAF)
  std::unique_ptr<session::session_queue> queue;
  session_queue_actor_config config;
  // The running matches' registrations as their game servers sent them
  // (what the journal keeps), by match id.
  std::unordered_map<std::string, backfill_registration> registrations;
  caf::actor_clock::time_point epoch;
  // What the report measures of the matches since the actor started.
  std::uint64_t players_matched = 0;
  value_histogram wait_seconds{{1, 2, 5, 10, 20, 30, 60, 120, 300}};
  value_histogram mmr_spread{{25, 50, 100, 200, 400, 800}};
  value_histogram worst_rtt_ms{{10, 25, 50, 75, 100, 150, 250}};
  value_histogram tick_ms{{1, 2, 5, 10, 25, 50, 100, 250, 500, 1000}};
  double last_tick_ms = 0;
  // The engine time of the last tick (for the recording: a ticket created
  // at or before it but added after it joined late).
  std::optional<session::time_ms> last_tick_at;
  // Sampled waiting tickets by their main reason (a label per rule and per
  // refusal: bounded by the queue's config), and when the last sample was.
  std::map<std::string, std::uint64_t> wait_reasons;
  std::optional<session::time_ms> last_wait_sample;
  std::uint64_t sample_state = 0;  // the draw's generator
  // Restores of a lost match's tickets tried again in a row (restore_missing).
  std::uint32_t restore_retries = 0;
  static inline const char* name = "mm.session_queue";
};

using session_queue_pointer = session_queue_actor_type::stateful_pointer<session_queue_state>;

// Check the config first (session::validate): a queue actor whose config
// cannot run exits at once with the error. Restored tickets that no longer
// fit the config leave as failed (journaled, so their owners hear of it).
session_queue_actor_type::behavior_type session_queue_actor(session_queue_pointer self,
                                                            session_queue_actor_config config);

// The engine's request for a ticket as the game sent it.
session::ticket_request to_queue_request(const durable_ticket& t);

}  // namespace mm::actors
