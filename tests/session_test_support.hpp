// What the session engine's tests share: tickets, rules and queues in a line,
// datacenters with known estimated RTTs.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "mm/session/queue_config.hpp"
#include "mm/session/ticket.hpp"

namespace mm::session::testing {

using namespace std::chrono_literals;

inline ticket_player player(player_id id, double mmr) {
  ticket_player p;
  p.id = id;
  p.mmr = mmr;
  return p;
}

inline ticket_request solo(player_id id, double mmr) {
  return {{player(id, mmr)}, std::nullopt, false};
}

inline rule skill(double max, expansion grow = {}) {
  rule r;
  r.name = "skill";
  r.max_difference = max;
  r.expand = grow;
  return r;
}

inline queue_config one_vs_one(double max = 100, expansion grow = {}) {
  queue_config c;
  c.name = "duel";
  c.rules = {skill(max, grow)};
  return c;
}

// Datacenters on the equator, 10 degrees of longitude apart (about 22 ms of
// estimated RTT apart at the default detour of 2).
inline latency_model equator(std::size_t n) {
  std::vector<datacenter> dcs;
  for (std::size_t i = 0; i < n; ++i)
    dcs.push_back({"dc" + std::to_string(i), {0, 10.0 * static_cast<double>(i)}, "r"});
  return latency_model(dcs);
}

inline queue_config coop(std::uint32_t players = 4) {
  queue_config c;
  c.name = "coop";
  c.min_players = c.max_players = players;
  c.teams = 0;
  c.max_party_size = players;
  c.latency = latency_stages{};
  return c;
}

inline ticket_request with_rtt(player_id id, double mmr, std::vector<double> rtt) {
  ticket_player p = player(id, mmr);
  for (std::size_t d = 0; d < rtt.size(); ++d)
    p.rtt_ms.push_back({"dc" + std::to_string(d), rtt[d]});
  return {{p}, std::nullopt, false};
}

inline std::vector<player_id> all_players(const formed_match& m) {
  std::vector<player_id> out;
  for (const auto& team : m.teams) out.insert(out.end(), team.begin(), team.end());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace mm::session::testing
