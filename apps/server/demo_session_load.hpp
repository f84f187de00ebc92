// The demo's stream of synthetic players joining the session queues, so
// that the dashboard's sessions page moves: every 100 ms a tenth of the rate
// joins, each party in the next queue in turn, in parties of 1 to the
// queue's max_party_size (mostly solos), each party placed near a random
// datacenter (its RTTs estimated from its location), MMR around 1500.
// Outcomes and errors are dropped (on a node of a cluster with the queues in
// partitions, a queue another node runs refuses them). Player ids start
// at 1e12 plus a random offset, away from the player table's and from
// another node's demo players.
#pragma once

#include <caf/all.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "mm/actors/interface.hpp"
#include "mm/session/latency.hpp"

namespace mm::server {

struct demo_session_settings {
  struct queue {
    std::string name;
    std::uint32_t max_party_size = 1;
  };
  std::vector<queue> queues;  // at least one
  std::vector<session::datacenter> datacenters;
  std::int64_t players_per_second = 0;
};

caf::behavior demo_session_load(caf::event_based_actor* self,
                                actors::session_interfaces::service service,
                                demo_session_settings settings);

}  // namespace mm::server
