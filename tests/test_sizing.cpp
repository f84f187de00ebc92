#include <catch2/catch.hpp>
#include <cmath>

#include "mm/engine/synthetic_players.hpp"
#include "test_support.hpp"

using namespace mm;
using namespace mm::test;

TEST_CASE("sample FIFO keeps the newest samples and knows when it has enough", "[sizing]") {
  sample_fifo f(100, 1);
  label_tuple t;
  t.extra_count = 1;
  for (int i = 0; i < 10; ++i) {
    t.extra[0] = static_cast<label_value>(i);
    f.push(static_cast<float>(i), t);
  }
  CHECK_FALSE(f.enough_data());  // needs more than min(100 / 10, 1000) = 10
  f.push(10, t);
  CHECK(f.enough_data());
  for (int i = 11; i < 250; ++i) {
    t.extra[0] = static_cast<label_value>(i);
    f.push(static_cast<float>(i), t);
  }
  CHECK(f.size() == 100);
  const auto col = f.extra_column(0);
  REQUIRE(col.size() == 100);
  CHECK(col.front() == 150);  // oldest kept
  CHECK(col.back() == 249);
  for (float m : f.mmrs()) CHECK(m >= 150);
}

TEST_CASE("a skewed population with far outliers: capacities follow the density", "[sizing]") {
  options o;
  o.player_cache_size = 100'000;
  o.random_seed = 3;
  generic_engine e(o);
  synthetic_population pop;  // normal(1500, 300) plus 0.1% at 10^6
  rng r(4);
  const auto rows = make_players(pop, 200'000, 1, r);
  for (const auto& row : rows) e.apply_row(row);
  const auto report = e.rebalance(1000);
  REQUIRE(report.performed);
  CHECK(report.mmr_range_changed);
  for (const auto& row : rows) e.apply_row(row);  // buckets created at their sized capacity

  // The range ignores the outliers: roughly the 0.5% / 99.5% percentiles of
  // the normal part (mean -/+ 2.58 sd), nowhere near 10^6.
  CHECK(e.mmr().low() == Approx(1500 - 2.576 * 300).margin(30));
  CHECK(e.mmr().high() == Approx(1500 + 2.576 * 300).margin(40));

  // Capacity per MMR slice is proportional to the normal density there.
  const auto info = e.info();
  std::vector<double> cap(o.mmr_bucket_count, 0);
  for (const auto& b : info.buckets) {
    const auto i = static_cast<std::size_t>(((b.mmr_low + b.mmr_high) / 2 - e.mmr().low()) /
                                            e.mmr().slice_width());
    cap[std::min<std::size_t>(i, cap.size() - 1)] += b.capacity;
  }
  const double width = e.mmr().slice_width();
  for (std::size_t i = 1; i + 1 < cap.size(); ++i) {
    const double mid = e.mmr().slice_low(static_cast<std::uint32_t>(i)) + width / 2;
    const double z = (mid - 1500) / 300;
    const double expected =
        o.player_cache_size * width * std::exp(-z * z / 2) / (300 * std::sqrt(2 * M_PI));
    if (expected < 1000) continue;  // small slices are dominated by min sizes and noise
    INFO("slice " << i << " mid " << mid);
    CHECK(cap[i] == Approx(expected).epsilon(0.1));
  }
  // The sum of capacities stays within the cache size, except for min sizes.
  CHECK(info.capacity <= o.player_cache_size + info.bucket_count * o.bucket_min_size);
}

TEST_CASE("the MMR range shrinks as well as grows", "[sizing]") {
  auto o = small_options(10'000);
  o.buckets_rebalance_sample_count = 5000;
  o.mmr_bucket_count = 50;
  generic_engine e(o);
  rng r(6);
  for (int i = 0; i < 5000; ++i) e.add_sample(model(1, static_cast<float>(r.below(10'000))));
  e.rebalance(1);
  CHECK(e.mmr().low() < 100);
  CHECK(e.mmr().high() > 9900);
  for (int i = 0; i < 5000; ++i) e.add_sample(model(1, 4000 + static_cast<float>(r.below(1000))));
  e.rebalance(2);
  CHECK(e.mmr().low() > 3900);
  CHECK(e.mmr().high() < 5100);
}

TEST_CASE("rebalancing needs enough samples", "[sizing]") {
  generic_engine e(small_options());
  for (int i = 0; i < 10; ++i) e.add_sample(model(1, 10));
  const auto r = e.rebalance(1);
  CHECK_FALSE(r.performed);
  CHECK_FALSE(r.reason.empty());
  CHECK(e.last_rebalance_unix_ms() == 0);
}

TEST_CASE("a second rebalance on the same samples changes nothing", "[sizing]") {
  auto o = small_options(20'000);
  o.mmr_bucket_count = 20;
  generic_engine e(o);
  synthetic_population pop;
  pop.outlier_share = 0;
  rng r(8);
  const auto rows = make_players(pop, 20'000, 1, r);
  for (const auto& row : rows) e.apply_row(row);
  e.rebalance(1);
  for (const auto& row : rows) e.apply_row(row);
  const auto players = e.info().players;
  const auto second = e.rebalance(2);
  REQUIRE(second.performed);
  CHECK_FALSE(second.mmr_range_changed);
  CHECK(second.buckets_resized == 0);
  CHECK(second.players_lost == 0);
  CHECK(e.info().players == players);
  CHECK(e.last_rebalance_unix_ms() == 2);
}

TEST_CASE("empty buckets are pruned by a rebalance, new ones get their sized capacity",
          "[sizing]") {
  auto o = small_options(1000);
  o.mmr_bucket_count = 10;
  o.bucket_initial_size = 50;
  generic_engine e(o);
  for (int i = 0; i < 2000; ++i) e.add_sample(model(1, static_cast<float>(i % 1000)));
  e.update(1, model(1, 5));
  e.update(2, model(2, 995));
  e.remove(2);
  CHECK(e.info().bucket_count == 2);
  REQUIRE(e.rebalance(1).performed);
  CHECK(e.info().bucket_count == 1);
  // Samples spread evenly over 10 slices: a new bucket gets about 10% of the cache.
  e.update(3, model(3, 990));
  const auto info = e.info();
  for (const auto& b : info.buckets)
    if (b.count == 1 && b.mmr_low > 800) CHECK(b.capacity == Approx(100).margin(5));
}

TEST_CASE("the buckets are sized again early while the samples grow tenfold", "[sizing]") {
  auto o = small_options();
  o.buckets_rebalance_sample_count = 100'000;
  generic_engine e(o);
  auto sample = [&](int n) {
    for (int i = 0; i < n; ++i) e.add_sample(model(1, static_cast<float>(i % 1000)));
  };
  sample(1000);
  CHECK_FALSE(e.rebalance_due_early());  // needs more than 1,000
  sample(1);
  CHECK(e.rebalance_due_early());  // never sized: due at once
  REQUIRE(e.rebalance(1).performed);
  CHECK_FALSE(e.rebalance_due_early());
  sample(10 * 1001 - 1001 - 1);
  CHECK_FALSE(e.rebalance_due_early());
  sample(1);
  CHECK(e.rebalance_due_early());  // ten times the samples of the sizing in force
  REQUIRE(e.rebalance(2).performed);
  CHECK(e.sizing().sample_count == 10 * 1001);
  CHECK_FALSE(e.rebalance_due_early());
}

// Labels without bound (a soft distinct attribute with a value per player, as a
// game that buckets by guild might have): the capacity never passes the limit.
TEST_CASE("total capacity stays within the limit whatever the labels", "[sizing]") {
  generic_profile_config c;
  c.attributes = {{"guild", attribute_rule::none, 0, attribute_bucketing::distinct_soft, 1}};
  auto o = small_options(5000);
  o.bucket_min_size = 20;
  o.bucket_initial_size = 200;
  o.mmr_bucket_count = 20;
  o.buckets_rebalance_sample_count = 50'000;
  generic_engine e(o, generic_profile(c));
  REQUIRE(e.capacity_limit() == 5500);
  rng r(17);
  std::uint64_t most = 0;
  for (int round = 0; round < 6; ++round) {
    for (int i = 0; i < 20'000; ++i) {
      const auto id = 1 + r.below(1'000'000);
      // Skewed: half the players in 10 big guilds, the rest in guilds of a few.
      const auto guild = r.below(2) ? r.below(10) : 10 + id;
      e.update(id, model(id, static_cast<float>(1000 + r.below(1000)),
                         {static_cast<std::uint32_t>(guild), 0, 0, 0}));
      most = std::max(most, e.pool().capacity());
    }
    e.rebalance(round + 1);
    most = std::max(most, e.pool().capacity());
    CHECK(e.pool().capacity() <= e.capacity_limit());
  }
  CHECK(most <= e.capacity_limit());
  CHECK(e.stats().inserts_refused_capacity > 0);
  // The big guilds are sized and hold players; the plan fits the cache size.
  CHECK(capacity_plan(e.sizing(), o).total() <= o.player_cache_size);
  bool big_guild_cached = false;
  e.for_each_player([&](const generic_model& m) { big_guild_cached |= m.attributes[0] == 3; });
  CHECK(big_guild_cached);
}

TEST_CASE("the capacity plan: shares of the cache over minimum sizes and never over the cache",
          "[sizing]") {
  options o;
  o.player_cache_size = 1000;
  o.bucket_min_size = 20;
  sizing_model s;
  auto tuple = [](std::uint32_t i) {
    label_tuple t;
    t.mmr_index = i;
    return t;
  };
  s.ratios = {{tuple(0), 0.5}, {tuple(1), 0.3}, {tuple(2), 0.2}};
  capacity_plan plain(s, o);
  CHECK(plain.capacity_of(tuple(0)) == 500);
  CHECK(plain.capacity_of(tuple(2)) == 200);
  CHECK(plain.capacity_of(tuple(3)) == 0);  // not sampled: no plan

  // Minimum sizes push the sum over: the part above the minimum shrinks.
  s.ratios.clear();
  s.ratios[tuple(0)] = 0.6;
  for (std::uint32_t i = 1; i <= 40; ++i) s.ratios[tuple(i)] = 0.01;
  capacity_plan squeezed(s, o);
  CHECK(squeezed.total() <= 1000);
  CHECK(squeezed.capacity_of(tuple(7)) == 20);
  CHECK(squeezed.capacity_of(tuple(0)) > 150);

  // Not every tuple fits at the minimum: the floor drops to half the cache
  // spread evenly (5 here), so every tuple keeps a bucket and the other half
  // goes by share.
  s.ratios.clear();
  for (std::uint32_t i = 0; i < 100; ++i) s.ratios[tuple(i)] = (i < 10 ? 0.05 : 0.5 / 90);
  CHECK(capacity_plan::planned_floor(o, 100) == 5);
  capacity_plan crowded(s, o);
  CHECK(crowded.size() == 100);
  CHECK(crowded.total() <= 1000);
  for (std::uint32_t i = 0; i < 100; ++i) CHECK(crowded.capacity_of(tuple(i)) >= 5);
  CHECK(crowded.capacity_of(tuple(0)) > 4 * crowded.capacity_of(tuple(50)));

  // Not even one slot each fits: the most sampled tuples get one.
  s.ratios.clear();
  for (std::uint32_t i = 0; i < 3000; ++i) s.ratios[tuple(i)] = 1.0 / 3000;
  capacity_plan packed(s, o);
  CHECK(packed.size() == 1000);
  CHECK(packed.total() == 1000);
}

TEST_CASE("every MMR range of a crowded cache keeps a bucket: its attackers are matched",
          "[sizing]") {
  // A cache too small for bucket_min_size in every tuple (4 regions x 100 MMR
  // slices x 20 > 4,000), as the simulator's default day has. Attackers in
  // the thin tails of the MMR spread must still find opponents in the cache.
  auto o = small_options(4'000);
  o.bucket_min_size = 20;
  o.bucket_initial_size = 200;
  o.mmr_bucket_count = 100;
  o.buckets_rebalance_sample_count = 50'000;
  o.enable_fake_opponents = true;
  generic_engine e(o, generic_profile(demo_profile_config()));
  rng r(5);
  const auto rows = make_players(synthetic_population{}, 20'000, 1, r);
  for (const auto& row : rows) e.apply_row(row);
  e.rebalance(1);
  for (const auto& row : rows) e.apply_row(row);
  // The 1% lowest and highest MMRs of the normal part (not the 0.1% at 10^6,
  // outliers by design): each has players of its region nearby.
  std::vector<player_row> sorted;
  for (const auto& row : rows)
    if (row.mmr < 10'000) sorted.push_back(row);
  std::sort(sorted.begin(), sorted.end(), [](auto& a, auto& b) { return a.mmr < b.mmr; });
  std::uint64_t fakes = 0, asked = 0;
  for (std::size_t i = 0; i < sorted.size(); i += 1) {
    if (i >= sorted.size() / 100 && i < sorted.size() - sorted.size() / 100) continue;
    match_request<generic_query> req;
    const auto region = static_cast<std::uint32_t>(sorted[i].attributes[0]);
    req.query = generic_query{sorted[i].id, static_cast<float>(sorted[i].mmr), {region, 0, 0, 0}};
    req.num_retries = 9;
    ++asked;
    fakes += e.find_match(req).type != match_type::success;
  }
  CHECK(asked > 300);
  CHECK(fakes <= asked / 100);
}

TEST_CASE("a rebalance accounts for every player: after = before - lost", "[sizing]") {
  auto o = small_options(20'000);
  o.mmr_bucket_count = 20;
  generic_engine e(o, generic_profile(demo_profile_config()));
  rng r(21);
  const auto rows = make_players(synthetic_population{}, 30'000, 1, r);
  for (const auto& row : rows) e.apply_row(row);
  for (int i = 0; i < 3; ++i) {
    const auto before = e.info().players;
    const auto rep = e.rebalance(i + 1);
    REQUIRE(rep.performed);
    CHECK(rep.players_before == before);
    CHECK(rep.players_after == before - rep.players_lost);
    CHECK(e.info().players == rep.players_after);
    for (std::size_t k = 0; k < rows.size(); k += 3) e.apply_row(rows[(k + i) % rows.size()]);
  }
}
