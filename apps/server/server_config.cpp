#include "server_config.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>

#include "config_keys.hpp"
#include "config_values.hpp"
#include "json_codec.hpp"
#include "mm/storage/player_store.hpp"

namespace mm::server {

namespace {

const std::vector<key_spec>& keys() {
  using K = kind;
  static const server_config d;
  static const std::vector<key_spec> all =
      with_resp_keys(with_log_keys(with_recording_keys(with_session_keys({
          {"database.path", K::text, d.database_path,
           "SQLite file (created and migrated if needed); the default is the demo database",
           [](server_config& c, const json& v) { c.database_path = as_text("database.path", v); },
           [](const server_config& c) -> json { return c.database_path; }},
          {"database.url", K::text, "",
           "PostgreSQL URL (postgresql://user@host:port/dbname) of a player table and snapshots "
           "shared by several nodes; empty: the SQLite file database.path. Keep the password out "
           "of it: libpq reads PGPASSWORD or ~/.pgpass",
           [](server_config& c, const json& v) { c.database_url = as_text("database.url", v); },
           [](const server_config& c) -> json { return redacted_url(c.database_url); }},
          {"database.io_timeout", K::duration, "0s",
           "each call to PostgreSQL (connecting, a statement, its answer) gives up after this, "
           "and the server ends its side by the same limit; 0s: cluster.takeover_after on a "
           "node of a cluster, else 30s",
           [](server_config& c, const json& v) {
             c.database_io_timeout = as_duration("database.io_timeout", v);
           },
           [](const server_config& c) -> json { return seconds_text(c.database_io_timeout); }},
          {"demo.players", K::integer, "auto",
           "synthetic players written into an EMPTY player table; auto: 50000 on the demo "
           "database, "
           "0 on any other",
           [](server_config& c, const json& v) {
             c.demo_players = as_int("demo.players", v, 0, 100'000'000);
           },
           [](const server_config& c) -> json { return c.effective_demo_players(); }},
          {"demo.queries_per_second", K::integer, "auto",
           "built-in query load through the client, so the dashboard moves; auto: 50 on the demo "
           "database, 0 on any other",
           [](server_config& c, const json& v) {
             c.demo_queries_per_second = as_int("demo.queries_per_second", v, 0, 100'000);
           },
           [](const server_config& c) -> json { return c.effective_demo_qps(); }},
          {"demo.session_players_per_second", K::integer, "auto",
           "built-in stream of synthetic players joining the first session queue (parties of 1 to "
           "its max_party_size, placed around the datacenters), so the sessions page moves; auto: "
           "8 on the demo database, 0 on any other",
           [](server_config& c, const json& v) {
             c.demo_session_players_per_second =
                 as_int("demo.session_players_per_second", v, 0, 100'000);
           },
           [](const server_config& c) -> json { return c.effective_demo_session_players(); }},
          {"instances", K::integer, std::to_string(d.instances),
           "matchmaker instances (instance i owns the players with id mod N = i)",
           [](server_config& c, const json& v) {
             c.instances = as_uint<std::uint32_t>("instances", v, 1);
           },
           [](const server_config& c) -> json { return c.instances; }},
          {"cluster.total", K::integer, "0",
           "instances in the whole set when several nodes share one PostgreSQL database; the nodes "
           "share them (and the session queues) through leases (instances is then not used); 0: "
           "no cluster",
           [](server_config& c, const json& v) {
             c.cluster_total = as_uint<std::uint32_t>("cluster.total", v, 0);
           },
           [](const server_config& c) -> json { return c.cluster_total; }},
          {"cluster.owned", K::text, "",
           "instances of the cluster's set pinned to this node (indexes and ranges, \"0,2-3\"): "
           "only it takes them while it lives; empty: none pinned, the nodes share the set",
           [](server_config& c, const json& v) {
             c.cluster_owned = parse_index_list("cluster.owned", as_text("cluster.owned", v));
           },
           [](const server_config& c) -> json { return index_list_text(c.cluster_owned); }},
          {"cluster.node", K::text, "",
           "this node's name, unique in the cluster (a node that comes back under the same name "
           "gets the same share); empty: the host name and the HTTP port",
           [](server_config& c, const json& v) { c.cluster_node = as_text("cluster.node", v); },
           [](const server_config& c) -> json { return c.cluster_node; }},
          {"cluster.advertise_host", K::text, "",
           "the address other nodes and clients reach this node's HTTP API and actor port at "
           "(redirects, the cluster client); empty: http.host",
           [](server_config& c, const json& v) {
             c.cluster_advertise_host = as_text("cluster.advertise_host", v);
           },
           [](const server_config& c) -> json { return c.cluster_advertise_host; }},
          {"cluster.takeover_after", K::duration, seconds_text(d.cluster_takeover_after),
           "a dead node's shards and queues are served by the others within this time (its "
           "heartbeat lease is 0.6 of it, renewed every 0.15 of it)",
           [](server_config& c, const json& v) {
             c.cluster_takeover_after = as_duration("cluster.takeover_after", v);
             if (c.cluster_takeover_after < std::chrono::milliseconds(500))
               bad("cluster.takeover_after", "must be at least 500ms");
           },
           [](const server_config& c) -> json { return seconds_text(c.cluster_takeover_after); }},
          {"http.host", K::text, d.http_host,
           "address of the admin HTTP API, dashboard and /metrics",
           [](server_config& c, const json& v) { c.http_host = as_text("http.host", v); },
           [](const server_config& c) -> json { return c.http_host; }},
          {"http.port", K::integer, std::to_string(d.http_port), "HTTP port; 0: any free port",
           [](server_config& c, const json& v) {
             c.http_port = as_uint<std::uint16_t>("http.port", v);
           },
           [](const server_config& c) -> json { return c.http_port; }},
          {"http.max_body_bytes", K::integer, std::to_string(d.http.max_body_bytes),
           "larger request bodies get 413",
           [](server_config& c, const json& v) {
             c.http.max_body_bytes = as_uint<std::uint64_t>("http.max_body_bytes", v, 1024);
           },
           [](const server_config& c) -> json { return c.http.max_body_bytes; }},
#define MM_HTTP_COUNT(field, min, text)                                           \
  {                                                                               \
    "http." #field, K::integer, std::to_string(d.http.field), text,               \
        [](server_config& c, const json& v) {                                     \
          c.http.field = as_uint<decltype(c.http.field)>("http." #field, v, min); \
        },                                                                        \
        [](const server_config& c) -> json { return c.http.field; }               \
  }
#define MM_HTTP_DURATION(field, text)                                                 \
  {                                                                                   \
    "http." #field, K::duration, seconds_text(d.http.field), text,                    \
        [](server_config& c, const json& v) {                                         \
          c.http.field = as_duration("http." #field, v);                              \
          if (c.http.field.count() == 0) bad("http." #field, "must be at least 1ms"); \
        },                                                                            \
        [](const server_config& c) -> json { return seconds_text(c.http.field); }     \
  }
          MM_HTTP_COUNT(threads, 1,
                        "handler threads (each may wait on a matchmaker or the database)"),
          MM_HTTP_COUNT(max_connections, 1,
                        "open connections in all; at the cap a new one replaces the one idle "
                        "longest, or gets 503 when all are busy"),
          MM_HTTP_COUNT(max_connections_per_address, 1, "open connections from one client address"),
          MM_HTTP_DURATION(header_timeout, "time to send a request's head, from its first byte"),
          MM_HTTP_DURATION(idle_timeout, "time a kept-alive connection may wait between requests"),
          MM_HTTP_DURATION(body_timeout, "time to send a request's body, and to take its answer"),
          MM_HTTP_COUNT(keep_alive_requests, 1,
                        "requests one connection may make before it is closed"),
          MM_HTTP_COUNT(max_header_bytes, 1024, "a larger request head gets 431"),
          MM_HTTP_COUNT(max_websockets, 1, "WebSocket connections open at most (503 past it)"),
          MM_HTTP_COUNT(max_websocket_message_bytes, 256,
                        "a larger message from a WebSocket client closes it (1009)"),
          MM_HTTP_DURATION(websocket_idle_timeout,
                           "a WebSocket silent this long is closed (pinged at half of it)"),
#undef MM_HTTP_COUNT
#undef MM_HTTP_DURATION
          {"http.max_batch", K::integer, std::to_string(d.http_max_batch),
           "players per upsert request",
           [](server_config& c, const json& v) {
             c.http_max_batch = as_uint<std::uint32_t>("http.max_batch", v, 1);
           },
           [](const server_config& c) -> json { return c.http_max_batch; }},
          {"http.allowed_hosts", K::list, "[]",
           "other names (no port) browsers may use for this server, e.g. a proxy's; requests "
           "whose Host or Origin names another site get 403",
           [](server_config& c, const json& v) {
             if (!v.is_array()) bad("http.allowed_hosts", "expected a list of host names");
             c.http_allowed_hosts.clear();
             for (std::size_t i = 0; i < v.size(); ++i)
               c.http_allowed_hosts.push_back(
                   as_text("http.allowed_hosts[" + std::to_string(i) + "]", v[i]));
           },
           [](const server_config& c) -> json { return c.http_allowed_hosts; }},
          {"actor.host", K::text, d.actor_host,
           "address the instance set is published on (CAF network layer) for game servers",
           [](server_config& c, const json& v) { c.actor_host = as_text("actor.host", v); },
           [](const server_config& c) -> json { return c.actor_host; }},
          {"actor.port", K::integer, std::to_string(d.actor_port),
           "CAF port; 0: any free port; -1: not published",
           [](server_config& c, const json& v) {
             c.actor_port = static_cast<std::int32_t>(as_int("actor.port", v, -1, 65535));
           },
           [](const server_config& c) -> json { return c.actor_port; }},
          {"actor.max_frame_bytes", K::integer, std::to_string(d.actor_limits.max_frame_bytes),
           "largest frame a peer may send on the actor port (plain or TLS); a larger one cuts the "
           "connection (connections x this bounds what peers can make the server allocate)",
           [](server_config& c, const json& v) {
             c.actor_limits.max_frame_bytes =
                 as_uint<std::uint32_t>("actor.max_frame_bytes", v, 4096);
           },
           [](const server_config& c) -> json { return c.actor_limits.max_frame_bytes; }},
          {"actor.max_connections", K::integer, std::to_string(d.actor_limits.max_connections),
           "connections to the actor port (plain or TLS) at once; more are closed at once",
           [](server_config& c, const json& v) {
             c.actor_limits.max_connections = as_uint<std::uint32_t>("actor.max_connections", v, 1);
           },
           [](const server_config& c) -> json { return c.actor_limits.max_connections; }},
          {"actor.handshake_timeout", K::duration, seconds_text(d.actor_limits.handshake_timeout),
           "time a new connection to the actor port has to finish its handshake (TLS too)",
           [](server_config& c, const json& v) {
             c.actor_limits.handshake_timeout = as_duration("actor.handshake_timeout", v);
             if (c.actor_limits.handshake_timeout.count() == 0)
               bad("actor.handshake_timeout", "must be at least 1ms");
           },
           [](const server_config& c) -> json {
             return seconds_text(c.actor_limits.handshake_timeout);
           }},
          {"actor.worker_idle", K::text, to_string(d.worker_idle),
           "how idle worker threads wait: sleep (at once, woken by the next message) or poll "
           "(CAF's default: 25 ms of polling every 50 us first, most of a core at a low rate)",
           [](server_config& c, const json& v) {
             const std::string w = as_text("actor.worker_idle", v);
             if (w == "sleep")
               c.worker_idle = actors::worker_idle::sleep;
             else if (w == "poll")
               c.worker_idle = actors::worker_idle::poll;
             else
               bad("actor.worker_idle", "expected \"sleep\" or \"poll\", got " + describe(v));
           },
           [](const server_config& c) -> json { return to_string(c.worker_idle); }},
#define MM_TLS_FILE(field, help)                                         \
  {                                                                      \
    "actor.tls." #field, K::text, "", help,                              \
        [](server_config& c, const json& v) {                            \
          c.actor_tls.field = as_text("actor.tls." #field, v);           \
        },                                                               \
        [](const server_config& c) -> json { return c.actor_tls.field; } \
  }
          MM_TLS_FILE(certificate,
                      "PEM certificate (chain) this server presents on the actor port "
                      "(mutual TLS; with actor.tls.key and actor.tls.ca)"),
          MM_TLS_FILE(key, "PEM private key (unencrypted) of actor.tls.certificate"),
          MM_TLS_FILE(ca, "PEM CA certificate(s) that game nodes' certificates must be signed by"),
#undef MM_TLS_FILE
          {"query_timeout_ms", K::integer, std::to_string(d.query_timeout_ms),
           "how long the HTTP API waits for a matchmaker",
           [](server_config& c, const json& v) {
             c.query_timeout_ms = as_uint<std::uint32_t>("query_timeout_ms", v, 1);
           },
           [](const server_config& c) -> json { return c.query_timeout_ms; }},
          {"tokens", K::list, "[] (no auth: loopback only)",
           "access tokens: [{\"token\": \"...\", \"name\": \"...\", \"role\": \"view\", \"test\" "
           "or "
           "\"admin\"}]; the name owns what the token creates (default tokens[i]) (file only)",
           [](server_config& c, const json& v) { c.tokens = as_tokens("tokens", v); },
           [](const server_config& c) -> json { return hidden_tokens(c.tokens); }},
          {"actor.peers", K::list, "[]",
           "identities of TLS peers of the actor port by certificate common name: "
           "[{\"common_name\": \"...\", \"name\": \"...\", \"role\": ...}] (file only)",
           [](server_config& c, const json& v) { c.actor_peers = as_peers("actor.peers", v); },
           [](const server_config& c) -> json { return peers_json(c.actor_peers); }},
          {"actor.anonymous_role", K::text, "test",
           "role of an actor-port connection with no token (hello) and no mapped certificate: "
           "none, view, test or admin",
           [](server_config& c, const json& v) {
             c.actor_anonymous_role = as_role("actor.anonymous_role", v, true);
           },
           [](const server_config& c) -> json { return to_string(c.actor_anonymous_role); }},
          {"profile.attributes", K::list, "the demo profile: region, guild, hero, league",
           "up to 4 attributes: [{\"name\", \"rule\", \"weight\", \"bucketing\", \"tier_width\"}]; "
           "the file seeds version 1 of the profile changed while the server runs "
           "(/api/admin/config/profile; names and order stay)",
           [](server_config& c, const json& v) {
             c.profile.attributes = as_attributes("profile.attributes", v);
           },
           [](const server_config& c) -> json { return attributes_json(c.profile.attributes); }},
          {"profile.mmr_window", K::number, number_text(d.profile.mmr_window),
           "largest MMR gap of a possible match at retry 0",
           [](server_config& c, const json& v) {
             c.profile.mmr_window = static_cast<float>(as_number("profile.mmr_window", v));
           },
           [](const server_config& c) -> json { return c.profile.mmr_window; }},
          {"profile.mmr_window_per_retry", K::number, number_text(d.profile.mmr_window_per_retry),
           "the window widens by this much per retry",
           [](server_config& c, const json& v) {
             c.profile.mmr_window_per_retry =
                 static_cast<float>(as_number("profile.mmr_window_per_retry", v));
           },
           [](const server_config& c) -> json { return c.profile.mmr_window_per_retry; }},
          {"profile.mmr_window_max", K::number, number_text(d.profile.mmr_window_max),
           "the window never widens past this",
           [](server_config& c, const json& v) {
             c.profile.mmr_window_max = static_cast<float>(as_number("profile.mmr_window_max", v));
           },
           [](const server_config& c) -> json { return c.profile.mmr_window_max; }},
#define MM_UINT_OPTION(field, min, text)                                                \
  {                                                                                     \
    "matchmaker." #field, K::integer, std::to_string(d.opts.field), text,               \
        [](server_config& c, const json& v) {                                           \
          c.opts.field = as_uint<decltype(c.opts.field)>("matchmaker." #field, v, min); \
        },                                                                              \
        [](const server_config& c) -> json { return c.opts.field; }                     \
  }
#define MM_NUMBER_OPTION(field, text)                                 \
  {                                                                   \
    "matchmaker." #field, K::number, number_text(d.opts.field), text, \
        [](server_config& c, const json& v) {                         \
          c.opts.field = as_number("matchmaker." #field, v);          \
        },                                                            \
        [](const server_config& c) -> json { return c.opts.field; }   \
  }
#define MM_BOOL_OPTION(field, text)                                                               \
  {                                                                                               \
    "matchmaker." #field, K::boolean, d.opts.field ? "true" : "false", text,                      \
        [](server_config& c, const json& v) { c.opts.field = as_bool("matchmaker." #field, v); }, \
        [](const server_config& c) -> json { return c.opts.field; }                               \
  }
#define MM_DURATION_OPTION(field, text)                                           \
  {                                                                               \
    "matchmaker." #field, K::duration, seconds_text(d.opts.field), text,          \
        [](server_config& c, const json& v) {                                     \
          c.opts.field = std::chrono::duration_cast<decltype(c.opts.field)>(      \
              as_duration("matchmaker." #field, v));                              \
        },                                                                        \
        [](const server_config& c) -> json { return seconds_text(c.opts.field); } \
  }
#define MM_THRESHOLD_OPTION(field, text)                                            \
  {                                                                                 \
    "matchmaker." #field, K::threshold, std::string(to_string(d.opts.field)), text, \
        [](server_config& c, const json& v) {                                       \
          c.opts.field = as_threshold("matchmaker." #field, v);                     \
        },                                                                          \
        [](const server_config& c) -> json { return to_string(c.opts.field); }      \
  }
          MM_UINT_OPTION(player_cache_size, 1, "players each instance caches"),
          MM_UINT_OPTION(database_cache_size, 0, "players kept in a snapshot"),
          MM_UINT_OPTION(mmr_bucket_count, 1, "equal MMR slices"),
          MM_UINT_OPTION(bucket_min_size, 1, "smallest capacity a rebalance gives a bucket"),
          MM_UINT_OPTION(bucket_initial_size, 1, "capacity of a bucket never sampled"),
          MM_NUMBER_OPTION(initial_mmr_low, "MMR range before the first rebalance: low"),
          MM_NUMBER_OPTION(initial_mmr_high, "MMR range before the first rebalance: high"),
          MM_NUMBER_OPTION(mmr_range_low_percentile,
                           "percentile of sampled MMRs bounding the range"),
          MM_NUMBER_OPTION(mmr_range_high_percentile,
                           "percentile of sampled MMRs bounding the range"),
          MM_DURATION_OPTION(buckets_rebalance_interval, "rebalance cadence"),
          MM_UINT_OPTION(buckets_rebalance_sample_count, 1, "size of the sample FIFO"),
          MM_BOOL_OPTION(enable_database_scan, "scan the player table on a tick"),
          MM_DURATION_OPTION(database_scan_tick, "scan cadence"),
          MM_DURATION_OPTION(database_scan_first_delay, "first scan after start"),
          MM_UINT_OPTION(database_scan_batch_size, 1, "rows per scan batch"),
          MM_UINT_OPTION(database_scan_min_fetch, 1,
                         "players per scan when the buckets are full and nobody left"),
          MM_UINT_OPTION(database_scan_max_fetch, 1, "players per scan at most"),
          MM_BOOL_OPTION(scan_includes_bots, "keep rows flagged as bots"),
          MM_UINT_OPTION(
              sizing_sample_rows, 0,
              "rows a cold start samples over the whole table to size its buckets; 0: none"),
          MM_UINT_OPTION(matching_candidate_amount, 1, "stop after this many possible candidates"),
          MM_UINT_OPTION(matching_max_search, 1, "stop after this many players tested"),
          MM_UINT_OPTION(max_excluded_ids, 0, "longer exclusion lists are refused"),
          MM_BOOL_OPTION(enable_fake_opponents, "answer FakeOpponent when nothing is possible"),
          MM_BOOL_OPTION(return_model_in_response, "put the candidate's model in the response"),
          MM_THRESHOLD_OPTION(player_remove_after_candidate_offer,
                              "take the winner out of the cache when its bucket is above this"),
          MM_THRESHOLD_OPTION(player_ignore_update_insert,
                              "skip inserting an unknown player when its bucket is above this"),
          MM_DURATION_OPTION(state_snapshot_interval, "snapshot cadence"),
          MM_UINT_OPTION(random_seed, 0, "seed of the engines' random choices; 0: from the system"),
#undef MM_UINT_OPTION
#undef MM_NUMBER_OPTION
#undef MM_BOOL_OPTION
#undef MM_DURATION_OPTION
#undef MM_THRESHOLD_OPTION
      }))));
  return all;
}

const key_spec* find_key(const std::string& name) {
  for (const auto& k : keys())
    if (k.name == name) return &k;
  return nullptr;
}

// Applies a JSON object, nested by the dots of the key names.
void apply_object(server_config& c, const json& obj, const std::string& prefix,
                  const std::string& source) {
  for (const auto& [k, v] : obj.items()) {
    const std::string name = prefix.empty() ? k : prefix + "." + k;
    if (const key_spec* spec = find_key(name)) {
      spec->set(c, v);
      continue;
    }
    bool is_group = false;
    for (const auto& s : keys()) is_group |= s.name.rfind(name + ".", 0) == 0;
    if (!is_group) throw config_error(source + ": unknown config key '" + name + "' (see --help)");
    if (!v.is_object())
      throw config_error(source + ": config key '" + name + "' must be an object of keys");
    apply_object(c, v, name, source);
  }
}

void load_file(server_config& c, const std::string& path) {
  std::ifstream in(path);
  if (!in) throw config_error("cannot read the config file '" + path + "'");
  json j;
  try {
    j = json::parse(in, nullptr, true, /*ignore_comments=*/true);
  } catch (const json::parse_error& e) {
    throw config_error("config file '" + path + "' is not valid JSON: " + e.what());
  }
  if (!j.is_object()) throw config_error("config file '" + path + "' must hold a JSON object");
  apply_object(c, j, "", "config file '" + path + "'");
}

json flag_value(kind k, const std::string& raw) {
  if (k == kind::text || k == kind::duration || k == kind::threshold) return json(raw);
  json v = json::parse(raw, nullptr, /*allow_exceptions=*/false);
  return v.is_discarded() ? json(raw) : v;
}

// With no configuration at all: a small cache that the scan fills within
// seconds, so the demo shows a live matchmaker at once. Flags still override.
void apply_demo_tuning(server_config& c) {
  c.opts.player_cache_size = 20'000;
  c.opts.database_cache_size = 4'000;
  c.opts.database_scan_first_delay = std::chrono::milliseconds(0);
  c.opts.database_scan_tick = std::chrono::milliseconds(2'000);
  c.opts.database_scan_max_fetch = 8'192;
  c.opts.state_snapshot_interval = std::chrono::seconds(60);
}

void check(const server_config& c) {
  if (const auto problems = mm::check(c.opts, {false, true}); !problems.empty()) {
    std::string all;
    for (const auto& p : problems) all += (all.empty() ? "" : "; ") + p;
    throw config_error("matchmaker options: " + all);
  }
  generic_profile{c.profile};  // throws config_error naming the attribute
  check(c.sessions);
  if (c.instances > 256) throw config_error("config key 'instances': at most 256");
  if (c.cluster_total > 256) throw config_error("config key 'cluster.total': at most 256");
  if (c.cluster_total > 0 && c.database_url.empty())
    throw config_error(
        "config key 'cluster.total': the nodes of a cluster share a PostgreSQL "
        "database: set database.url");
  if (c.cluster_total == 0 && !c.cluster_owned.empty())
    throw config_error("config key 'cluster.owned' needs cluster.total");
  std::vector<bool> seen(c.cluster_total, false);
  for (auto i : c.cluster_owned) {
    if (i >= c.cluster_total)
      throw config_error("config key 'cluster.owned': instance " + std::to_string(i) +
                         " is not below cluster.total (" + std::to_string(c.cluster_total) + ")");
    if (seen[i])
      throw config_error("config key 'cluster.owned': instance " + std::to_string(i) + " twice");
    seen[i] = true;
  }
  if (!c.database_url.empty() && c.database_url.rfind("postgresql://", 0) != 0 &&
      c.database_url.rfind("postgres://", 0) != 0)
    throw config_error("config key 'database.url': '" + redacted_url(c.database_url) +
                       "' is not a PostgreSQL URL (postgresql://user@host:port/dbname)");
  for (const auto& p : c.actor_peers)
    for (const auto& t : c.tokens)
      if (p.name == t.name && p.granted != t.granted)
        throw config_error("config key 'actor.peers': '" + p.name +
                           "' names a token's identity with another role (one name, one role)");
  if (c.tokens.empty()) {
    if (!is_loopback(c.http_host))
      throw config_error("refusing to serve HTTP on '" + c.http_host +
                         "' with no access token configured: add \"tokens\" to the config "
                         "file, or bind http.host to 127.0.0.1");
  }
  if (c.tokens.empty() && c.effective_resp_port() >= 0 && !is_loopback(c.resp.host))
    throw config_error("refusing to serve the RESP port on '" + c.resp.host +
                       "' with no access token configured: add \"tokens\" to the config "
                       "file, or bind resp.host to 127.0.0.1");
  // The actor port has no authentication of its own: off loopback, only
  // peers with a certificate of the deployment's CA may connect.
  if (c.actor_port >= 0 && !is_loopback(c.actor_host) && !c.actor_tls.enabled())
    throw config_error("refusing to publish the actor port on '" + c.actor_host +
                       "' without mutual TLS: set actor.tls.certificate, actor.tls.key and "
                       "actor.tls.ca (docs/operations.md), or bind actor.host to 127.0.0.1");
  // (Whether the files hold what they should is checked when the server starts:
  // --print-config of a config for another machine must work here.)
  if (c.actor_tls.enabled() &&
      (c.actor_tls.certificate.empty() || c.actor_tls.key.empty() || c.actor_tls.ca.empty()))
    throw config_error("actor.tls: mutual TLS needs all three files: certificate, key and ca");
}

}  // namespace

std::vector<access_token> reread_tokens(const server_config& running) {
  if (running.config_file.empty())
    throw config_error(
        "config key 'tokens': the server was started without --config, so there is no file to "
        "read tokens from");
  server_config fresh;
  load_file(fresh, running.config_file);
  if (fresh.tokens.empty() != running.tokens.empty())
    throw config_error(
        std::string("config key 'tokens': a reload cannot turn access tokens ") +
        (running.tokens.empty() ? "on" : "off") +
        " (the addresses the server may bind depend on it): restart the server instead");
  for (const auto& p : running.actor_peers)
    for (const auto& t : fresh.tokens)
      if (p.name == t.name && p.granted != t.granted)
        throw config_error("config key 'tokens': '" + t.name +
                           "' names a peer's identity (actor.peers) with another role (one name, "
                           "one role)");
  return fresh.tokens;
}

bool is_loopback(const std::string& host) {
  if (host == "localhost") return true;
  in_addr a4{};
  if (inet_pton(AF_INET, host.c_str(), &a4) == 1) return (ntohl(a4.s_addr) >> 24) == 127;
  in6_addr a6{};
  if (inet_pton(AF_INET6, host.c_str(), &a6) == 1) return IN6_IS_ADDR_LOOPBACK(&a6);
  return false;
}

command_line parse_command_line(int argc, const char* const* argv) {
  command_line out;
  std::vector<std::pair<std::string, std::string>> flags;
  std::string config_file;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      out.help = true;
      continue;
    }
    if (a == "--print-config") {
      out.print_config = true;
      continue;
    }
    if (a.rfind("--", 0) != 0) throw config_error("unexpected argument '" + a + "' (see --help)");
    a = a.substr(2);
    std::string value;
    if (const auto eq = a.find('='); eq != std::string::npos) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      throw config_error("flag --" + a + " needs a value");
    }
    if (a == "config")
      config_file = value;
    else
      flags.emplace_back(a, value);
  }
  if (out.help) return out;
  if (!config_file.empty()) load_file(out.config, config_file);
  out.config.config_file = config_file;
  bool own_database = false;
  for (const auto& f : flags)
    own_database |= f.first == "database.path" || f.first == "database.url";
  if (config_file.empty() && !own_database) apply_demo_tuning(out.config);
  for (const auto& [name, raw] : flags) {
    const key_spec* spec = find_key(name);
    if (!spec) throw config_error("unknown flag --" + name + " (see --help)");
    if (spec->type == kind::list)
      throw config_error("--" + name + " can only be set in the config file");
    spec->set(out.config, flag_value(spec->type, raw));
  }
  check(out.config);
  return out;
}

std::string help_text() {
  std::ostringstream s;
  s << "matchmakerd: the matchmaker server (admin HTTP API, dashboard, /metrics, actor port)\n\n"
       "usage: matchmakerd [--config FILE.json] [--KEY=VALUE ...] [--print-config] [--help]\n\n"
       "With no configuration it serves the demo database with synthetic players on\n"
       "http://127.0.0.1:8080/. Keys nest in the JSON file by their dots:\n"
       "--http.port=9000 is {\"http\": {\"port\": 9000}}. Durations take ms, s, m or h.\n"
       "With no config file and no --database.path or --database.url the demo tuning\n"
       "applies on top of the defaults below (flags still win): player_cache_size 20000,\n"
       "database_cache_size 4000, first scan at once then every 2s,\n"
       "database_scan_max_fetch 8192, a snapshot every 60s.\n\n";
  for (const auto& k : keys()) {
    s << "  " << k.name << "\n      default: " << k.default_text << "\n      " << k.help << "\n";
  }
  return s.str();
}

std::string describe(const server_config& c) {
  json j = json::object();
  for (const auto& k : keys()) {
    std::string pointer = "/" + k.name;  // "http.port" is /http/port
    std::replace(pointer.begin(), pointer.end(), '.', '/');
    j[json::json_pointer(pointer)] = k.get(c);
  }
  return j.dump(2);
}

}  // namespace mm::server
