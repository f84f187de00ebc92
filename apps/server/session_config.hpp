// The session matchmaker's keys in matchmakerd's configuration
// ("sessions.*"): the datacenters, the queues with their rules and latency
// policy, and the demo that runs with no configuration. Every wrong value is
// a config_error naming its key, down to "sessions.queues[0].rules[1].kind".
#pragma once

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mm/session/latency.hpp"
#include "mm/session/queue_config.hpp"
#include "ticket_recording.hpp"

namespace mm::server {

using json = nlohmann::json;

// 30 datacenters at real cities, 6 regions (eu, na, sa, asia, oceania, africa/me).
std::vector<session::datacenter> demo_datacenters();
// "coop": 4-player co-op, parties up to 4, MMR within 200 widening by 100
// every 10 s up to 800, the staged latency policy.
session::queue_config demo_queue();

// A datacenter's latency map as configured: its file, and the map read from
// it at start.
struct configured_latency_map {
  std::string file;
  session::latency_map map;
};

struct session_settings {
  std::vector<session::datacenter> datacenters = demo_datacenters();
  // Per datacenter (empty: none has a map): its latency map, if it names one.
  std::vector<std::optional<configured_latency_map>> latency_maps;
  double detour_factor = 2;
  std::vector<session::queue_config> queues = {demo_queue()};
  // The queue whose config a ticket for an unknown queue name copies (the
  // queue is made on first use); empty: unknown names are refused.
  std::string queue_template;
  std::uint32_t max_queues = 64;
  // The queues in this many partitions, each a service of its own (on a
  // node of a cluster, a lease of its own: the queues spread over the
  // nodes). 1: one service for every queue, as before partitions existed.
  std::uint32_t partitions = 1;
  // Finished tickets' outcomes and events: kept this long, and at most this
  // many (across restarts: they are in the ticket journal).
  std::chrono::milliseconds outcome_retention{600'000};
  std::uint32_t max_outcomes = 100'000;
  // Bounds on the running lobbies (session::lobby_config).
  std::uint32_t max_lobbies = 100'000;
  std::uint32_t max_lobbies_per_credential = 10'000;
  std::uint32_t max_lobby_players = 1000;
  std::uint32_t max_lobby_party = 64;
  // Followers of the ticket events (GET /api/events; http.max_websockets
  // bounds the WebSockets in all).
  std::uint32_t event_connections_per_credential = 64;  // WebSockets and waiting long-polls
  std::uint32_t event_subscriptions = 16;               // queue subscriptions per WebSocket
  std::uint32_t event_backlog = 4096;  // events owed to a WebSocket before it is cut off
  // Backfill's bounds per token (session_service_backfills.hpp).
  std::uint32_t max_backfills_per_credential = 10'000;
  std::uint32_t backfill_requests_per_s = 100;
  std::uint32_t backfill_burst = 200;
  // Explanations a second, all callers together (docs/session.md, "Why is
  // my ticket waiting?").
  std::uint32_t explains_per_s = 100;
  // How often each queue samples why its tickets wait (0: never).
  std::chrono::milliseconds wait_reasons_every{5000};
  // The recording of chosen queues' ticket streams (ticket_recording.hpp).
  recording_settings record;
};

// [{"name", "latitude", "longitude", "region", "latency_map"?}]: a
// latency_map file is read here, and one that cannot be read, or is not the
// format, is refused naming its key.
void read_datacenters(const std::string& key, const json& v, session_settings& into);
json datacenters_json(const session_settings& s);
// The RTT model of the settings: their datacenters, detour and maps.
session::latency_model latency_model_of(const session_settings& s);

// [{"name", "min_players", "max_players", "teams", "team_size",
//   "max_party_size", "split_parties", "bots", "tick", "give_up_after",
//   "candidates", "backtrack_steps", "latency": {...}, "rules": [...]}]
std::vector<session::queue_config> read_queues(const std::string& key, const json& v);
json queues_json(const std::vector<session::queue_config>& queues);

// The settings as a whole: datacenters named once, queue names unique and
// fit for a URL, every queue's own check (session::check), the template a
// configured queue. Throws config_error with every problem found first.
void check(const session_settings& s);

}  // namespace mm::server
