// What the cluster tests share: nodes of six async shards and the session
// queues on one PostgreSQL, and who serves what, as each node says
// (GET /api/cluster).
#pragma once

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "mm/engine/synthetic_players.hpp"
#include "mm/storage/pg_store.hpp"
#include "server_fixture.hpp"
#include "ticket_ledger.hpp"

namespace mm::test {

constexpr std::uint32_t shards = 6;
constexpr auto takeover_after = std::chrono::seconds(2);

inline json node_patch(const std::string& url, const std::string& name) {
  json c = ticket_queues_patch();
  c["database"] = {{"url", url}};
  c["cluster"] = {{"total", shards}, {"node", name}, {"takeover_after", "2s"}};
  c["matchmaker"] = {{"state_snapshot_interval", "1s"}};
  return c;
}

inline std::vector<std::string> all_resources() {
  std::vector<std::string> out;
  for (std::uint32_t i = 0; i < shards; ++i) out.push_back("mm-" + std::to_string(i));
  out.push_back("sessions");
  return out;
}

// resource -> the names of the nodes that say they serve it now.
inline std::map<std::string, std::set<std::string>> servers(
    const std::map<std::string, live_server*>& nodes) {
  std::map<std::string, std::set<std::string>> out;
  for (const auto& [name, s] : nodes) {
    auto r = s->get("/api/cluster", view_token);
    if (!r || r->status != 200) continue;
    const json c = json::parse(r->body);
    if (c.value("serving", false))
      for (const auto& o : c["owned"]) out[o["resource"]].insert(name);
  }
  return out;
}

inline bool each_served_once(const std::map<std::string, live_server*>& nodes) {
  const auto s = servers(nodes);
  for (const auto& r : all_resources())
    if (!s.count(r) || s.at(r).size() != 1) return false;
  return true;
}

// Every resource served once, and each node serving its share: 7 resources
// over n nodes, floor(7 / n) at least. A node that is not serving does not
// count: what it reports may be what it held before a pause, not yet
// corrected by its first round after it.
inline bool settled(const std::map<std::string, live_server*>& nodes) {
  if (!each_served_once(nodes)) return false;
  for (const auto& [name, s] : nodes) {
    const json c = s->get_json("/api/cluster", view_token);
    if (!c.value("serving", false) || c["owned"].size() < all_resources().size() / nodes.size())
      return false;
  }
  return true;
}

// Settled, and every lease with the owner the plan gives it (as the first
// node that answers sees them): no hand-over is due, so nothing moves while
// a test reads what the cluster kept.
inline bool at_rest(const std::map<std::string, live_server*>& nodes) {
  if (!settled(nodes)) return false;
  for (const auto& [name, s] : nodes) {
    auto r = s->get("/api/cluster", view_token);
    if (!r || r->status != 200) continue;
    const json c = json::parse(r->body);  // kept: the loop reads into it
    for (const auto& l : c["leases"])
      if (l["owner"] != l["planned_owner"]) return false;
    return true;
  }
  return false;
}

// Polls until `done` or `limit`; true when done.
template <class Done>
bool poll(std::chrono::milliseconds limit, Done done) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));  // polling processes
  }
  return done();
}

// What every session of the database is doing and waiting on, for a test
// that failed to see a takeover: who holds what, and who waits behind it.
inline std::string database_activity(const std::string& url) {
  std::string out;
  try {
    pg::connection conn(url, std::chrono::seconds(5));
    const auto r = conn.exec(
        "SELECT pid, state, COALESCE(wait_event_type, ''), COALESCE(wait_event, ''), "
        "COALESCE(pg_blocking_pids(pid)::text, ''), "
        "COALESCE(extract(epoch FROM clock_timestamp() - xact_start)::text, ''), "
        "left(query, 160) FROM pg_stat_activity WHERE datname = current_database() "
        "AND pid <> pg_backend_pid()");
    for (std::size_t i = 0; i < r.size(); ++i)
      out += r.text(i, 0) + " " + r.text(i, 1) + " wait=" + r.text(i, 2) + "/" + r.text(i, 3) +
             " blocked_by=" + r.text(i, 4) + " xact_s=" + r.text(i, 5) + " | " + r.text(i, 6) +
             "\n";
  } catch (const std::exception& e) {
    out += std::string("cannot read the activity: ") + e.what();
  }
  return out;
}

inline void write_players(const std::string& url) {
  pg_store store(url);
  rng r(29);
  store.upsert_players(make_players(synthetic_population{}, 4000, 1, r));
}

}  // namespace mm::test
