#include "explain_json.hpp"

#include "mm/session/public_id.hpp"

namespace mm::server {

namespace {

json ms_or_null(std::int64_t ms) {
  return ms < 0 ? json(nullptr) : json(ms);
}

}  // namespace

json explanation_json(const session::explanation& e) {
  json rules = json::array();
  for (const auto& r : e.rules) {
    const bool has_threshold =
        r.kind == session::rule_kind::difference || r.kind == session::rule_kind::team_balance;
    rules.push_back({{"name", r.name},
                     {"kind", session::to_string(r.kind)},
                     {"threshold", has_threshold ? json(r.threshold) : json(nullptr)},
                     {"filters", r.filters},
                     {"next_expansion_in_ms", ms_or_null(r.next_expansion_in_ms)},
                     {"optional_in_ms", ms_or_null(r.optional_in_ms)}});
  }
  json by_rule = json::array();
  for (std::size_t k = 0; k < e.refused_by_rule.size() && k < e.rules.size(); ++k)
    by_rule.push_back({{"rule", e.rules[k].name}, {"refused", e.refused_by_rule[k]}});
  json nearest = json::array();
  for (const auto& c : e.nearest) {
    const bool by_rule_named = c.rule >= 0 && static_cast<std::size_t>(c.rule) < e.rules.size();
    nearest.push_back(
        {{"ticket", c.ticket == 0 ? json(nullptr) : json(session::format_public_id(c.ticket))},
         {"players", c.players},
         {"mmr", c.mmr},
         {"waited_ms", c.waited_ms},
         {"refused_by", session::to_string(c.why)},
         {"rule",
          by_rule_named ? json(e.rules[static_cast<std::size_t>(c.rule)].name) : json(nullptr)}});
  }
  json stage = nullptr;
  if (e.has_stage)
    stage = {{"name", session::to_string(e.stage)},
             {"next_in_ms", ms_or_null(e.next_stage_in_ms)},
             {"max_rtt_ms", e.max_rtt_ms < 0 ? json(nullptr) : json(e.max_rtt_ms)}};
  return {{"queue", e.queue},
          {"waited_ms", e.waited_ms},
          {"gives_up_in_ms", ms_or_null(e.gives_up_in_ms)},
          {"stage", stage},
          {"datacenters", {{"count", e.datacenter_count}, {"names", e.datacenters}}},
          {"rules", rules},
          {"players", e.players},
          {"players_needed", e.players_needed},
          {"candidates",
           {{"waiting", e.waiting},
            {"judged", e.examined},
            {"compatible", e.compatible},
            {"compatible_players", e.compatible_players},
            {"refused",
             {{"rules", by_rule},
              {"players", e.refused_players},
              {"teams", e.refused_teams},
              {"datacenter", e.refused_datacenter},
              {"already_in", e.refused_already_in}}},
            {"nearest", nearest}}},
          {"best_datacenter",
           e.best_datacenter.empty() && e.best_datacenter_players == 0
               ? json(nullptr)
               : json{{"name", e.best_datacenter.empty() ? json(nullptr) : json(e.best_datacenter)},
                      {"players", e.best_datacenter_players}}},
          {"verdict", session::to_string(e.verdict)},
          {"summary", e.summary}};
}

}  // namespace mm::server
