#include "config_keys.hpp"
#include "session_config.hpp"

namespace mm::server {

std::vector<key_spec> with_session_keys(std::vector<key_spec> keys) {
  using K = kind;
  static const server_config d;
  std::vector<key_spec> sessions = {
      {"sessions.datacenters", K::list, "30 datacenters at real cities (docs/session.md)",
       "the session matchmaker's datacenters: [{\"name\", \"latitude\", \"longitude\", "
       "\"region\", \"latency_map\": FILE?}] (file only)",
       [](server_config& c, const json& v) {
         read_datacenters("sessions.datacenters", v, c.sessions);
       },
       [](const server_config& c) -> json { return datacenters_json(c.sessions); }},
      {"sessions.detour_factor", K::number, number_text(d.sessions.detour_factor),
       "RTT estimated from distance: great circle at 2/3 c, times this",
       [](server_config& c, const json& v) {
         c.sessions.detour_factor = as_number("sessions.detour_factor", v);
       },
       [](const server_config& c) -> json { return c.sessions.detour_factor; }},
      {"sessions.queues", K::list, "the demo's 4-player co-op queue 'coop'",
       "session queues: [{\"name\", \"min_players\", \"max_players\", \"teams\", "
       "\"team_size\", \"max_party_size\", \"latency\", \"rules\", ...}] (docs/session.md); "
       "the file seeds version 1 of the configuration changed while the server runs "
       "(/api/admin/config/sessions)",
       [](server_config& c, const json& v) {
         c.sessions.queues = read_queues("sessions.queues", v);
       },
       [](const server_config& c) -> json { return queues_json(c.sessions.queues); }},
      {"sessions.queue_template", K::text, "",
       "a ticket for an unknown queue name makes a queue "
       "with this queue's config; empty: unknown names are refused",
       [](server_config& c, const json& v) {
         c.sessions.queue_template = as_text("sessions.queue_template", v);
       },
       [](const server_config& c) -> json { return c.sessions.queue_template; }},
      {"sessions.max_queues", K::integer, std::to_string(d.sessions.max_queues),
       "session queues at most, those made on first use included",
       [](server_config& c, const json& v) {
         c.sessions.max_queues = as_uint<std::uint32_t>("sessions.max_queues", v, 1);
       },
       [](const server_config& c) -> json { return c.sessions.max_queues; }},
      {"sessions.partitions", K::integer, std::to_string(d.sessions.partitions),
       "the session queues run in this many partitions, each a service of its own with its "
       "own lease on a node of a cluster, so the queues spread over the nodes "
       "(docs/operations.md, \"Session queues over several nodes\"); 1 to 64",
       [](server_config& c, const json& v) {
         c.sessions.partitions = as_uint<std::uint32_t>("sessions.partitions", v, 1);
       },
       [](const server_config& c) -> json { return c.sessions.partitions; }},
      {"sessions.outcome_retention", K::duration, seconds_text(d.sessions.outcome_retention),
       "how long a finished ticket's outcome (and its events) is kept, across restarts",
       [](server_config& c, const json& v) {
         c.sessions.outcome_retention = as_duration("sessions.outcome_retention", v);
       },
       [](const server_config& c) -> json { return seconds_text(c.sessions.outcome_retention); }},
      {"sessions.wait_reasons_every", K::duration, seconds_text(d.sessions.wait_reasons_every),
       "how often each queue explains a few waiting tickets drawn at random and counts their "
       "main reasons (wait_reasons in GET /api/queues, mm_session_wait_reasons_total); 0: never",
       [](server_config& c, const json& v) {
         c.sessions.wait_reasons_every = as_duration("sessions.wait_reasons_every", v);
       },
       [](const server_config& c) -> json { return seconds_text(c.sessions.wait_reasons_every); }},
      {"sessions.record.queues", K::list, "[] (no recording)",
       "session queues whose ticket streams are recorded to rotating files for mmsim replay "
       "(docs/session.md, \"Recording\")",
       [](server_config& c, const json& v) {
         if (!v.is_array() || v.size() > 64)
           bad("sessions.record.queues", "a list of at most 64 queue names");
         c.sessions.record.queues.clear();
         for (const auto& q : v) {
           if (!q.is_string() || !session::valid_queue_name(q.get<std::string>()))
             bad("sessions.record.queues", q.dump() + " is not a queue name");
           c.sessions.record.queues.push_back(q.get<std::string>());
         }
       },
       [](const server_config& c) -> json { return c.sessions.record.queues; }},
      {"sessions.record.dir", K::text, d.sessions.record.dir,
       "the recording's directory (made when missing; relative to the working directory)",
       [](server_config& c, const json& v) {
         c.sessions.record.dir = as_text("sessions.record.dir", v);
       },
       [](const server_config& c) -> json { return c.sessions.record.dir; }},
      {"sessions.record.max_file_bytes", K::integer,
       std::to_string(d.sessions.record.max_file_bytes),
       "a recording file is closed and the next one started at this size",
       [](server_config& c, const json& v) {
         c.sessions.record.max_file_bytes =
             as_uint<std::uint64_t>("sessions.record.max_file_bytes", v, 4096);
       },
       [](const server_config& c) -> json { return c.sessions.record.max_file_bytes; }},
      {"sessions.record.max_files", K::integer, std::to_string(d.sessions.record.max_files),
       "recording files kept: the oldest beyond these are deleted",
       [](server_config& c, const json& v) {
         c.sessions.record.max_files = as_uint<std::uint32_t>("sessions.record.max_files", v, 1);
       },
       [](const server_config& c) -> json { return c.sessions.record.max_files; }},
      {"sessions.max_outcomes", K::integer, std::to_string(d.sessions.max_outcomes),
       "finished tickets' outcomes (and events) kept at most",
       [](server_config& c, const json& v) {
         c.sessions.max_outcomes = as_uint<std::uint32_t>("sessions.max_outcomes", v, 1);
       },
       [](const server_config& c) -> json { return c.sessions.max_outcomes; }},
#define MM_SESSION_COUNT(field, min, text)                                                    \
  {                                                                                           \
    "sessions." #field, K::integer, std::to_string(d.sessions.field), text,                   \
        [](server_config& c, const json& v) {                                                 \
          c.sessions.field = as_uint<decltype(c.sessions.field)>("sessions." #field, v, min); \
        },                                                                                    \
        [](const server_config& c) -> json { return c.sessions.field; }                       \
  }
      MM_SESSION_COUNT(max_lobbies, 1, "running lobbies held at most (429 past it)"),
      MM_SESSION_COUNT(max_lobbies_per_credential, 1,
                       "lobbies one token may hold, registered or created by its finds"),
      MM_SESSION_COUNT(max_lobby_players, 1, "a lobby's max_players at most"),
      MM_SESSION_COUNT(max_lobby_party, 1, "a lobby find's party_size at most"),
      MM_SESSION_COUNT(event_connections_per_credential, 1,
                       "followers of the ticket events one token may hold (WebSockets and "
                       "waiting long-polls; 429 past it)"),
      MM_SESSION_COUNT(event_subscriptions, 1, "queue subscriptions one WebSocket may hold"),
      MM_SESSION_COUNT(event_backlog, 16,
                       "events owed to a WebSocket client before it is cut off as too slow "
                       "(close code 4008)"),
      MM_SESSION_COUNT(max_backfills_per_credential, 1,
                       "running matches one token may hold for backfill (429 past it)"),
      MM_SESSION_COUNT(backfill_requests_per_s, 1,
                       "backfill changes one token may make a second, on average (429 past it)"),
      MM_SESSION_COUNT(backfill_burst, 1,
                       "backfill changes one token may make at once after a quiet moment"),
      MM_SESSION_COUNT(explains_per_s, 1,
                       "ticket and running-match explanations a second, all callers together "
                       "(429 past it)"),
#undef MM_SESSION_COUNT
  };
  for (auto& k : sessions) keys.push_back(std::move(k));
  return keys;
}

}  // namespace mm::server
