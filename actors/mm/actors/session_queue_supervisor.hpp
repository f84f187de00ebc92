// Stands in front of one session queue actor, as the async side's supervisor
// stands in front of an instance: it passes each message on, and when the
// queue actor ends for any reason (an exception, exit_reason::kill, a failed
// journal write) starts it again after a backoff that doubles with each crash
// in a row, with the waiting tickets the journal holds for that queue (so
// nothing is kept twice in memory). It monitors the queue rather than linking
// to it, so no way the queue ends can take the service down; the queue
// monitors it back and stops when it goes. While the queue is down, requests
// get errc::instance_down at once.
#pragma once

#include <caf/all.hpp>
#include <cstdint>

#include "mm/actors/restart_backoff.hpp"
#include "mm/actors/session_queue_actor.hpp"

namespace mm::actors {

using sup_restart_atom = caf::atom_constant<caf::atom("sqrestart")>;
using stop_atom = caf::atom_constant<caf::atom("stop")>;

using session_queue_supervisor_actor = session_queue_handle::extend<
    // Start the queue again (sent to itself after the backoff).
    caf::reacts_to<sup_restart_atom>,
    // The journal lost records of this queue: start again from the store.
    caf::reacts_to<lost_atom>,
    // Stop the queue for good (a graceful stop): true once it has stopped.
    caf::replies_to<stop_atom>::with<bool>,
    // A new config, passed to the queue and kept for its restarts.
    caf::replies_to<configure_atom, session::queue_config>::with<bool>>;

struct session_queue_supervisor_config {
  session_queue_actor_config queue;  // its `restored` tickets are the first start's
  restart_backoff backoff;
};

struct session_queue_supervisor_state {
  session_queue_supervisor_state() = default;  // not an aggregate (CAF)
  session_queue_supervisor_config config;
  session_queue_actor_type queue;  // invalid while it restarts
  std::uint64_t base_seed = 0;
  std::uint32_t crashes_in_a_row = 0;
  std::uint32_t restarts = 0;
  caf::actor_clock::time_point started;
  std::optional<caf::typed_response_promise<bool>> stopping;
  static inline const char* name = "mm.session_queue_supervisor";
};

using session_queue_supervisor_pointer =
    session_queue_supervisor_actor::stateful_pointer<session_queue_supervisor_state>;

session_queue_supervisor_actor::behavior_type session_queue_supervisor(
    session_queue_supervisor_pointer self, session_queue_supervisor_config config);

}  // namespace mm::actors
