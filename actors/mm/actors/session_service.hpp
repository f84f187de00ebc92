// Every session queue of a server behind one actor: it spawns a queue actor
// per configured queue (and, with a default queue config, one per new queue
// name on first use, up to max_queues), and passes each message to the queue
// it is for. A ticket id carries its queue: the queue's number in its top 16
// bits (session_queue_actor_config::ticket_id_base), so cancel and status
// need no lookup table.
#pragma once

#include <caf/all.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "mm/actors/interface.hpp"
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
};

// The bits of a ticket id below its queue's number.
inline constexpr unsigned ticket_queue_shift = 48;

struct session_service_state {
  session_service_state() = default;  // not an aggregate (CAF)
  session_service_config config;
  std::vector<session_interfaces::queue> queues;  // by number - 1
  std::unordered_map<std::string, std::size_t> by_name;
  static inline const char* name = "mm.session_service";
};

using session_service_pointer =
    session_interfaces::service::stateful_pointer<session_service_state>;

// Check every queue config first (session::validate): a queue actor whose
// config cannot run exits at once.
session_interfaces::service::behavior_type session_service(session_service_pointer self,
                                                           session_service_config config);

}  // namespace mm::actors
