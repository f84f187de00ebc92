// What a game supplies at compile time (docs/design.md, Game profiles): its model and query types,
// the match rule, the model factory, the fake-opponent factory and extra strategies. The engine is
// a template over a profile, so the match rule is inlined into the query loop. See
// docs/strategies.md and examples/ for a complete profile.
#pragma once

#include <concepts>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mm/engine/player_row.hpp"
#include "mm/engine/types.hpp"
#include "mm/strategies/strategy.hpp"

namespace mm {

template <class P>
concept game_profile = requires(const P& p, const typename P::model_type& m,
                                const typename P::query_type& q, const player_row& row,
                                std::vector<typename P::model_type>& out) {
  // A value-initialised model has id 0 (an empty slot); models are small and
  // trivially copyable, as they live in fixed array slots.
  requires std::is_trivially_copyable_v<typename P::model_type>;
  { P::id_of(m) } -> std::convertible_to<player_id>;
  { P::mmr_of(m) } -> std::convertible_to<double>;  // defense MMR
  { P::attacker_of(q) } -> std::convertible_to<player_id>;
  { P::mmr_of(q) } -> std::convertible_to<double>;  // attack MMR
  // The match rule: possible or not, and the quality (higher is better).
  { p.match(q, m, std::uint32_t{}) } -> std::same_as<match_verdict>;
  // The model factory: appends the models of a stored player to `out`.
  { p.make_models(row, out) } -> std::same_as<row_verdict>;
  // The fake-opponent factory: nullopt declines.
  { p.fake_opponent(q) } -> std::same_as<std::optional<typename P::model_type>>;
  // Extra bucketing strategies, in label order after the MMR strategy.
  { p.make_strategies() } -> std::same_as<std::vector<std::unique_ptr<strategy<P>>>>;
  { P::multiple_models_per_player } -> std::convertible_to<bool>;
  { P::has_fake_opponents } -> std::convertible_to<bool>;
};

// Optional: why the match rule rejects a candidate, in words, for the "why no
// match" tool (engine::explain). Profiles without it get a generic reason.
template <class P>
concept explains_rejections = requires(const P& p, const typename P::model_type& m,
                                       const typename P::query_type& q) {
  { p.explain_rejection(q, m, std::uint32_t{}) } -> std::convertible_to<std::string>;
};

// Optional: why make_models() called a row malformed, in words, so that the
// matchmaker can report it (engine_info::row_reports). Profiles without it get
// a generic reason.
template <class P>
concept explains_malformed_rows = requires(const P& p, const player_row& row) {
  { p.explain_malformed(row) } -> std::convertible_to<std::string>;
};

template <class P>
struct id_of_model {
  player_id operator()(const typename P::model_type& m) const { return P::id_of(m); }
};

}  // namespace mm
