// Backfill in the session tick, for mm_session_bench: a queue of waiting
// solo tickets and running matches with open seats, ticked once.
//
// - session_tick_with_backfill_ms: the tick (median of three queues), which
//   fills the matches' open seats, then forms new matches from the rest, in
//   a queue that ticked as many tickets and matches before (a running
//   server's queue, as session_tick_ms's).
// - session_tick_plain_ms: the same tickets' tick without running matches,
//   measured the same way; backfill_tick_vs_plain: the ratio.
// - session_first_tick_with_backfill_ms: the tick with running matches in
//   a fresh queue, which also pays for the first touch of its working
//   memory (as session_first_tick_ms).
// - backfill_filled_share: the open seats a tick filled where tickets are
//   scarce (a tenth of them, for as many matches), and the same share for
//   an offline greedy reference on the same queue (offline_filled_share):
//   the matches in the tick's order, each taking the nearest admissible
//   tickets by MMR among all those not taken yet (the rule and the latency
//   stage the tick applies, every ticket looked at). backfill_vs_offline:
//   the ratio. backfill_filled_share_plenty: the share with every ticket.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "mm/session/latency.hpp"
#include "mm/session/queue_config.hpp"
#include "mm/session/ticket.hpp"

namespace mm::bench {

// `matches` running matches of 1 to max_players - 1 players each, at the
// datacenters of `latency`, with `tickets` waiting in a queue of `config`
// (one difference rule on MMR, the staged latency policy, no teams). Emits
// its figures with `extra` in each line; returns session_tick_with_backfill_ms.
// `before_timed` is called before each of that figure's three ticks is set
// up (the bench measures its reference there).
double backfill_phase(const session::queue_config& config, const session::latency_model& latency,
                      const std::vector<session::ticket_request>& tickets, std::size_t matches,
                      const std::string& extra, const std::function<void()>& before_timed);

}  // namespace mm::bench
