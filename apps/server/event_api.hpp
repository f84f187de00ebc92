// The ticket events over HTTP (docs/session.md, "Ticket events"): GET
// /api/events as a WebSocket that pushes each event as it is written, or as a
// long-poll. Both resume from a sequence number (`after`): a client that
// passes the last one it saw gets every later event of its scope exactly
// once, in order, while the server still holds them (sessions.outcome_retention
// and sessions.max_outcomes), and is told when some were dropped.
//
// Scope: a token's own tickets; an admin's, every ticket. Either may narrow
// it to queues (`queues=a,b`, or subscribe/unsubscribe messages on a
// WebSocket). Bounds: http.max_websockets connections, per token
// sessions.event_connections_per_credential followers (WebSockets and
// waiting long-polls), sessions.event_subscriptions queues per WebSocket, and
// sessions.event_backlog events owed to one WebSocket: a client that falls
// further behind is closed with code 4008, and the server holds nothing more
// for it.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "api_routes.hpp"

namespace mm::server {

// WebSocket close code for a client that fell behind (sessions.event_backlog).
inline constexpr std::uint16_t close_slow_consumer = 4008;
// WebSocket close code on a node of a cluster that stopped running the
// session queues (handed over, or its lease lost): the reason names the node
// that runs them when it is known; reconnect there (or to any node, which
// redirects) with `after` = the last sequence number seen.
inline constexpr std::uint16_t close_sessions_moved = 4307;

// Why this server no longer gives the ticket events, for a follower to
// reconnect elsewhere: nothing while it does (a server alone always does).
using events_moved = std::function<std::optional<std::string>()>;

// GET /api/events without an upgrade: the long-poll.
void add_event_routes(api_routes& api, http_context& ctx);

// GET /api/events with Upgrade: websocket (its caller already admitted).
websocket_answer event_upgrade(http_context& ctx, http_request& req);

// One WebSocket's follower of `feed` from sequence number `after`, already
// subscribed as `follower` with a wake-up that calls `*wake` (see
// event_upgrade; exposed for tests).
struct event_wake {
  std::mutex mutex;
  std::function<void()> target;  // set once the connection is open
  void operator()() {
    std::lock_guard lock(mutex);
    if (target) target();
  }
};
std::shared_ptr<websocket_feed> make_event_socket(actors::ticket_event_feed& feed,
                                                  actors::event_filter filter, std::uint64_t after,
                                                  const session_settings& limits,
                                                  std::shared_ptr<event_wake> wake,
                                                  std::uint64_t follower, events_moved moved = {});

}  // namespace mm::server
