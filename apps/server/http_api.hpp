// The admin HTTP API, the dashboard's files and /metrics, as the handlers of
// an http_server. Routes are found and callers checked from a request's head.
// A query (POST /api/query) is handed to the query bridge and answered when
// the matchmakers answer, with no thread waiting; the other handlers run on
// the server's handler threads and reach the matchmakers through the admin
// bridge (blocking, with a timeout) and the player table through their own
// connections. Every failure is a JSON {"error": "..."} with
// a 4xx or 5xx; no request can stop the server.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>

#include "access.hpp"
#include "http_server.hpp"
#include "metrics.hpp"
#include "mm/actors/admin_bridge.hpp"
#include "mm/actors/errors.hpp"
#include "mm/actors/query_bridge.hpp"
#include "mm/actors/session_bridge.hpp"
#include "mm/actors/ticket_event_feed.hpp"
#include "mm/storage/player_store.hpp"
#include "readiness.hpp"
#include "server_config.hpp"

namespace mm::server {

class cluster_node;
class live_config;
class dry_runner;

struct http_context {
  http_context(const server_config& c, const actors::identity_book& identities,
               actors::admin_bridge<generic_profile>& b, actors::query_bridge<generic_profile>& q,
               actors::session_bridge& s, player_store& writer, player_store& reader)
      : config(c),
        access{c, identities},
        bridge(b),
        queries(q),
        sessions(s),
        db(writer),
        read_db(reader) {}

  const server_config& config;
  access_rules access;  // who the callers are
  actors::admin_bridge<generic_profile>& bridge;
  actors::query_bridge<generic_profile>& queries;  // POST /api/query
  actors::session_bridge& sessions;                // tickets, queues, lobbies
  player_store& db;                                // the player table's writer: upserts
  std::mutex db_mutex;
  // A second connection for lookups and exports, so a write waiting on a
  // locked database (up to the busy timeout) does not hold reads back: in WAL
  // mode a reader never waits for a writer.
  player_store& read_db;
  std::mutex read_db_mutex;
  http_counters counters;
  // The ticket events (GET /api/events); none: the route answers 503.
  actors::ticket_event_feed* events = nullptr;
  // The ticket stream's recording (sessions.record), or null: its counts on /metrics.
  const ticket_recording* recording = nullptr;
  const query_recording* queries_recording = nullptr;  // record_queries
  // This node's part of a cluster (GET /api/cluster, redirects); none: one
  // server alone.
  std::atomic<const cluster_node*> cluster{nullptr};
  // GET /readyz's checks (readiness.hpp); none: ready once serving.
  readiness_probe* readiness = nullptr;
  // POST /api/admin/tokens/reload: the names and roles now in force; throws
  // config_error naming the key. None: the route answers 503.
  std::function<json()> reload_tokens;
  // The configuration's versions (live_config.hpp): the session queues' and
  // the profile's; none: their /api/admin/config routes answer 503.
  live_config* live_sessions = nullptr;
  live_config* live_profile = nullptr;
  // POST /api/admin/config/sessions/dry-run (dry_run.hpp); none: 503.
  dry_runner* dry_run = nullptr;
};

class api_routes;

// Every route of the API (api_routes.hpp), in one table that every door
// serves: HTTP through api_handlers, the RESP port through its command names
// (resp_commands.hpp). Throws std::logic_error when the routes and the API
// document differ.
std::shared_ptr<const api_routes> api_table(http_context& ctx);
http_handlers api_handlers(http_context& ctx, std::shared_ptr<const api_routes> routes);
http_handlers api_handlers(http_context& ctx);  // with a table of its own

}  // namespace mm::server
