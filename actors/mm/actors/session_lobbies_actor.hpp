// The server's running lobbies as an actor: it owns one
// session::lobby_registry (nothing else touches it), answers the lobbies
// interface (interface.hpp) and closes lobbies left empty for the registry's
// idle_after, checking every `idle_check`. Time is the actor clock's since
// the actor started, so the deterministic test scheduler drives it.
//
// Invariant: every answer is the registry's: a lobby never holds more than
// its max_players, a party is placed whole, fullest lobby with room first.
#pragma once

#include <caf/all.hpp>
#include <chrono>
#include <memory>
#include <vector>

#include "mm/actors/interface.hpp"
#include "mm/session/lobbies.hpp"

namespace mm::actors {

struct session_lobbies_config {
  session::lobby_config lobbies;
  session::latency_model latency;
  std::uint64_t seed = 1;
  std::chrono::milliseconds idle_check{1000};
  std::vector<lobby_registration> restored;  // lobbies of an earlier run
};

struct session_lobbies_state {
  session_lobbies_state() = default;  // not an aggregate (CAF)
  std::unique_ptr<session::lobby_registry> registry;
  caf::actor_clock::time_point epoch;
  std::chrono::milliseconds idle_check{1000};
  std::uint64_t found = 0, created = 0, closed_idle = 0, full = 0;
  static inline const char* name = "mm.session_lobbies";
};

using session_lobbies_pointer =
    session_interfaces::lobbies_actor::stateful_pointer<session_lobbies_state>;

// The config is checked when the actor starts (no datacenters, a lobby size
// of 0): it exits at once with the error. Restored lobbies that no longer
// fit (a datacenter gone) are dropped.
session_interfaces::lobbies_actor::behavior_type session_lobbies_actor(
    session_lobbies_pointer self, session_lobbies_config config);

// The registry's lobbies as messages, sorted by id.
std::vector<lobby_registration> lobby_list(const session::lobby_registry& registry);

}  // namespace mm::actors
