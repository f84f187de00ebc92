// A session queue as an actor: it owns one session_queue (nothing else
// touches it), runs its match loop on a timer every `tick`, and tells each
// ticket's owner what became of the ticket. The engine's time is the actor
// clock's since `epoch`, so CAF's deterministic test scheduler drives it on a
// virtual clock, and a restarted queue keeps its tickets' times.
//
// Handover: the actor tells its sink (the session service) every ticket it
// takes and every one that leaves, so that after a crash the service starts
// it again with the tickets still waiting. A ticket's leaving reaches the sink
// before its owner is told, so a restarted queue never matches a ticket whose
// owner already heard of a match.
//
// Invariants: an owner is told at most once per ticket, and only the truth
// (matched with its match, cancelled, expired or failed); a ticket whose
// owner is gone is cancelled (nobody would be told its match). Status
// requests are answered for waiting tickets and the most recent finished
// ones (`finished_kept`).
#pragma once

#include <caf/all.hpp>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "mm/actors/interface.hpp"
#include "mm/session/session_queue.hpp"

namespace mm::actors {

using handover_atom = caf::atom_constant<caf::atom("handover")>;

// A waiting ticket as its queue hands it over.
struct handover_ticket {
  std::uint64_t id = 0;  // as the game knows it (with the queue's base)
  session_ticket ticket;
  session_interfaces::owner owner;
  std::int64_t created_ms = 0;  // since the epoch
};

// Local only (queue to service), but CAF asks every message type to be
// inspectable.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, handover_ticket& x) {
  return f(caf::meta::type_name("handover_ticket"), x.id, x.ticket, x.owner, x.created_ms);
}

// Where a queue hands its tickets over: (queue number, a ticket taken) and
// (queue number, the ids of tickets that left).
using handover_sink =
    caf::typed_actor<caf::reacts_to<handover_atom, std::uint64_t, handover_ticket>,
                     caf::reacts_to<handover_atom, std::uint64_t, std::vector<std::uint64_t>>>;

struct session_queue_actor_config {
  session::queue_config queue;
  session::latency_model latency;
  std::uint64_t seed = 1;
  std::size_t finished_kept = 100'000;  // outcomes kept for status requests
  // Added to the engine's ticket ids (1, 2, ...) in every message, so that
  // the ids of several queues never meet (session_service.hpp).
  std::uint64_t ticket_id_base = 0;
  // Engine time 0; unset: when the actor starts.
  std::optional<caf::actor_clock::time_point> epoch;
  std::uint64_t number = 0;               // the queue's number, in handover messages
  handover_sink handover;                 // invalid: no handover
  std::vector<handover_ticket> restored;  // waiting tickets of an earlier run
};

struct session_queue_state {
  session_queue_state() = default;  // not an aggregate (CAF)
  std::unique_ptr<session::session_queue> queue;
  session_queue_actor_config config;
  caf::actor_clock::time_point epoch;
  std::unordered_map<std::uint64_t, session_interfaces::owner> owners;  // waiting tickets
  // Owner actor address -> how many of its tickets wait (monitored while > 0).
  std::unordered_map<caf::actor_addr, std::size_t> owner_tickets;
  std::unordered_map<std::uint64_t, ticket_outcome> finished;
  std::deque<std::uint64_t> finished_order;  // oldest first
  // What the report measures of the matches since the actor started.
  std::uint64_t players_matched = 0;
  value_histogram wait_seconds{{1, 2, 5, 10, 20, 30, 60, 120, 300}};
  value_histogram mmr_spread{{25, 50, 100, 200, 400, 800}};
  value_histogram worst_rtt_ms{{10, 25, 50, 75, 100, 150, 250}};
  static inline const char* name = "mm.session_queue";
};

using session_queue_pointer =
    session_interfaces::queue_actor::stateful_pointer<session_queue_state>;

// Check the config first (session::validate): a queue actor whose config
// cannot run exits at once with the error. Restored tickets that no longer
// fit the config are dropped.
session_interfaces::queue_actor::behavior_type session_queue_actor(
    session_queue_pointer self, session_queue_actor_config config);

}  // namespace mm::actors
