// Explain's message types: why a waiting ticket or a running match waits
// (session::explanation, explain.hpp), carried as the engine answers it.
// CAF `inspect` functions; enums cross as their underlying bytes.
#pragma once

#include <caf/atom.hpp>
#include <caf/meta/type_name.hpp>
#include <cstdint>
#include <type_traits>

#include "mm/session/explain.hpp"

namespace mm::actors {

using explain_atom = caf::atom_constant<caf::atom("explain")>;

// The explanations' bound: candidates judged per request, at most.
inline constexpr std::uint32_t max_explain_candidates = 10'000;

// An enum as its underlying integer.
template <class Enum>
struct enum_byte {
  Enum& value;
};
template <class Inspector, class Enum>
typename Inspector::result_type inspect(Inspector& f, enum_byte<Enum>& x) {
  auto raw = static_cast<std::underlying_type_t<Enum>>(x.value);
  if constexpr (std::is_void_v<typename Inspector::result_type>) {
    f(raw);  // to_string: the number
  } else {
    auto result = f(raw);
    if constexpr (Inspector::writes_state) x.value = static_cast<Enum>(raw);
    return result;
  }
}

}  // namespace mm::actors

namespace mm::session {

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, rule_explanation& x) {
  actors::enum_byte<rule_kind> kind{x.kind};
  return f(caf::meta::type_name("rule_explanation"), x.name, kind, x.threshold, x.filters,
           x.next_expansion_in_ms, x.optional_in_ms);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, candidate_explanation& x) {
  actors::enum_byte<refusal> why{x.why};
  return f(caf::meta::type_name("candidate_explanation"), x.ticket, x.players, x.mmr, x.waited_ms,
           why, x.rule);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, explanation& x) {
  actors::enum_byte<latency_stage> stage{x.stage};
  actors::enum_byte<wait_verdict> verdict{x.verdict};
  return f(caf::meta::type_name("explanation"), x.queue, x.running_match, x.waited_ms,
           x.gives_up_in_ms, x.has_stage, stage, x.next_stage_in_ms, x.max_rtt_ms, x.datacenters,
           x.datacenter_count, x.rules, x.players, x.players_needed, x.waiting, x.examined,
           x.refused_by_rule, x.refused_players, x.refused_teams, x.refused_datacenter,
           x.refused_already_in, x.compatible, x.compatible_players, x.best_datacenter,
           x.best_datacenter_players, x.nearest, verdict, x.summary);
}

}  // namespace mm::session
