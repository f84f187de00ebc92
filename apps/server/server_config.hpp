// matchmakerd's configuration: a JSON file and command-line flags over the same
// keys ("http.port" in a flag is {"http": {"port": ...}} in the file). Every key
// has a default, so no configuration at all starts the demo server.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "http_server.hpp"
#include "mm/actors/actor_tls.hpp"
#include "mm/actors/identity.hpp"
#include "mm/actors/port_limits.hpp"
#include "mm/actors/router.hpp"
#include "mm/actors/worker_idle.hpp"
#include "mm/engine/generic_profile.hpp"
#include "mm/engine/log.hpp"
#include "mm/engine/options.hpp"
#include "mm/engine/synthetic_players.hpp"
#include "query_recording.hpp"
#include "resp_server.hpp"
#include "session_config.hpp"

namespace mm::server {

// Roles and identities are the actor layer's, the same at every door
// (mm/actors/identity.hpp).
using actors::role;
// A token: its secret, the name of its identity, its role.
using access_token = actors::named_token;

inline constexpr const char* demo_database_path = "demo-data/matchmakerd.db";

struct server_config {
  std::string database_path = demo_database_path;
  // A PostgreSQL URL: the player store shared by several nodes. Empty: the
  // SQLite file database_path. Never printed with its password.
  std::string database_url;
  // Each call to PostgreSQL gives up after this, on both sides; 0: the
  // cluster's takeover time on a node of a cluster (a write that outlives
  // its lease is refused anyway), else 30 s.
  std::chrono::milliseconds database_io_timeout{0};
  std::chrono::milliseconds store_io_timeout() const {
    if (database_io_timeout.count() > 0) return database_io_timeout;
    return cluster_total > 0 ? cluster_takeover_after : std::chrono::milliseconds(30'000);
  }
  // Synthetic players written into an empty player table; -1: 50,000 on the
  // demo database, none on any other (a real table is never filled with fakes).
  std::int64_t demo_players = -1;
  // Built-in load: queries per second through the client; -1: 50 on the demo
  // database, none otherwise. It makes the demo's dashboard move.
  std::int64_t demo_queries_per_second = -1;
  // Synthetic players joining the first session queue per second; -1: 8 on
  // the demo database, none otherwise. It makes the sessions page move.
  std::int64_t demo_session_players_per_second = -1;
  std::uint32_t instances = 2;
  // The recording of the async traffic (query_recording.hpp); off by default.
  query_recording_settings record_queries;
  // A node of a cluster (nodes sharing one PostgreSQL database): the set
  // has cluster_total instances, shared by the nodes through leases
  // (cluster_node.hpp); cluster_owned pins some to this node.
  // 0: no cluster, this node runs the whole set of `instances`.
  std::uint32_t cluster_total = 0;
  std::vector<std::uint32_t> cluster_owned;
  std::string cluster_node;            // empty: host name and HTTP port
  std::string cluster_advertise_host;  // empty: http_host
  std::chrono::milliseconds cluster_takeover_after{10'000};
  std::string http_host = "127.0.0.1";
  std::uint16_t http_port = 8080;  // 0: any free port (printed at start)
  // Threads, connection caps, timeouts and size limits of the HTTP server.
  http_limits http;
  std::uint32_t http_max_batch = 10'000;  // players per upsert request
  // Names (no port) a browser may reach the API by besides http.host and the
  // loopback names, e.g. the name of a reverse proxy. See http_api.cpp.
  std::vector<std::string> http_allowed_hosts;
  // The RESP port (resp_server.hpp): the API's commands for Redis clients.
  resp_settings resp;
  std::string actor_host = "127.0.0.1";
  std::int32_t actor_port = 4242;    // 0: any free port; -1: not published
  actors::actor_tls actor_tls;       // mutual TLS; required off loopback
  actors::port_limits actor_limits;  // the port guard (plain and TLS)
  // How CAF's worker threads wait for work (mm/actors/worker_idle.hpp).
  actors::worker_idle worker_idle = actors::worker_idle::sleep;
  // The log (mm/engine/log.hpp): its lines' format and the least level
  // written (each HTTP request's line: http.log_requests).
  struct log_settings {
    log_format format = log_format::text;
    log_level least = log_level::info;
  } logging;
  // Identities (mm/actors/identity.hpp): bearer tokens, for HTTP and the
  // actor port's hello; the actor port's TLS peers by certificate common
  // name; the role of a port connection with neither.
  std::vector<access_token> tokens;  // as the server started (reread_tokens: a reload's)
  std::vector<actors::named_peer> actor_peers;
  role actor_anonymous_role = role::test;
  std::uint32_t query_timeout_ms = 1000;
  std::string config_file;  // --config, or empty: the file a reload reads again
  generic_profile_config profile = demo_profile_config();
  options opts;
  // The session matchmaker: datacenters and queues (the demo's co-op queue
  // over 30 datacenters unless configured).
  session_settings sessions;

  // The instances this node has a supervisor for, as shards of the whole
  // set: every one (in a cluster, each runs only while this node holds its
  // lease).
  actors::set_part instance_part() const {
    const std::uint32_t n = cluster_total > 0 ? cluster_total : instances;
    actors::set_part all{n, {}};
    for (std::uint32_t i = 0; i < n; ++i) all.shards.push_back(i);
    return all;
  }
  bool demo_database() const { return database_url.empty() && database_path == demo_database_path; }
  std::int64_t effective_demo_players() const {
    return demo_players >= 0 ? demo_players : demo_database() ? 50'000 : 0;
  }
  std::int64_t effective_demo_qps() const {
    return demo_queries_per_second >= 0 ? demo_queries_per_second : demo_database() ? 50 : 0;
  }
  // The RESP port: resp.port, or (auto) 6380 on the demo database; -1: off.
  std::int32_t effective_resp_port() const {
    return resp.port != -2 ? resp.port : demo_database() ? 6380 : -1;
  }
  std::int64_t effective_demo_session_players() const {
    return demo_session_players_per_second >= 0 ? demo_session_players_per_second
           : demo_database()                    ? 8
                                                : 0;
  }
};

// The tokens of the config file the server was started with, read again for
// a reload (SIGHUP, POST /api/admin/tokens/reload; docs/security.md). The
// whole file must still be valid. Throws config_error naming the key: no
// file, a token list that turns tokens on or off (the binding rules depend
// on it), or a token name that a TLS peer has with another role.
std::vector<access_token> reread_tokens(const server_config& running);

// What the command line asked for.
struct command_line {
  bool help = false;
  bool print_config = false;
  server_config config;
};

// Reads --config FILE (if given) and then the other flags over it, and checks
// the result (options, profile, tokens, binding rules). Throws config_error
// naming the key and the problem.
command_line parse_command_line(int argc, const char* const* argv);

// Every key with its default and meaning, for --help and the docs.
std::string help_text();

// The effective configuration as JSON (tokens hidden), for --print-config.
std::string describe(const server_config& c);

// The name the session queues' journal, lobbies and event stream are kept
// under: one per server alone, one per cluster (its partitions: "name/k").
inline std::string session_service_name(const server_config& c) {
  return c.cluster_total > 0 ? "cluster" : "matchmakerd";
}

bool is_loopback(const std::string& host);

}  // namespace mm::server
