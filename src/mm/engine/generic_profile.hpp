// The generic game profile (docs/design.md, Game profiles) used by the standalone server: a player
// is an id, an MMR and up to four integer attributes; the rules are set up at run time from
// configuration.
#pragma once

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "mm/engine/game_profile.hpp"
#include "mm/engine/options.hpp"

namespace mm {

inline constexpr std::size_t generic_attribute_count = 4;

// 28 bytes per cache slot, which is most of the matchmaker's memory: the id is
// kept as two 32-bit halves so the struct needs only 4-byte alignment (a packed
// 64-bit member would be 32 bytes or a misaligned reference waiting to happen).
struct generic_model {
  std::uint32_t id_low = 0, id_high = 0;
  float mmr = 0;  // defense MMR
  std::array<std::uint32_t, generic_attribute_count> attributes{};

  constexpr generic_model() = default;
  constexpr generic_model(player_id id, float defense_mmr,
                          std::array<std::uint32_t, generic_attribute_count> a = {})
      : id_low(static_cast<std::uint32_t>(id)),
        id_high(static_cast<std::uint32_t>(id >> 32)),
        mmr(defense_mmr),
        attributes(a) {}

  constexpr player_id id() const { return (player_id{id_high} << 32) | id_low; }
};
static_assert(sizeof(generic_model) == 28);

// An MMR goes through an archive as its IEEE-754 bits. In a snapshot these
// are the very bytes of the float. Through the actor port (CAF serializes
// with these functions too) a NaN or an infinity arrives as itself, and is
// refused by the engine, where CAF 0.17.6's own float encoding would garble
// a NaN into some number and never finish encoding an infinity (the sender's
// network thread spins for ever).
template <class Archive>
void serialize_mmr(Archive& ar, float& mmr) {
  auto bits = std::bit_cast<std::uint32_t>(mmr);
  ar(bits);
  mmr = std::bit_cast<float>(bits);
}

template <class Archive>
void serialize(Archive& ar, generic_model& m) {
  ar(m.id_low, m.id_high);
  serialize_mmr(ar, m.mmr);
  ar(m.attributes);
}
static_assert(std::is_trivially_copyable_v<generic_model>);

struct generic_query {
  player_id attacker = invalid_player;
  float mmr = 0;  // attack MMR
  std::array<std::uint32_t, generic_attribute_count> attributes{};
};

template <class Archive>
void serialize(Archive& ar, generic_query& q) {
  ar(q.attacker);
  serialize_mmr(ar, q.mmr);
  ar(q.attributes);
}

enum class attribute_rule : std::uint8_t {
  none,
  hard_equal,        // only players with the same value may match (region)
  must_differ,       // never a player with the same value (own guild)
  prefer_equal,      // quality + weight when equal (same league)
  prefer_different,  // quality + weight when different (another hero)
};

enum class attribute_bucketing : std::uint8_t {
  none,           // not a bucketing strategy
  distinct_hard,  // one bucket per value; other values never walked
  distinct_soft,  // one bucket per value; other values walked later
  ranged,         // buckets per tier of tier_width values, nearer tiers first
};

struct generic_attribute {
  std::string name;
  attribute_rule rule = attribute_rule::none;
  float weight = 0;
  attribute_bucketing bucketing = attribute_bucketing::none;
  std::int64_t tier_width = 1;
};

struct generic_profile_config {
  std::vector<generic_attribute> attributes;  // position = attribute index
  // A candidate is possible when |attack MMR - defense MMR| <= window, with
  // window = min(mmr_window_max, mmr_window + mmr_window_per_retry * retries).
  float mmr_window = 100;
  float mmr_window_per_retry = 50;
  float mmr_window_max = 1000;
};

std::string_view to_string(attribute_rule r);
std::optional<attribute_rule> parse_attribute_rule(std::string_view s);
std::string_view to_string(attribute_bucketing b);
std::optional<attribute_bucketing> parse_attribute_bucketing(std::string_view s);

class generic_profile {
 public:
  using model_type = generic_model;
  using query_type = generic_query;
  static constexpr bool multiple_models_per_player = false;
  static constexpr bool has_fake_opponents = true;

  generic_profile() : generic_profile(generic_profile_config{}) {}
  // Throws config_error naming the attribute when the configuration is unusable.
  explicit generic_profile(generic_profile_config c);

  const generic_profile_config& config() const { return c_; }

  static player_id id_of(const model_type& m) { return m.id(); }
  static double mmr_of(const model_type& m) { return m.mmr; }
  static player_id attacker_of(const query_type& q) { return q.attacker; }
  static double mmr_of(const query_type& q) { return q.mmr; }
  static std::int64_t attribute(const model_type& m, std::size_t i) { return m.attributes[i]; }
  static std::int64_t attribute(const query_type& q, std::size_t i) { return q.attributes[i]; }

  float window(std::uint32_t retries) const {
    return std::min(c_.mmr_window_max, c_.mmr_window + c_.mmr_window_per_retry * retries);
  }

  match_verdict match(const query_type& q, const model_type& m, std::uint32_t retries) const {
    const float gap = std::abs(q.mmr - m.mmr);
    if (gap > window(retries)) return match_verdict::impossible();
    float quality = -gap;
    for (std::uint8_t i = 0; i < rule_count_; ++i) {
      const compiled_rule& r = rules_[i];
      const bool equal = q.attributes[r.index] == m.attributes[r.index];
      switch (r.rule) {
        case attribute_rule::hard_equal:
          if (!equal) return match_verdict::impossible();
          break;
        case attribute_rule::must_differ:
          if (equal) return match_verdict::impossible();
          break;
        case attribute_rule::prefer_equal:
          if (equal) quality += r.weight;
          break;
        case attribute_rule::prefer_different:
          if (!equal) quality += r.weight;
          break;
        case attribute_rule::none:
          break;
      }
    }
    return match_verdict::with_quality(quality);
  }

  // Why match() rejects m, in words ("" when it does not).
  std::string explain_rejection(const query_type& q, const model_type& m,
                                std::uint32_t retries) const;

  row_verdict make_models(const player_row& row, std::vector<model_type>& out) const;
  // Why make_models() calls the row malformed.
  std::string explain_malformed(const player_row& row) const;

  // A synthetic opponent at the attacker's own MMR with the attacker's
  // attributes. It carries id 0: no stored player is behind it.
  std::optional<model_type> fake_opponent(const query_type& q) const {
    return model_type{invalid_player, q.mmr, q.attributes};
  }

  std::vector<std::unique_ptr<strategy<generic_profile>>> make_strategies() const;

 private:
  struct compiled_rule {
    std::uint8_t index = 0;
    attribute_rule rule = attribute_rule::none;
    float weight = 0;
  };
  generic_profile_config c_;
  std::array<compiled_rule, generic_attribute_count> rules_{};
  std::uint8_t rule_count_ = 0;
};

static_assert(game_profile<generic_profile>);

}  // namespace mm
