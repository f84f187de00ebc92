#include "mm/session/explain.hpp"

#include <string>

namespace mm::session {

const char* to_string(refusal r) {
  switch (r) {
    case refusal::none:
      return "none";
    case refusal::rule:
      return "rule";
    case refusal::players:
      return "players";
    case refusal::teams:
      return "teams";
    case refusal::datacenter:
      return "datacenter";
    case refusal::already_in:
      return "already_in";
  }
  return "unknown";
}

top_refusal most_refused(const explanation& e) {
  top_refusal top;
  const auto consider = [&](std::uint64_t n, refusal why, std::int32_t rule) {
    if (n > top.count) top = {why, rule, n};
  };
  for (std::size_t k = 0; k < e.refused_by_rule.size() && k < e.rules.size(); ++k)
    consider(e.refused_by_rule[k], refusal::rule, static_cast<std::int32_t>(k));
  consider(e.refused_players, refusal::players, -1);
  consider(e.refused_teams, refusal::teams, -1);
  consider(e.refused_datacenter, refusal::datacenter, -1);
  consider(e.refused_already_in, refusal::already_in, -1);
  return top;
}

std::string wait_reason(const explanation& e) {
  const top_refusal top = most_refused(e);
  if (top.count == 0) return to_string(e.verdict);
  if (top.why == refusal::rule) return "rule:" + e.rules[static_cast<std::size_t>(top.rule)].name;
  return to_string(top.why);
}

const char* to_string(wait_verdict v) {
  switch (v) {
    case wait_verdict::no_candidates:
      return "no_candidates";
    case wait_verdict::too_few_players:
      return "too_few_players";
    case wait_verdict::enough_players:
      return "enough_players";
  }
  return "unknown";
}

}  // namespace mm::session
