#include "mm/session/queue_config.hpp"

#include <algorithm>
#include <set>

#include "mm/engine/options.hpp"

namespace mm::session {

bool valid_queue_name(const std::string& name) {
  return !name.empty() && name.size() <= 64 &&
         name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") == std::string::npos;
}

std::uint32_t candidates_per_seed(const queue_config& c) {
  if (c.candidates > 0) return c.candidates;
  return std::max<std::uint32_t>(8, 4 * std::min<std::uint32_t>(c.max_players, 1000));
}

std::vector<std::string> check(const queue_config& c, const std::string& prefix) {
  std::vector<std::string> e;
  const auto key = [&](const char* k) { return prefix + k; };
  if (c.min_players == 0) e.push_back(key("min_players") + " must be at least 1");
  if (c.shard_by.size() > 64) e.push_back(key("shard_by") + " must be at most 64 bytes");
  if (c.max_players < c.min_players)
    e.push_back(key("max_players") + " must be at least min_players (" +
                std::to_string(c.min_players) + ")");
  if (c.teams > 0) {
    if (c.team_size == 0) e.push_back(key("team_size") + " must be at least 1 with teams");
    const std::uint64_t seats = std::uint64_t{c.teams} * c.team_size;
    if (seats != c.max_players)
      e.push_back(key("max_players") + " must be teams x team_size (" + std::to_string(seats) +
                  ")");
    if (!c.split_parties && c.max_party_size > c.team_size)
      e.push_back(key("max_party_size") + " (" + std::to_string(c.max_party_size) +
                  ") must not exceed team_size (" + std::to_string(c.team_size) +
                  ") unless split_parties is true");
  }
  if (c.max_party_size == 0) e.push_back(key("max_party_size") + " must be at least 1");
  if (c.max_party_size > c.max_players)
    e.push_back(key("max_party_size") + " must not exceed max_players (" +
                std::to_string(c.max_players) + ")");
  if (c.max_players > 1000) e.push_back(key("max_players") + " must be at most 1000");
  if (c.tick.count() <= 0) e.push_back(key("tick") + " must be greater than 0");
  if (c.give_up_after.count() <= 0) e.push_back(key("give_up_after") + " must be greater than 0");
  if (c.reservation_timeout.count() <= 0)
    e.push_back(key("reservation_timeout") + " must be greater than 0");
  if (c.latency) {
    auto le = check(*c.latency, key("latency."));
    e.insert(e.end(), le.begin(), le.end());
  }
  std::set<std::string> names;
  for (std::size_t i = 0; i < c.rules.size(); ++i) {
    const rule& r = c.rules[i];
    const std::string rp = key("rules[") + std::to_string(i) + "].";
    auto re = check(r, rp);
    e.insert(e.end(), re.begin(), re.end());
    if (!names.insert(r.name.empty() ? to_string(r.kind) : r.name).second)
      e.push_back(rp + "name '" + (r.name.empty() ? to_string(r.kind) : r.name) +
                  "' is used twice: give each rule its own name");
    if (r.kind == rule_kind::latency && !c.latency)
      e.push_back(rp + "kind latency needs the queue's latency policy (" + key("latency") + ")");
    if (r.kind == rule_kind::team_balance && c.teams < 2)
      e.push_back(rp + "kind team_balance needs at least two teams");
  }
  return e;
}

void validate(const queue_config& c, const std::string& prefix) {
  const auto problems = check(c, prefix);
  if (problems.empty()) return;
  std::string msg = "the session queue '" + c.name + "' cannot run:";
  for (const auto& p : problems) msg += "\n  - " + p;
  throw config_error(msg);
}

}  // namespace mm::session
