// Every session queue of a server behind one actor: it spawns a queue actor
// per configured queue (and, with a default queue config, one per new queue
// name on first use, up to max_queues), and passes each message to the queue
// it is for. A queue configured with `shard_by` runs as one queue actor per
// value of that ticket attribute, made on first use ("coop.eu"). A ticket id carries its queue: the
// queue's number in its top 16 bits (session_queue_actor_config::ticket_id_base), so cancel and
// status need no lookup table.
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

// A waiting ticket with its queue's name: what the service saves at a
// graceful stop and takes back at the next start.
struct saved_ticket {
  std::string queue;
  handover_ticket ticket;  // its owner is not saved (an actor of the old run)
};

// The waiting tickets of every queue, when the queues have stopped.
struct saved_tickets {
  std::int64_t now_ms = 0;            // the service's clock (since its epoch) when it saved
  std::vector<saved_ticket> tickets;  // by id
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, saved_ticket& x) {
  return f(caf::meta::type_name("saved_ticket"), x.queue, x.ticket);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, saved_tickets& x) {
  return f(caf::meta::type_name("saved_tickets"), x.now_ms, x.tickets);
}

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
  // Waiting tickets of an earlier run (created_ms relative to this run's
  // epoch: negative). A ticket waits again under its id when its queue has
  // the same number now (queues made on first use are made again, in the
  // order of their old numbers); the others are dropped and logged.
  std::vector<saved_ticket> restored_tickets;
};

// The bits of a ticket id below its queue's number (the number 0 stands for
// the lobbies actor in restart messages).
inline constexpr unsigned ticket_queue_shift = 48;

using session_restart_atom = caf::atom_constant<caf::atom("sesrestart")>;
using session_save_atom = caf::atom_constant<caf::atom("sessave")>;

// The service actor: the game-facing service, the queues' handover, and
// its own restart timer (with the queue's number).
using session_service_actor = session_interfaces::service::extend_with<handover_sink>::extend<
    caf::reacts_to<session_restart_atom, std::uint64_t>,
    // A graceful stop: every queue stops (none restarts), then the waiting
    // tickets they handed over. The lobbies keep serving.
    caf::replies_to<session_save_atom>::with<saved_tickets>>;

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
  // Configured queues split by a ticket attribute (queue_config::shard_by):
  // no actor of their own, one slot per value ("<name>.<value>"), made on
  // first use.
  std::unordered_map<std::string, session::queue_config> sharded;
  // The lobbies actor (invalid while it restarts; it restarts empty, and a
  // game server whose update is refused registers its lobby again).
  session_interfaces::lobbies_actor lobbies;
  std::uint32_t lobby_crashes_in_a_row = 0;
  caf::actor_clock::time_point lobbies_started;
  // While saving: the answer owed once every queue has stopped.
  std::optional<caf::typed_response_promise<saved_tickets>> saving;
  static inline const char* name = "mm.session_service";
};

using session_service_pointer = session_service_actor::stateful_pointer<session_service_state>;

// Every queue config (and the default) is tried at the start: one that
// cannot run makes the service exit at once with mm::config_error, naming
// the key. Check them before spawning (session::validate) to report them.
session_service_actor::behavior_type session_service(session_service_pointer self,
                                                     session_service_config config);

}  // namespace mm::actors
