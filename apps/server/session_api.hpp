// The session matchmaker's HTTP routes (docs/api.md, "Sessions over HTTP"):
// tickets (create, long-poll, cancel), queues and their waiting tickets, and
// lobbies. Every route is answered through the session bridge, holding no
// thread while the actors work or a long-poll waits.
#pragma once

#include "api_routes.hpp"

namespace mm::server {

// The longest a GET /api/tickets/{id}?wait= may wait.
inline constexpr std::uint64_t max_ticket_wait_seconds = 60;

void add_session_routes(api_routes& api, http_context& ctx);

}  // namespace mm::server
