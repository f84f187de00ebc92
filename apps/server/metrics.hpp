// Prometheus text exposition (format 0.0.4) of the matchmakers' figures, for
// GET /metrics. Counters are the instances' own since their last start.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cluster_node.hpp"
#include "http_server.hpp"
#include "mm/actors/messages.hpp"
#include "mm/actors/port_guard.hpp"
#include "mm/actors/session_messages.hpp"
#include "mm/actors/ticket_event_feed.hpp"
#include "resp_server.hpp"

namespace mm::server {

// HTTP responses by status class, counted by the API.
struct http_counters {
  std::atomic<std::uint64_t> ok{0}, client_error{0}, server_error{0}, unauthorized{0};
  const http_connection_stats* connections = nullptr;  // the server's, once it listens
  const resp_stats* resp = nullptr;                    // the RESP port's, when it is open
  // The actor port's refusals, when it is published.
  std::function<actors::port_guard_counters()> actor_port;
  // Single POST /api/query answered on the network thread (engine_slot.hpp).
  std::function<std::uint64_t()> queries_answered_inline;
  // The queries the HTTP server's query bridge routed as batches, by answer.
  std::function<routed_answers()> bridge_batches;
  // GET /api/tickets/{id} answered on the network thread (ticket_book.hpp).
  std::function<std::uint64_t()> ticket_polls_answered_inline;
};

struct matchmaker_figures {
  std::string name;
  std::optional<instance_info> info;  // nullopt: did not answer (restarting)
};

// `client`: the routing client's counts (nullopt when it did not answer).
std::string render_metrics(const std::vector<matchmaker_figures>& all,
                           const std::optional<client_stats>& client, const http_counters& http);

// The session matchmaker's families: per queue, and the lobbies (nullopt:
// they did not answer).
std::string render_session_metrics(const std::vector<actors::session_queue_report>& queues,
                                   const std::optional<actors::lobbies_report>& lobbies);

// The ticket events' feed: events held, followers, the last sequence number.
std::string render_event_metrics(const actors::ticket_event_feed& feed);
// The recording's counts (sessions.record).
std::string render_recording_metrics(const ticket_recording& r);
std::string render_query_recording_metrics(const query_recording& r);

// A node of a cluster: its leases, takeovers and heartbeat.
std::string render_cluster_metrics(const cluster_node::counts& c);

}  // namespace mm::server
