// The async matchmaker's HTTP routes (docs/api.md): the game's query
// (POST /api/query, answered through the query bridge with no thread
// waiting), its explanation, the matchmakers' caches, buckets and players,
// the player table's writes and the maintenance of the buckets. On a node of
// a cluster, a request for a shard another node serves is redirected there.
#pragma once

#include <vector>

#include "api_routes.hpp"

namespace mm::server {

void add_async_routes(api_routes& api, http_context& ctx);

// The figures of the matchmakers this node serves (for /metrics).
std::vector<matchmaker_figures> served_figures(http_context& ctx);

}  // namespace mm::server
