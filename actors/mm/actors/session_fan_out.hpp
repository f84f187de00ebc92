// A request that no one session partition answers, asked of every partition
// running here (session_switch.hpp): a short-lived actor sends it to each,
// and once all have answered (or failed) it answers the original caller,
// at the caller's request id, with the merge:
//
// - every_queue: every queue's counts (info), in queue-name order;
// - every_match: the running matches of every queue (a backfill listing);
// - the one that has it: a request naming a running match by its id alone;
//   the first answer that is not errc::not_found, else not_found; or, when
//   other partitions run elsewhere (`elsewhere`), errc::not_owned_here, so
//   a client relaying over the nodes asks the next one.
//
// Any other error of a partition (one restarting) is the answer: a merge
// that left out a partition's queues would look complete and be wrong.
#pragma once

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/message.hpp>
#include <caf/message_id.hpp>
#include <vector>

namespace mm::actors {

enum class fan_out_merge { every_queue, every_match, the_one_that_has_it };

// `services` is not empty; `reply_to` and `mid` are the original request's.
void fan_out(caf::actor_system& sys, std::vector<caf::actor> services, caf::message request,
             fan_out_merge merge, caf::strong_actor_ptr reply_to, caf::message_id mid,
             bool elsewhere = false);

}  // namespace mm::actors
