#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "test_support.hpp"

using namespace mm;
using namespace mm::test;

namespace {

// Invariants of the cache against a model of what the game last said.
void check_cache(const generic_engine& e, const std::map<player_id, generic_model>& truth) {
  std::multiset<player_id> ids;
  for (std::uint32_t b = 0; b < e.pool().size(); ++b) {
    const auto& entry = e.pool().at(b);
    entry.slots.for_each([&](const generic_model& m) {
      ids.insert(m.id());
      auto it = truth.find(m.id());
      REQUIRE(it != truth.end());      // never a removed player
      CHECK(it->second.mmr == m.mmr);  // never a stale model
      CHECK(it->second.attributes == m.attributes);
      CHECK(e.labels_of(m) == entry.labels);  // in the bucket of its labels
    });
  }
  for (player_id id : ids) CHECK(ids.count(id) == 1);  // one entry per player
}

}  // namespace

TEST_CASE("random updates keep the cache equal to the latest state, at most",
          "[update][property]") {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    INFO("seed " << seed);
    auto o = small_options(static_cast<std::uint32_t>(20 + seed * 5));
    o.mmr_bucket_count = 5;
    o.bucket_initial_size = o.player_cache_size / 16;  // 15 tuples fit in the cache
    generic_profile_config pc;
    pc.attributes = {
        {"region", attribute_rule::hard_equal, 0, attribute_bucketing::distinct_hard, 1}};
    generic_engine e(o, generic_profile(pc));
    rng r(seed);
    std::map<player_id, generic_model> truth;
    std::uint64_t evicted = 0;
    for (int step = 0; step < 3000; ++step) {
      const player_id id = 1 + r.below(300);
      const auto action = r.below(10);
      if (action == 0) {
        const bool was_cached = e.player(id).participating;
        const auto res = e.update(id, std::optional<generic_model>{});
        CHECK(res.outcome == (was_cached ? update_outcome::removed : update_outcome::no_op));
        CHECK_FALSE(e.player(id).participating);
        truth.erase(id);
      } else if (action == 1) {
        e.remove(id);
        truth.erase(id);
      } else {
        const auto m = model(id, static_cast<float>(r.below(1000)),
                             {static_cast<std::uint32_t>(r.below(3)), 0, 0, 0});
        const auto res = e.update(id, m);
        CHECK(res.outcome != update_outcome::rejected);
        CHECK(res.outcome != update_outcome::no_op);
        evicted += res.evicted;
        truth[id] = m;
        CHECK(e.player(id).participating);  // the player just updated is cached
      }
      if (step % 500 == 0) check_cache(e, truth);
      if (step == 1500) e.rebalance(5);  // relabels and resizes mid-way
    }
    check_cache(e, truth);
    CHECK(e.stats().evictions == evicted);
  }
}

TEST_CASE("update outcomes", "[update]") {
  auto o = small_options(100);
  o.mmr_bucket_count = 10;
  generic_engine e(o);
  CHECK(e.update(5, model(5, 150)).outcome == update_outcome::inserted);
  CHECK(e.update(5, model(5, 160)).outcome == update_outcome::updated);
  CHECK(e.update(5, model(5, 750)).outcome == update_outcome::bucket_changed);
  CHECK(e.player(5).mmr == 750);
  CHECK(e.update(5, std::optional<generic_model>{}).outcome == update_outcome::removed);
  CHECK_FALSE(e.player(5).participating);
  CHECK(e.update(5, std::optional<generic_model>{}).outcome == update_outcome::no_op);
  CHECK(e.remove(77).outcome == update_outcome::no_op);
  const auto& s = e.stats();
  CHECK(s.updates_inserted == 1);
  CHECK(s.updates_updated == 1);
  CHECK(s.updates_bucket_changed == 1);
  CHECK(s.updates_removed == 1);
  CHECK(s.updates_no_op == 2);
}

TEST_CASE("bad updates are rejected and change nothing", "[update]") {
  generic_engine e(small_options());
  e.update(1, model(1, 10));
  CHECK(e.update(0, model(0, 10)).outcome == update_outcome::rejected);
  auto nan = e.update(1, model(1, std::numeric_limits<float>::quiet_NaN()));
  CHECK(nan.outcome == update_outcome::rejected);
  CHECK_FALSE(nan.error.empty());
  CHECK(e.update(1, model(1, -std::numeric_limits<float>::infinity())).outcome ==
        update_outcome::rejected);
  CHECK(e.update(2, model(3, 10)).outcome == update_outcome::rejected);  // id mismatch
  CHECK(e.enroll(model(0, 10)).outcome == update_outcome::rejected);
  CHECK(e.remove(0).outcome == update_outcome::rejected);
  CHECK(e.player(1).mmr == 10);
  CHECK(e.info().players == 1);
  CHECK(e.stats().updates_rejected == 6);
}

TEST_CASE("the insert threshold skips unknown players but not known ones or enrolments",
          "[update]") {
  auto o = small_options(100);
  o.player_ignore_update_insert = fill_threshold::always;
  o.mmr_bucket_count = 1;
  generic_engine e(o);
  // No bucket yet: the first player creates it.
  CHECK(e.update(1, model(1, 10)).outcome == update_outcome::inserted);
  CHECK(e.update(2, model(2, 10)).outcome == update_outcome::no_op);
  CHECK(e.update(1, model(1, 20)).outcome == update_outcome::updated);
  CHECK(e.enroll(model(2, 10)).outcome == update_outcome::inserted);
  CHECK(e.player(2).participating);
}

TEST_CASE("the scan inserts into full buckets whatever the update-insert threshold says",
          "[update][rows]") {
  for (auto threshold :
       {fill_threshold::always, fill_threshold::low_population, fill_threshold::high_population}) {
    auto o = small_options(100);
    o.player_ignore_update_insert = threshold;
    o.mmr_bucket_count = 1;
    o.bucket_initial_size = 8;
    generic_engine e(o);
    for (player_id id = 1; id <= 8; ++id) e.enroll(model(id, 10));  // a bucket past 80%
    CHECK(e.update(100, model(100, 10)).outcome == update_outcome::no_op);
    CHECK_FALSE(e.player(100).participating);
    // Scanned rows always go in: replace-on-insert keeps the sample fresh.
    std::uint32_t inserted = 0;
    for (player_id id = 200; id < 240; ++id) {
      player_row row;
      row.id = id;
      row.mmr = 10;
      if (e.apply_row(row).outcome == update_outcome::inserted) ++inserted;
      CHECK(e.player(id).participating);
    }
    CHECK(inserted == 40);
    CHECK(e.info().capacity == 8);  // replaced in place: the one bucket did not grow
  }
}

TEST_CASE("state updates are sizing samples but enrolments and restores are not", "[update]") {
  generic_engine e(small_options());
  e.update(1, model(1, 10));
  e.update(2, model(2, 20));
  e.update(2, std::optional<generic_model>{});  // a removal carries no model
  e.update(3, model(4, 20));                    // rejected: not sampled
  CHECK(e.sample_count() == 2);
  e.enroll(model(5, 10));
  e.restore_entry(model(6, 10));
  CHECK(e.sample_count() == 2);
  CHECK(e.player(5).participating);
  CHECK(e.player(6).participating);
}

TEST_CASE("model rows go through the factory, the samples and the cache", "[update][rows]") {
  auto o = small_options();
  generic_engine e(o);
  player_row row;
  row.id = 9;
  row.mmr = 300;
  row.attributes = {1, 2, 3, 4};
  CHECK(e.apply_row(row).outcome == update_outcome::inserted);
  CHECK(e.sample_count() == 1);

  player_row bot = row;
  bot.id = 10;
  bot.is_bot = true;
  CHECK(e.apply_row(bot).outcome == update_outcome::no_op);
  CHECK_FALSE(e.player(10).participating);

  player_row negative = row;  // attributes must fit the generic model
  negative.attributes[2] = -1;
  CHECK(e.apply_row(negative).outcome == update_outcome::rejected);
  player_row nan = row;
  nan.mmr = std::nan("");
  CHECK(e.apply_row(nan).outcome == update_outcome::rejected);
  player_row zero = row;
  zero.id = 0;
  CHECK(e.apply_row(zero).outcome == update_outcome::rejected);
  CHECK(e.stats().rows_malformed == 3);
  // The factory's reason reaches the introspection.
  const auto reports = e.info().row_reports;
  REQUIRE_FALSE(reports.empty());
  CHECK(reports.front() == "player 9: attr2 is -1 (the generic model holds 0 to 4294967295)");
  CHECK(e.player(9).participating);  // the good row stayed

  o.scan_includes_bots = true;
  generic_engine with_bots(o);
  CHECK(with_bots.apply_row(bot).outcome == update_outcome::inserted);
}

// A profile whose factory makes one model per team of a player (several entries).
struct team_profile : generic_profile {
  static constexpr bool multiple_models_per_player = true;
  row_verdict make_models(const player_row& row, std::vector<generic_model>& out) const {
    if (row.attributes[0] == 0) return row_verdict::not_eligible;
    for (std::int64_t t = 0; t < row.attributes[0]; ++t)
      out.push_back(generic_model{row.id, static_cast<float>(row.mmr + 300 * t), {}});
    return row_verdict::eligible;
  }
  std::vector<std::unique_ptr<strategy<team_profile>>> make_strategies() const { return {}; }
};
static_assert(game_profile<team_profile>);

static options team_options() {
  auto o = small_options(100);
  o.mmr_bucket_count = 10;  // slices of 100
  o.bucket_initial_size = 10;
  o.allow_multiple_entries_per_player = true;
  return o;
}

TEST_CASE("multiple entries per player: one per bucket, removal explicit", "[update][multi]") {
  engine<team_profile> e(team_options());
  player_row row;
  row.id = 4;
  row.mmr = 50;
  row.attributes = {3, 0, 0, 0};  // three teams: 50, 350, 650
  CHECK(e.apply_row(row).outcome == update_outcome::inserted);
  CHECK(e.player(4).buckets.size() == 3);

  row.attributes[0] = 2;  // the 650 team is gone
  CHECK(e.apply_row(row).outcome == update_outcome::bucket_changed);
  CHECK(e.player(4).buckets.size() == 2);

  const generic_model same_bucket[] = {{4, 10, {}}, {4, 20, {}}};
  e.update(4, std::span<const generic_model>(same_bucket));
  CHECK(e.player(4).buckets.size() == 1);  // one entry per bucket, first wins
  CHECK(e.player(4).mmr == 10);

  CHECK(e.update(4, std::span<const generic_model>{}).outcome == update_outcome::no_op);
  CHECK(e.player(4).participating);  // removal by an empty update is ignored here
  CHECK(e.remove(4).outcome == update_outcome::removed);
  CHECK_FALSE(e.player(4).participating);

  row.attributes[0] = 0;  // not eligible: removed
  row.mmr = 50;
  row.attributes[0] = 2;
  e.apply_row(row);
  row.attributes[0] = 0;
  CHECK(e.apply_row(row).outcome == update_outcome::removed);
  CHECK_FALSE(e.player(4).participating);
}

TEST_CASE("multiple entries per player survive an enrolment and a restore", "[update][multi]") {
  engine<team_profile> e(team_options());
  const generic_model teams[] = {{4, 50, {}}, {4, 350, {}}, {4, 650, {}}};
  CHECK(e.enroll(std::span<const generic_model>(teams)).outcome == update_outcome::inserted);
  CHECK(e.player(4).buckets.size() == 3);
  CHECK(e.enroll(std::span<const generic_model>(teams)).outcome == update_outcome::updated);
  CHECK(e.player(4).buckets.size() == 3);

  engine<team_profile> restored(team_options());
  for (const auto& m : teams) restored.restore_entry(m);
  CHECK(restored.player(4).buckets.size() == 3);
  restored.restore_entry(teams[1]);  // the same entry twice stays one entry
  CHECK(restored.info().players == 3);
}

TEST_CASE("the membership filter never hides a cached player under churn", "[update]") {
  auto o = small_options(64);
  o.mmr_bucket_count = 4;
  o.bucket_initial_size = 16;
  generic_engine e(o);
  rng r(5);
  std::map<player_id, generic_model> truth;
  // Far more distinct players than the filter was sized for: it is rebuilt.
  for (int i = 0; i < 20000; ++i) {
    const player_id id = 1 + r.below(5000);
    const auto m = model(id, static_cast<float>(r.below(1000)));
    e.update(id, m);
    truth[id] = m;
  }
  // Every cached player is found again by an update (no duplicate is created).
  // A move may evict a player listed later, so each is checked as it comes.
  for (const auto& m : cached(e)) {
    if (!e.player(m.id()).participating) continue;
    auto moved = m;
    moved.mmr = static_cast<float>(std::fmod(m.mmr + 500, 1000));
    CHECK(e.update(m.id(), moved).outcome == update_outcome::bucket_changed);
  }
  check_cache(e, [&] {
    std::map<player_id, generic_model> t;
    for (const auto& m : cached(e)) t[m.id()] = m;
    return t;
  }());
}
