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

std::string wait_reason(const explanation& e) {
  std::string top = to_string(e.verdict);
  std::uint64_t most = 0;
  const auto consider = [&](std::uint64_t n, const std::string& label) {
    if (n > most) most = n, top = label;
  };
  for (std::size_t k = 0; k < e.refused_by_rule.size() && k < e.rules.size(); ++k)
    consider(e.refused_by_rule[k], "rule:" + e.rules[k].name);
  consider(e.refused_players, "players");
  consider(e.refused_teams, "teams");
  consider(e.refused_datacenter, "datacenter");
  consider(e.refused_already_in, "already_in");
  return top;
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
