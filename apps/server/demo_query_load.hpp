// The demo's player table and its own async traffic: `./run server` writes
// synthetic players into an empty table, then sends itself queries from
// random synthetic attackers through the routing client, so that the
// dashboard has requests to show.
#pragma once

#include <caf/all.hpp>
#include <cstdint>

#include "mm/actors/generic_actors.hpp"
#include "mm/storage/player_store.hpp"

namespace mm::server {

// Writes `players` synthetic players into `db` when it holds none (and
// `players` > 0), in chunks of 10,000; the same players for the same count.
void fill_demo_table(player_store& db, std::int64_t players);

// Every 100 ms a tenth of `per_second` queries from attackers among ids
// 1..players; the answers are dropped.
caf::behavior demo_query_load(caf::event_based_actor* self,
                              actors::interfaces<generic_profile>::client client,
                              std::int64_t per_second, std::uint64_t players);

}  // namespace mm::server
