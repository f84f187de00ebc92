// A game's own profile, compiled into the engine: the attack-target lookup of a
// raid game. Defenders have a guild, a hero, a league and an arena; attackers
// bring their rival guilds and their lose streak. See docs/strategies.md.
#include <array>
#include <cstdio>
#include <string_view>

#include "mm/engine/engine.hpp"
#include "mm/engine/stable_hash.hpp"

namespace raid {

using mm::player_id;

constexpr std::array<std::string_view, 3> arena_names = {"desert", "glacier", "volcano"};

// What the cache stores per defender: small and trivially copyable.
struct defender {
  player_id id = mm::invalid_player;
  float mmr = 0;
  std::uint32_t guild = 0;  // 0: no guild
  std::uint16_t hero = 0;
  std::uint8_t league = 0;  // 0 (bronze) .. 5 (legend)
  std::uint8_t arena = 0;   // index into arena_names
};

struct attack {
  player_id attacker = mm::invalid_player;
  float mmr = 0;
  std::uint32_t guild = 0;
  std::array<std::uint32_t, 3> rival_guilds{};
  std::uint16_t hero = 0;
  std::uint8_t league = 0;
  std::uint8_t arena = 0;
  std::uint8_t lose_streak = 0;
};

// Arena: players only fight in their own arena (distinct, hard). The label is a
// stable hash of the arena's name, so it survives renumbering the enum.
template <class Profile>
class arena_strategy final : public mm::strategy<Profile> {
 public:
  std::string name() const override { return "arena"; }
  mm::label_kind kind() const override { return mm::label_kind::distinct; }
  bool hard() const override { return true; }
  mm::label_value label_of(const defender& d) const override { return hash(d.arena); }
  mm::label_value label_of(const attack& a) const override { return hash(a.arena); }
  std::string describe(mm::label_value v) const override {
    for (auto n : arena_names)
      if (mm::fnv1a64(n) == v) return std::string(n);
    return "arena?";
  }

 private:
  static mm::label_value hash(std::uint8_t arena) {
    return mm::fnv1a64(arena_names[arena % arena_names.size()]);
  }
};

// League: nearer leagues first (ranged, soft).
template <class Profile>
class league_strategy final : public mm::strategy<Profile> {
 public:
  std::string name() const override { return "league"; }
  mm::label_kind kind() const override { return mm::label_kind::ranged; }
  bool hard() const override { return false; }
  mm::label_value label_of(const defender& d) const override { return d.league; }
  mm::label_value label_of(const attack& a) const override { return a.league; }
};

struct profile {
  using model_type = defender;
  using query_type = attack;
  static constexpr bool multiple_models_per_player = false;
  static constexpr bool has_fake_opponents = true;

  static player_id id_of(const defender& d) { return d.id; }
  static double mmr_of(const defender& d) { return d.mmr; }
  static player_id attacker_of(const attack& a) { return a.attacker; }
  static double mmr_of(const attack& a) { return a.mmr; }

  // quality = 300 - |MMR gap|; never the own guild; a rival guild +100; the same
  // hero -20; on a lose streak of 3 or more, weaker defenders +30. The MMR window
  // is 200 and widens by 100 per retry.
  mm::match_verdict match(const attack& a, const defender& d, std::uint32_t retries) const {
    const float gap = std::abs(a.mmr - d.mmr);
    if (gap > 200.0f + 100.0f * static_cast<float>(retries)) return mm::match_verdict::impossible();
    if (a.guild != 0 && d.guild == a.guild) return mm::match_verdict::impossible();
    float quality = 300.0f - gap;
    for (std::uint32_t rival : a.rival_guilds)
      if (rival != 0 && d.guild == rival) quality += 100;
    if (d.hero == a.hero) quality -= 20;
    if (a.lose_streak >= 3 && d.mmr < a.mmr) quality += 30;
    return mm::match_verdict::with_quality(quality);
  }

  // Row attributes: guild, hero, league, arena. Banned players (league < 0) are
  // valid rows but not eligible targets.
  mm::row_verdict make_models(const mm::player_row& row, std::vector<defender>& out) const {
    const auto& a = row.attributes;
    if (a[2] < 0) return mm::row_verdict::not_eligible;
    if (a[0] < 0 || a[1] < 0 || a[1] > 0xffff || a[2] > 5 || a[3] < 0 ||
        a[3] >= static_cast<std::int64_t>(arena_names.size()))
      return mm::row_verdict::malformed;
    out.push_back({row.id, static_cast<float>(row.mmr), static_cast<std::uint32_t>(a[0]),
                   static_cast<std::uint16_t>(a[1]), static_cast<std::uint8_t>(a[2]),
                   static_cast<std::uint8_t>(a[3])});
    return mm::row_verdict::eligible;
  }

  // A bot shaped like the attacker, a little weaker; bot ids have the top bit set.
  std::optional<defender> fake_opponent(const attack& a) const {
    return defender{a.attacker | (1ull << 63),
                    a.mmr - 50,
                    0,
                    static_cast<std::uint16_t>(a.hero + 1),
                    a.league,
                    a.arena};
  }

  std::vector<std::unique_ptr<mm::strategy<profile>>> make_strategies() const {
    std::vector<std::unique_ptr<mm::strategy<profile>>> s;
    s.push_back(std::make_unique<arena_strategy<profile>>());
    s.push_back(std::make_unique<league_strategy<profile>>());
    return s;
  }
};
static_assert(mm::game_profile<profile>);

}  // namespace raid

int main() {
  mm::options o;
  o.name = "raid";
  o.player_cache_size = 20'000;
  o.initial_mmr_low = 0;
  o.initial_mmr_high = 3000;
  o.mmr_bucket_count = 30;
  o.enable_fake_opponents = true;
  o.random_seed = 1;
  mm::engine<raid::profile> engine(o);

  // The scan would feed rows like these from the player table: a first pass
  // gives the samples the buckets are sized from, the next fills them.
  mm::rng r(2);
  std::vector<mm::player_row> rows;
  for (mm::player_id id = 1; id <= 30'000; ++id) {
    mm::player_row row;
    row.id = id;
    row.mmr = 500 + static_cast<double>(r.below(2000));
    row.attributes = {
        static_cast<std::int64_t>(r.below(50)), static_cast<std::int64_t>(r.below(12)),
        static_cast<std::int64_t>(row.mmr / 500), static_cast<std::int64_t>(r.below(3))};
    rows.push_back(row);
  }
  for (const auto& row : rows) engine.apply_row(row);
  const auto report = engine.rebalance(0);
  for (const auto& row : rows) engine.apply_row(row);
  std::printf("cached %llu defenders in %llu buckets (rebalance: %s)\n",
              static_cast<unsigned long long>(engine.info().players),
              static_cast<unsigned long long>(engine.info().bucket_count),
              report.performed ? "done" : report.reason.c_str());

  raid::attack a;
  a.attacker = 99'999;
  a.mmr = 1500;
  a.guild = 7;
  a.rival_guilds = {8, 9, 0};
  a.hero = 3;
  a.league = 3;
  a.arena = 1;
  a.lose_streak = 4;
  mm::match_request<raid::attack> req{a, 0, {}};
  int failures = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const auto res = engine.find_match(req);
    if (res.type != mm::match_type::success || !res.model) {
      std::printf("attempt %d: %s\n", attempt, std::string(mm::to_string(res.type)).c_str());
      ++failures;
      continue;
    }
    const raid::defender& d = *res.model;
    std::printf("attempt %d: %s, defender %llu (MMR %.0f, guild %u, hero %u, %s), quality %.0f\n",
                attempt, std::string(mm::to_string(res.type)).c_str(),
                static_cast<unsigned long long>(d.id), d.mmr, d.guild, d.hero,
                std::string(raid::arena_names[d.arena]).c_str(), res.quality);
    if (d.guild == a.guild || d.arena != a.arena) ++failures;  // rules the engine must keep
    req.excluded_player_ids.push_back(d.id);  // "already tried": never offered again
  }
  // An attack in an arena nobody plays: no candidate, a fake opponent instead.
  req.query.arena = 2;
  req.query.mmr = 1e6;
  const auto fake = engine.find_match(req);
  std::printf("far outside the population: %s\n", std::string(mm::to_string(fake.type)).c_str());
  if (fake.type != mm::match_type::fake_opponent) ++failures;
  return failures == 0 ? 0 : 1;
}
