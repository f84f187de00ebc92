// The session tick through the queue actor, for mm_session_bench. A queue
// actor is restored with the given tickets (as a restarted server's is) and
// ticks them; then, `rounds` times, the same tickets (new ids and players)
// are created through the actor and ticked again, as in a running server.
// Each tick is timed by the actor itself (session_queue_report::
// last_tick_ms): the engine's tick and its message to the journal.
#pragma once

#include <chrono>
#include <cstddef>
#include <vector>

#include "mm/session/latency.hpp"
#include "mm/session/queue_config.hpp"
#include "mm/session/ticket.hpp"

namespace mm::bench {

struct actor_tick {
  double ms = 0;             // as the actor timed it
  std::size_t outcomes = 0;  // the outcomes the journal got from it
};

struct actor_ticks {
  actor_tick first;               // the restored tickets'
  std::vector<actor_tick> later;  // each round's
};

// A queue actor of `config` (its tick interval set to `tick`, long enough to
// create the tickets between two ticks), with a journal that takes the
// outcomes and writes nothing.
actor_ticks time_actor_ticks(session::queue_config config, const session::latency_model& latency,
                             const std::vector<session::ticket_request>& tickets,
                             std::chrono::milliseconds tick, int rounds);

}  // namespace mm::bench
