// Every session queue of a server behind one actor: it spawns a queue actor
// per configured queue (and, with a default queue config, one per new queue
// name on first use, up to max_queues), and passes each message to the queue
// it is for. A ticket id carries its queue: the queue's number in its top 16
// bits (session_queue_actor_config::ticket_id_base), so cancel and status
// need no lookup table.
//
// Supervision: each queue hands over its waiting tickets as they come and go
// (session_queue_actor.hpp). A queue that crashes is started again after a
// backoff with the tickets it last handed over: same ids, creation times and
// owners; while it is down its requests get errc::instance_down at once.
#pragma once

#include <caf/all.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "mm/actors/interface.hpp"
#include "mm/actors/restart_backoff.hpp"
#include "mm/actors/session_lobbies_actor.hpp"
#include "mm/actors/session_queue_actor.hpp"

namespace mm::actors {

struct session_service_config {
  std::vector<session::queue_config> queues;
  // Unset: only the configured queues exist. Set: a ticket for another name
  // makes a queue of that name with this config.
  std::optional<session::queue_config> default_queue;
  session::latency_model latency;  // the datacenters every queue uses
  std::size_t max_queues = 256;    // configured ones included
  std::uint64_t seed = 1;
  std::size_t finished_kept = 100'000;  // per queue, for status requests
  restart_backoff backoff;
  session::lobby_config lobbies;
  std::vector<lobby_registration> restored_lobbies;  // of an earlier run
};

// The bits of a ticket id below its queue's number (the number 0 stands for
// the lobbies actor in restart messages).
inline constexpr unsigned ticket_queue_shift = 48;

using session_restart_atom = caf::atom_constant<caf::atom("sesrestart")>;

// The service actor: the game-facing service, the queues' handover, and
// its own restart timer (with the queue's number).
using session_service_actor = session_interfaces::service::extend_with<handover_sink>::extend<
    caf::reacts_to<session_restart_atom, std::uint64_t>>;

struct session_queue_slot {
  session::queue_config config;
  session_interfaces::queue handle;  // invalid while it restarts
  // The tickets it handed over that have not left: what a restart restores.
  std::unordered_map<std::uint64_t, handover_ticket> waiting;
  std::uint32_t crashes_in_a_row = 0;
  std::uint32_t restarts = 0;
  caf::actor_clock::time_point started;
};

struct session_service_state {
  session_service_state() = default;  // not an aggregate (CAF)
  session_service_config config;
  caf::actor_clock::time_point epoch;      // every queue's time 0
  std::vector<session_queue_slot> queues;  // by number - 1
  std::unordered_map<std::string, std::size_t> by_name;
  // The lobbies actor (invalid while it restarts; it restarts empty, and a
  // game server whose update is refused registers its lobby again).
  session_interfaces::lobbies_actor lobbies;
  std::uint32_t lobby_crashes_in_a_row = 0;
  caf::actor_clock::time_point lobbies_started;
  static inline const char* name = "mm.session_service";
};

using session_service_pointer = session_service_actor::stateful_pointer<session_service_state>;

// Every queue config (and the default) is tried at the start: one that
// cannot run makes the service exit at once with mm::config_error, naming
// the key. Check them before spawning (session::validate) to report them.
session_service_actor::behavior_type session_service(session_service_pointer self,
                                                     session_service_config config);

}  // namespace mm::actors
