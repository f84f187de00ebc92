// Vocabulary shared by every part of the engine.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "mm/strategies/label.hpp"

namespace mm {

// 64-bit player id; 0 never names a player (it marks an empty bucket slot).
using player_id = std::uint64_t;
inline constexpr player_id invalid_player = 0;

// Bucket fill thresholds used by options (docs/design.md, Buckets).
enum class fill_threshold : std::uint8_t {
  always,           // true whatever the fill
  low_population,   // fill > 20%
  high_population,  // fill >= 80%
  never,            // false whatever the fill
};

constexpr bool threshold_reached(fill_threshold t, double fill) {
  switch (t) {
    case fill_threshold::always:
      return true;
    case fill_threshold::low_population:
      return fill > 0.2;
    case fill_threshold::high_population:
      return fill >= 0.8;
    case fill_threshold::never:
      return false;
  }
  return false;
}

std::string_view to_string(fill_threshold t);
std::optional<fill_threshold> parse_fill_threshold(std::string_view s);

// What a match rule says of one candidate for one query.
struct match_verdict {
  bool possible = false;
  float quality = 0.0f;  // higher is better; meaningful only when possible

  static match_verdict impossible() { return {}; }
  static match_verdict with_quality(float q) { return {true, q}; }
};

enum class match_type : std::uint8_t {
  success,
  none_found,
  fake_opponent,
  invalid_request,  // the request was rejected; `error` says why
};

std::string_view to_string(match_type t);

template <class Query>
struct match_request {
  Query query{};
  std::uint32_t num_retries = 0;
  std::vector<player_id> excluded_player_ids;
  // Whether a FakeOpponent may answer when no real opponent is found. An
  // instance set's client clears it for every instance but the last one it
  // asks, so a bot never beats a real opponent held by another instance.
  bool allow_fake_opponent = true;
};

template <class Model>
struct match_response {
  match_type type = match_type::none_found;
  player_id best_candidate_id = invalid_player;
  std::optional<Model> model;  // set when return_model_in_response is on
  float quality = 0.0f;        // quality of the offered candidate
  std::uint32_t players_tested = 0;
  std::string_view error;  // static text, set for invalid_request
};

// What applying one player state update or enroll/remove did to the cache.
enum class update_outcome : std::uint8_t {
  inserted,        // the player was not cached and now is
  updated,         // same bucket, model replaced in place
  bucket_changed,  // moved to another bucket
  removed,         // taken out of the cache
  no_op,           // nothing to do (unknown player removed, insert skipped...)
  rejected,        // bad input; nothing changed
};

std::string_view to_string(update_outcome o);

struct update_result {
  update_outcome outcome = update_outcome::no_op;
  std::uint32_t evicted = 0;  // other players pushed out by the insert(s)
  std::string_view error;     // static text, set when rejected

  constexpr update_result() = default;
  constexpr update_result(update_outcome o, std::uint32_t ev = 0, std::string_view err = {})
      : outcome(o), evicted(ev), error(err) {}
};

}  // namespace mm
