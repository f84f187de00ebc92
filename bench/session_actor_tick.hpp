// The session tick through the queue actor, for mm_session_bench: a queue
// actor restored with the given tickets (as a restarted server's is), its
// first tick timed by the actor itself (session_queue_report::last_tick_ms:
// the engine's tick and the building of the outcomes for the journal).
#pragma once

#include <cstddef>
#include <vector>

#include "mm/session/latency.hpp"
#include "mm/session/queue_config.hpp"
#include "mm/session/ticket.hpp"

namespace mm::bench {

struct actor_tick {
  double ms = 0;             // the actor's first tick
  std::size_t outcomes = 0;  // the outcomes the journal got from it
};

// `tickets` waiting since engine time 0 in a queue actor of `config` (its
// tick interval set to `tick`), with a journal that takes the outcomes and
// writes nothing.
actor_tick actor_first_tick(session::queue_config config, const session::latency_model& latency,
                            const std::vector<session::ticket_request>& tickets,
                            std::chrono::milliseconds tick);

}  // namespace mm::bench
