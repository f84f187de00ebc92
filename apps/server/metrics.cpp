#include "metrics.hpp"

#include <charconv>
#include <cmath>
#include <sstream>
#include <type_traits>

namespace mm::server {

namespace {

// Label values escape backslash, quote and newline.
std::string escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

class writer {
 public:
  void family(const char* name, const char* type, const char* help) {
    out_ << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
  }
  template <class T>
  void sample(const std::string& name, const std::string& labels, T value) {
    out_ << name;
    if (!labels.empty()) out_ << '{' << labels << '}';
    out_ << ' ';
    if constexpr (std::is_floating_point_v<T>)
      put_float(static_cast<double>(value));
    else
      out_ << value;
    out_ << '\n';
  }
  std::string str() const { return out_.str(); }

 private:
  // The shortest text that reads back as the same double: a stream's default
  // six digits turned a Unix time into 1.79581e+09 (off by up to an hour) and
  // froze a large counter's rate.
  void put_float(double v) {
    if (std::isnan(v)) {
      out_ << "NaN";
      return;
    }
    if (std::isinf(v)) {
      out_ << (v > 0 ? "+Inf" : "-Inf");
      return;
    }
    char text[32];
    const auto written = std::to_chars(text, text + sizeof text, v);
    out_.write(text, written.ptr - text);
  }
  std::ostringstream out_;
};

std::string mm_label(const std::string& name) {
  return "matchmaker=\"" + escaped(name) + "\"";
}

// One histogram's cumulative buckets, sum and count.
void histogram(writer& w, const std::string& name, const std::string& labels,
               const actors::value_histogram& h) {
  std::uint64_t cumulative = 0;
  for (std::size_t b = 0; b < h.counts.size(); ++b) {
    cumulative += h.counts[b];
    std::ostringstream le;
    if (b < h.bounds.size())
      le << h.bounds[b];
    else
      le << "+Inf";
    w.sample(name + "_bucket", labels + ",le=\"" + le.str() + "\"", cumulative);
  }
  w.sample(name + "_sum", labels, h.sum);
  w.sample(name + "_count", labels, cumulative);
}

}  // namespace

std::string render_metrics(const std::vector<matchmaker_figures>& all,
                           const std::optional<client_stats>& client, const http_counters& http) {
  writer w;
  std::vector<std::pair<std::string, const instance_info*>> up;
  for (const auto& m : all)
    if (m.info) up.emplace_back(mm_label(m.name), &*m.info);
  // A family with one sample per matchmaker that answered.
  const auto each = [&](const char* name, const char* type, const char* help, auto value) {
    w.family(name, type, help);
    for (const auto& [l, i] : up) w.sample(name, l, value(*i));
  };

  w.family("mm_up", "gauge", "1 when the matchmaker answered this scrape, 0 while it restarts.");
  for (const auto& m : all) w.sample("mm_up", mm_label(m.name), m.info ? 1 : 0);

  w.family("mm_requests_total", "counter",
           "Matchmaking requests answered by each matchmaker, by result (a query the client "
           "passes on to another matchmaker counts in each).");
  for (const auto& [l, i] : up) {
    const auto& s = i->engine.stats;
    w.sample("mm_requests_total", l + ",result=\"success\"", s.queries_success);
    w.sample("mm_requests_total", l + ",result=\"none_found\"", s.queries_none_found);
    w.sample("mm_requests_total", l + ",result=\"fake_opponent\"", s.queries_fake);
    w.sample("mm_requests_total", l + ",result=\"invalid_request\"", s.queries_invalid);
  }

  w.family("mm_match_mmr_gap", "histogram",
           "|attack MMR - defense MMR| of the players offered (Success only).");
  for (const auto& [l, i] : up) {
    const auto& s = i->engine.stats;
    std::uint64_t cumulative = 0;
    for (std::size_t b = 0; b < s.mmr_gap_counts.size(); ++b) {
      cumulative += s.mmr_gap_counts[b];
      std::ostringstream le;
      if (b < mmr_gap_bounds.size())
        le << mmr_gap_bounds[b];
      else
        le << "+Inf";
      w.sample("mm_match_mmr_gap_bucket", l + ",le=\"" + le.str() + "\"", cumulative);
    }
    w.sample("mm_match_mmr_gap_sum", l, s.mmr_gap_sum);
    w.sample("mm_match_mmr_gap_count", l, cumulative);
  }

  w.family("mm_player_updates_total", "counter",
           "Player updates, enrolls, removals and scanned rows applied to the cache, "
           "by what "
           "they did.");
  for (const auto& [l, i] : up) {
    const auto& s = i->engine.stats;
    w.sample("mm_player_updates_total", l + ",operation=\"inserted\"", s.updates_inserted);
    w.sample("mm_player_updates_total", l + ",operation=\"removed\"", s.updates_removed);
    w.sample("mm_player_updates_total", l + ",operation=\"bucket_changed\"",
             s.updates_bucket_changed);
    w.sample("mm_player_updates_total", l + ",operation=\"updated\"", s.updates_updated);
    w.sample("mm_player_updates_total", l + ",operation=\"no_op\"", s.updates_no_op);
    w.sample("mm_player_updates_total", l + ",operation=\"rejected\"", s.updates_rejected);
  }
  each("mm_evictions_total", "counter", "Players pushed out of a bucket slot by an insert.",
       [](const instance_info& i) { return i.engine.stats.evictions; });
  each("mm_removed_after_offer_total", "counter",
       "Winners taken out of the cache after an offer "
       "(matchmaker.player_remove_after_candidate_offer).",
       [](const instance_info& i) { return i.engine.stats.removed_after_offer; });
  each("mm_inserts_refused_capacity_total", "counter",
       "Players not cached because a new bucket would pass the capacity limit "
       "(player_cache_size + 10%) before the next rebalance.",
       [](const instance_info& i) { return i.engine.stats.inserts_refused_capacity; });

  each("mm_scans_total", "counter", "Database scans applied.",
       [](const instance_info& i) { return i.engine.stats.scans; });
  each("mm_scan_duration_seconds", "gauge", "Duration of the last database scan.",
       [](const instance_info& i) { return i.instance.last_scan_seconds; });
  each("mm_scan_last_timestamp_seconds", "gauge",
       "When the last scan was applied (Unix seconds; 0: none yet since the matchmaker "
       "started). time() minus it is the scan's lag.",
       [](const instance_info& i) {
         return static_cast<double>(i.instance.last_scan_unix_ms) / 1000.0;
       });
  each("mm_scan_duration_seconds_total", "counter", "Time spent in database scans.",
       [](const instance_info& i) { return i.instance.scan_seconds_total; });
  each("mm_scan_found_ratio", "gauge",
       "Rows the last scan found over rows it asked for (below 1: a small table or "
       "shard).",
       [](const instance_info& i) {
         return i.instance.last_scan_requested ? static_cast<double>(i.instance.last_scan_found) /
                                                     i.instance.last_scan_requested
                                               : 0.0;
       });
  each("mm_scan_rows_requested_total", "counter", "Rows the scans asked for.",
       [](const instance_info& i) { return i.instance.scan_rows_requested_total; });
  each("mm_scan_rows_found_total", "counter", "Rows the scans found.",
       [](const instance_info& i) { return i.instance.scan_rows_found_total; });
  each("mm_scan_malformed_rows_total", "counter", "Rows the scans could not use.",
       [](const instance_info& i) { return i.engine.stats.rows_malformed; });
  each("mm_scan_errors_total", "counter", "Scans that failed (database errors).",
       [](const instance_info& i) { return i.instance.scan_errors; });

  w.family("mm_bucket_players", "gauge", "Players in each bucket.");
  for (const auto& [l, i] : up)
    for (const auto& b : i->engine.buckets) {
      std::string labels;
      for (const auto& x : b.labels) labels += (labels.empty() ? "" : "/") + x;
      w.sample("mm_bucket_players",
               l + ",bucket=\"" + std::to_string(b.index) + "\",labels=\"" + escaped(labels) + "\"",
               b.count);
    }
  w.family("mm_bucket_capacity", "gauge", "Capacity of each bucket.");
  for (const auto& [l, i] : up)
    for (const auto& b : i->engine.buckets)
      w.sample("mm_bucket_capacity", l + ",bucket=\"" + std::to_string(b.index) + "\"", b.capacity);

  each("mm_cache_capacity", "gauge", "Sum of the bucket capacities.",
       [](const instance_info& i) { return i.engine.capacity; });
  each("mm_cache_players", "gauge", "Players in the cache.",
       [](const instance_info& i) { return i.engine.players; });
  each("mm_cache_buckets", "gauge", "Buckets in the cache.",
       [](const instance_info& i) { return i.engine.bucket_count; });
  each("mm_cache_memory_bytes", "gauge", "Memory of the buckets and the sample FIFO.",
       [](const instance_info& i) { return i.engine.memory_bytes; });
  each("mm_sizing_samples", "gauge", "Samples in the sizing FIFO.",
       [](const instance_info& i) { return i.engine.samples; });
  each("mm_rebalances_total", "counter", "Rebalances performed.",
       [](const instance_info& i) { return i.engine.stats.rebalances; });

  each("mm_snapshot_duration_seconds", "gauge",
       "Duration of the last snapshot: encoding plus the database transaction.",
       [](const instance_info& i) { return i.instance.last_snapshot_seconds; });
  each("mm_snapshot_bytes", "gauge", "Size of the last snapshot written.",
       [](const instance_info& i) { return i.instance.state_bytes; });
  each("mm_snapshots_total", "counter", "Snapshots written.",
       [](const instance_info& i) { return i.instance.snapshots_written; });
  each("mm_snapshot_failures_total", "counter",
       "Snapshots that could not be written (the database refused or did not answer).",
       [](const instance_info& i) { return i.instance.snapshot_failures; });
  each("mm_snapshot_last_timestamp_seconds", "gauge",
       "When the last snapshot was written (Unix seconds; 0: none yet).",
       [](const instance_info& i) {
         return static_cast<double>(i.instance.last_snapshot_unix_ms) / 1000.0;
       });
  each("mm_instance_restarts_total", "counter",
       "Restarts of the matchmaker after a crash (by its supervisor, from its snapshot).",
       [](const instance_info& i) { return i.supervisor.restarts; });
  each("mm_updates_dropped_total", "counter",
       "Player updates that arrived while the matchmaker was down (the scan brings them "
       "back).",
       [](const instance_info& i) { return i.supervisor.updates_dropped; });

  // The instance set's final answers to routed queries, counted by the members
  // that gave them (a member's instance restart resets its share).
  routed_answers set;
  for (const auto& [l, i] : up) {
    set += i->instance.routed;
    set += i->supervisor.routed;
  }
  if (client) set += client->batches;  // a game's batches are answered through the client actor
  if (http.bridge_batches) set += http.bridge_batches();  // the HTTP server's, by its bridge
  w.family("mm_client_queries_total", "counter",
           "Queries routed through the instance set (the routing client, a router in a game's "
           "own actor, or the HTTP server), by the answer the game got: one per query, whichever "
           "matchmaker gave it; unanswered: none could (an error to the caller).");
  for (const auto& [result, n] : {std::pair<const char*, std::uint64_t>{"success", set.success},
                                  {"none_found", set.none_found},
                                  {"fake_opponent", set.fake_opponent},
                                  {"invalid_request", set.invalid_request},
                                  {"unanswered", set.unanswered}})
    w.sample("mm_client_queries_total", std::string("result=\"") + result + "\"", n);
  w.family("mm_client_passed_on_total", "counter",
           "Routed queries that reached a matchmaker while it restarted and were passed on to "
           "the next one.");
  w.sample("mm_client_passed_on_total", "", set.passed_on);
  if (client) {
    w.family("mm_client_updates_total", "counter", "Player updates routed by the client actor.");
    w.sample("mm_client_updates_total", "", client->updates);
    w.family("mm_client_updates_elsewhere_total", "counter",
             "Player updates dropped because another node of the cluster runs the player's "
             "shard (send them to that node).");
    w.sample("mm_client_updates_elsewhere_total", "", client->updates_elsewhere);
    w.family("mm_client_updates_refused_total", "counter",
             "Player updates dropped because they came in a batch of more than "
             "max_batch_updates (4096).");
    w.sample("mm_client_updates_refused_total", "", client->updates_refused);
  }

  w.family("mm_http_responses_total", "counter", "Admin API responses by status class.");
  w.sample("mm_http_responses_total", "class=\"2xx\"", http.ok.load());
  w.sample("mm_http_responses_total", "class=\"4xx\"", http.client_error.load());
  w.sample("mm_http_responses_total", "class=\"5xx\"", http.server_error.load());
  if (http.queries_answered_inline) {
    w.family("mm_http_queries_answered_inline_total", "counter",
             "Single POST /api/query answered on the network thread; the rest of them went "
             "through the query bridge's actor (a matchmaker busy or restarting).");
    w.sample("mm_http_queries_answered_inline_total", "", http.queries_answered_inline());
  }
  if (http.ticket_polls_answered_inline) {
    w.family("mm_http_ticket_polls_answered_inline_total", "counter",
             "GET /api/tickets/{id} answered on the network thread from the session service's "
             "books; the rest (long-polls of waiting tickets, a service restarting or busy) "
             "went through the session bridge's actor.");
    w.sample("mm_http_ticket_polls_answered_inline_total", "", http.ticket_polls_answered_inline());
  }
  w.family("mm_http_unauthorized_total", "counter",
           "Requests refused for a missing or weak token.");
  w.sample("mm_http_unauthorized_total", "", http.unauthorized.load());
  if (const http_connection_stats* c = http.connections) {
    w.family("mm_http_connections_open", "gauge", "HTTP connections open now.");
    w.sample("mm_http_connections_open", "", c->open.load());
    w.family("mm_http_connections_total", "counter",
             "HTTP connections by what became of them: accepted; evicted (the longest "
             "waiting for a request, to make room at a cap); refused (503, every one busy); "
             "timed_out (header, idle or body timeout); malformed (not HTTP, or a head over "
             "its limit).");
    w.sample("mm_http_connections_total", "outcome=\"accepted\"", c->accepted.load());
    w.sample("mm_http_connections_total", "outcome=\"evicted\"", c->evicted.load());
    w.sample("mm_http_connections_total", "outcome=\"refused\"", c->refused.load());
    w.sample("mm_http_connections_total", "outcome=\"timed_out\"", c->timed_out.load());
    w.sample("mm_http_connections_total", "outcome=\"malformed\"", c->malformed.load());
    w.family("mm_http_websockets_open", "gauge",
             "WebSocket connections open now (GET /api/events; not in "
             "mm_http_connections_open).");
    w.sample("mm_http_websockets_open", "", c->websockets.load());
  }
  if (const resp_stats* r = http.resp) {
    w.family("mm_resp_connections_open", "gauge", "RESP port connections open now.");
    w.sample("mm_resp_connections_open", "", r->open.load());
    w.family("mm_resp_connections_total", "counter",
             "RESP port connections by what became of them: accepted; evicted (the one quiet "
             "longest, for a new one at a cap); refused (every one busy, or no file descriptor "
             "left); timed_out; protocol_error (closed after an error reply).");
    w.sample("mm_resp_connections_total", "outcome=\"accepted\"", r->accepted.load());
    w.sample("mm_resp_connections_total", "outcome=\"evicted\"", r->evicted.load());
    w.sample("mm_resp_connections_total", "outcome=\"refused\"", r->refused.load());
    w.sample("mm_resp_connections_total", "outcome=\"timed_out\"", r->timed_out.load());
    w.sample("mm_resp_connections_total", "outcome=\"protocol_error\"", r->protocol_errors.load());
    w.family("mm_resp_commands_total", "counter", "Commands read on the RESP port.");
    w.sample("mm_resp_commands_total", "", r->commands.load());
  }
  if (http.actor_port) {
    const actors::port_guard_counters g = http.actor_port();
    w.family("mm_actor_port_connections_open", "gauge",
             "Connections open on the actor port now (plain or TLS).");
    w.sample("mm_actor_port_connections_open", "", g.open);
    w.family("mm_actor_port_connections_total", "counter",
             "Connections to the actor port by what became of them: accepted (taken by "
             "the actor layer); refused_full (actor.max_connections reached); bad_frame (cut: a "
             "frame broke a rule); slow_handshake (cut: no handshake within "
             "actor.handshake_timeout); node_taken (cut: its handshake named a node id another "
             "connection holds, or this server's).");
    w.sample("mm_actor_port_connections_total", "outcome=\"accepted\"", g.accepted);
    w.sample("mm_actor_port_connections_total", "outcome=\"refused_full\"", g.refused_full);
    w.sample("mm_actor_port_connections_total", "outcome=\"bad_frame\"", g.cut_bad_frame);
    w.sample("mm_actor_port_connections_total", "outcome=\"slow_handshake\"", g.cut_slow_handshake);
    w.sample("mm_actor_port_connections_total", "outcome=\"node_taken\"", g.cut_node_taken);
    w.family("mm_actor_port_dropped_messages_total", "counter",
             "Exit and down messages sent by peers to the published actor, dropped (only the "
             "actor runtime may stop or notify the server's actors).");
    w.sample("mm_actor_port_dropped_messages_total", "", g.dropped_runtime_messages);
  }
  return w.str();
}

std::string render_event_metrics(const actors::ticket_event_feed& feed) {
  writer w;
  w.family("mm_session_events_held", "gauge",
           "Ticket events held for followers to resume from (sessions.max_outcomes, "
           "sessions.outcome_retention).");
  w.sample("mm_session_events_held", "", feed.size());
  w.family("mm_session_event_followers", "gauge",
           "Followers of the ticket events now: WebSockets and waiting long-polls.");
  w.sample("mm_session_event_followers", "", feed.followers());
  w.family("mm_session_event_last_seq", "counter", "The newest ticket event's sequence number.");
  w.sample("mm_session_event_last_seq", "", feed.last_seq());
  return w.str();
}

std::string render_query_recording_metrics(const query_recording& r) {
  writer w;
  w.family("mm_recorded_queries_events_total", "counter",
           "Async engine calls (queries, updates, enrolments, removals) written to the "
           "recording (record_queries).");
  w.sample("mm_recorded_queries_events_total", "", r.events());
  w.family(
      "mm_recorded_queries_dropped_total", "counter",
      "Async engine calls the recording's writer could not keep up with (a gap line says so).");
  w.sample("mm_recorded_queries_dropped_total", "", r.dropped());
  w.family("mm_recorded_queries_bytes_total", "counter",
           "Bytes written to the async recording's files, headers included.");
  w.sample("mm_recorded_queries_bytes_total", "", r.bytes());
  return w.str();
}

std::string render_recording_metrics(const ticket_recording& r) {
  writer w;
  w.family("mm_session_recorded_events_total", "counter",
           "Ticket events written to the recording (sessions.record).");
  w.sample("mm_session_recorded_events_total", "", r.events());
  w.family("mm_session_recording_dropped_total", "counter",
           "Ticket events the recording's writer could not keep up with (a gap line says so).");
  w.sample("mm_session_recording_dropped_total", "", r.dropped());
  w.family("mm_session_recording_bytes_total", "counter",
           "Bytes written to the recording's files, headers included.");
  w.sample("mm_session_recording_bytes_total", "", r.bytes());
  return w.str();
}

std::string render_cluster_metrics(const cluster_node::counts& c) {
  writer w;
  w.family(
      "mm_cluster_serving", "gauge",
      "1 while this node's heartbeat lease is renewed in time and it may serve what it holds.");
  w.sample("mm_cluster_serving", "", c.serving ? 1 : 0);
  w.family("mm_cluster_leases_held", "gauge", "Shards and queues this node holds the lease on.");
  w.sample("mm_cluster_leases_held", "", c.owned);
  w.family("mm_cluster_nodes_live", "gauge", "Nodes of the cluster whose heartbeat is current.");
  w.sample("mm_cluster_nodes_live", "", c.live_nodes);
  w.family("mm_cluster_takeovers_total", "counter",
           "Leases this node took from a node that had died.");
  w.sample("mm_cluster_takeovers_total", "", c.takeovers);
  w.family("mm_cluster_takeover_seconds_total", "counter",
           "Seconds from a dead node's lease expiry to this node serving what it took, summed.");
  w.sample("mm_cluster_takeover_seconds_total", "", c.takeover_seconds_total);
  w.family("mm_cluster_last_takeover_seconds", "gauge", "The last takeover's seconds.");
  w.sample("mm_cluster_last_takeover_seconds", "", c.last_takeover_seconds);
  w.family("mm_cluster_lease_changes_total", "counter",
           "Lease changes on this node: taken (every take), released (handed over to the "
           "planned owner), lost (taken away: this node was declared dead).");
  w.sample("mm_cluster_lease_changes_total", "change=\"taken\"", c.takes);
  w.sample("mm_cluster_lease_changes_total", "change=\"released\"", c.releases);
  w.sample("mm_cluster_lease_changes_total", "change=\"lost\"", c.lost);
  w.family("mm_cluster_heartbeat_failures_total", "counter",
           "Heartbeats refused (this node had expired: it joined again) or not answered.");
  w.sample("mm_cluster_heartbeat_failures_total", "kind=\"refused\"", c.renew_failures);
  w.sample("mm_cluster_heartbeat_failures_total", "kind=\"database\"", c.database_errors);
  return w.str();
}

std::string render_session_metrics(const std::vector<actors::session_queue_report>& queues,
                                   const std::optional<actors::lobbies_report>& lobbies) {
  writer w;
  std::vector<std::pair<std::string, const actors::session_queue_report*>> q;
  for (const auto& r : queues) q.emplace_back("queue=\"" + escaped(r.queue) + "\"", &r);
  w.family("mm_session_waiting", "gauge", "Tickets waiting in each session queue now.");
  for (const auto& [l, r] : q) w.sample("mm_session_waiting", l, r->waiting);
  w.family("mm_session_waiting_by_stage", "gauge",
           "Waiting tickets by latency stage: ideal, expand, warm_body.");
  for (const auto& [l, r] : q) {
    w.sample("mm_session_waiting_by_stage", l + ",stage=\"ideal\"", r->waiting_ideal);
    w.sample("mm_session_waiting_by_stage", l + ",stage=\"expand\"", r->waiting_expand);
    w.sample("mm_session_waiting_by_stage", l + ",stage=\"warm_body\"", r->waiting_warm_body);
  }
  w.family("mm_session_tickets_total", "counter",
           "Tickets of each queue since its actor started: created, and how they left "
           "(matched, cancelled, expired, failed).");
  for (const auto& [l, r] : q) {
    w.sample("mm_session_tickets_total", l + ",event=\"created\"", r->created);
    w.sample("mm_session_tickets_total", l + ",event=\"matched\"", r->matched);
    w.sample("mm_session_tickets_total", l + ",event=\"cancelled\"", r->cancelled);
    w.sample("mm_session_tickets_total", l + ",event=\"expired\"", r->expired);
    w.sample("mm_session_tickets_total", l + ",event=\"failed\"", r->failed);
  }
  w.family("mm_session_matches_total", "counter", "Matches formed (bot matches included).");
  for (const auto& [l, r] : q) w.sample("mm_session_matches_total", l, r->matches);
  w.family("mm_session_bot_matches_total", "counter", "Bot matches formed.");
  for (const auto& [l, r] : q) w.sample("mm_session_bot_matches_total", l, r->bot_matches);
  w.family("mm_session_backfills", "gauge", "Running matches registered for backfill.");
  for (const auto& [l, r] : q) w.sample("mm_session_backfills", l, r->backfills);
  w.family("mm_session_backfill_open_seats", "gauge", "Open seats of the running matches now.");
  for (const auto& [l, r] : q) w.sample("mm_session_backfill_open_seats", l, r->open_seats);
  w.family("mm_session_backfilled_tickets_total", "counter",
           "Tickets placed into running matches (also counted as matched).");
  for (const auto& [l, r] : q) w.sample("mm_session_backfilled_tickets_total", l, r->backfilled);
  w.family("mm_session_reservations_total", "counter",
           "Seat reservations in running matches, by what became of them.");
  for (const auto& [l, r] : q) {
    const std::pair<const char*, std::uint64_t> events[] = {
        {"made", r->placements},
        {"confirmed", r->reservations_confirmed},
        {"released", r->reservations_released},
        {"expired", r->reservations_expired}};
    for (const auto& [event, n] : events)
      w.sample("mm_session_reservations_total", l + ",event=\"" + event + "\"", n);
  }
  w.family("mm_session_wait_reasons_total", "counter",
           "Waiting tickets sampled (a few every sessions.wait_reasons_every), by the main "
           "reason they wait: rule:NAME, datacenter, players, teams, too_few_players, "
           "no_candidates, enough_players.");
  for (const auto& [l, r] : q)
    for (std::size_t i = 0; i < r->wait_reasons.size() && i < r->wait_reason_counts.size(); ++i)
      w.sample("mm_session_wait_reasons_total",
               l + ",reason=\"" + escaped(r->wait_reasons[i]) + "\"", r->wait_reason_counts[i]);
  w.family("mm_session_matched_players_total", "counter",
           "Players in the matches formed (÷ matches: the mean match size).");
  for (const auto& [l, r] : q) w.sample("mm_session_matched_players_total", l, r->players_matched);
  w.family("mm_session_time_to_match_seconds", "histogram",
           "Per matched ticket: from its creation to its match.");
  for (const auto& [l, r] : q) histogram(w, "mm_session_time_to_match_seconds", l, r->wait_seconds);
  w.family("mm_session_match_mmr_spread", "histogram",
           "Per match: the highest minus the lowest player MMR.");
  for (const auto& [l, r] : q) histogram(w, "mm_session_match_mmr_spread", l, r->mmr_spread);
  w.family("mm_session_match_worst_rtt_ms", "histogram",
           "Per match in a datacenter: the highest RTT of its players to it.");
  for (const auto& [l, r] : q) histogram(w, "mm_session_match_worst_rtt_ms", l, r->worst_rtt_ms);
  w.family("mm_session_tick_ms", "histogram",
           "Per tick of the match loop: its wall time, with the building of its outcomes.");
  for (const auto& [l, r] : q) histogram(w, "mm_session_tick_ms", l, r->tick_ms);

  w.family("mm_lobbies_up", "gauge", "1 when the lobbies answered this scrape.");
  w.sample("mm_lobbies_up", "", lobbies ? 1 : 0);
  if (lobbies) {
    w.family("mm_lobbies", "gauge", "Running lobbies, by datacenter (those with any).");
    for (const auto& d : lobbies->by_datacenter)
      w.sample("mm_lobbies", "datacenter=\"" + escaped(d.datacenter) + "\"", d.lobbies);
    w.family("mm_lobby_players", "gauge", "Players in running lobbies, by datacenter.");
    for (const auto& d : lobbies->by_datacenter)
      w.sample("mm_lobby_players", "datacenter=\"" + escaped(d.datacenter) + "\"", d.players);
    w.family("mm_lobby_seats", "gauge",
             "Seats of running lobbies, by datacenter (players ÷ seats: the fill).");
    for (const auto& d : lobbies->by_datacenter)
      w.sample("mm_lobby_seats", "datacenter=\"" + escaped(d.datacenter) + "\"", d.seats);
    w.family("mm_lobby_finds_total", "counter",
             "Lobby searches by outcome: placed in a running lobby, created one, or full "
             "(nothing fit and creating was prevented).");
    w.sample("mm_lobby_finds_total", "outcome=\"placed\"", lobbies->found - lobbies->created);
    w.sample("mm_lobby_finds_total", "outcome=\"created\"", lobbies->created);
    w.sample("mm_lobby_finds_total", "outcome=\"full\"", lobbies->full);
    w.family("mm_lobbies_closed_idle_total", "counter", "Lobbies closed after sitting empty.");
    w.sample("mm_lobbies_closed_idle_total", "", lobbies->closed_idle);
  }
  return w.str();
}

}  // namespace mm::server
