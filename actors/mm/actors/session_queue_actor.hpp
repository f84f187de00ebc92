// A session queue as an actor: it owns one session_queue (nothing else
// touches it), runs its match loop on a timer every `tick`, and tells each
// ticket's owner what became of the ticket. The engine's time is the actor
// clock's since the actor started, so CAF's deterministic test scheduler
// drives it on a virtual clock.
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
#include <unordered_map>

#include "mm/actors/interface.hpp"
#include "mm/session/session_queue.hpp"

namespace mm::actors {

struct session_queue_actor_config {
  session::queue_config queue;
  session::latency_model latency;
  std::uint64_t seed = 1;
  std::size_t finished_kept = 100'000;  // outcomes kept for status requests
  // Added to the engine's ticket ids (1, 2, ...) in every message, so that
  // the ids of several queues never meet (session_service.hpp).
  std::uint64_t ticket_id_base = 0;
};

struct session_queue_state {
  session_queue_state() = default;  // not an aggregate (CAF)
  std::unique_ptr<session::session_queue> queue;
  session_queue_actor_config config;
  caf::actor_clock::time_point started;
  std::unordered_map<std::uint64_t, session_interfaces::owner> owners;  // waiting tickets
  // Owner actor address -> how many of its tickets wait (monitored while > 0).
  std::unordered_map<caf::actor_addr, std::size_t> owner_tickets;
  std::unordered_map<std::uint64_t, ticket_outcome> finished;
  std::deque<std::uint64_t> finished_order;  // oldest first
  static inline const char* name = "mm.session_queue";
};

using session_queue_pointer =
    session_interfaces::queue_actor::stateful_pointer<session_queue_state>;

// Check the config first (session::validate): a queue actor whose config
// cannot run exits at once with the error.
session_interfaces::queue_actor::behavior_type session_queue_actor(
    session_queue_pointer self, session_queue_actor_config config);

}  // namespace mm::actors
