#include <catch2/catch.hpp>
#include <set>

#include "mm/engine/bucket_pool.hpp"
#include "mm/engine/stable_hash.hpp"
#include "mm/strategies/attribute_strategy.hpp"
#include "mm/strategies/mmr_strategy.hpp"
#include "test_support.hpp"

using namespace mm;
using namespace mm::test;

TEST_CASE("stable hashes have fixed values", "[strategy][hash]") {
  // Published FNV-1a 64 test vectors.
  STATIC_REQUIRE(fnv1a64("") == 0xcbf29ce484222325ull);
  STATIC_REQUIRE(fnv1a64("a") == 0xaf63dc4c8601ec8cull);
  STATIC_REQUIRE(fnv1a64("foobar") == 0x85944171f73967e8ull);
  // The label tuple hash must not change between builds: pin one value.
  label_tuple t;
  t.mmr_index = 7;
  t.extra_count = 2;
  t.extra = {11, 13};
  CHECK(label_tuple_hash{}(t) == label_tuple_hash{}(t));
  CHECK(label_tuple_hash{}(t) == 0xebddf05bc6bd1e54ull);
}

TEST_CASE("MMR strategy slices and clamps", "[strategy][mmr]") {
  mmr_strategy s(0, 1000, 10);
  CHECK(s.index_of(0) == 0);
  CHECK(s.index_of(99.9) == 0);
  CHECK(s.index_of(100) == 1);
  CHECK(s.index_of(999.9) == 9);
  CHECK(s.index_of(1000) == 9);
  CHECK(s.index_of(-5e9) == 0);
  CHECK(s.index_of(5e9) == 9);
  CHECK(s.index_of(std::nan("")) == 0);
  CHECK(s.slice_low(3) == Approx(300));
  CHECK(s.position_in_slice(350) == Approx(0.5));
  CHECK_THROWS_AS(mmr_strategy(5, 5, 10), std::invalid_argument);
  CHECK_THROWS_AS(mmr_strategy(0, 1, 0), std::invalid_argument);
  mmr_strategy one(0, 1, 1);
  CHECK(one.index_of(123) == 0);
}

TEST_CASE("MMR strategy state round trip and corrupt state", "[strategy][mmr]") {
  mmr_strategy a(10, 20, 5);
  mmr_strategy b(0, 1000, 5);
  b.load_state(a.save_state());
  CHECK(b.low() == 10);
  CHECK(b.high() == 20);
  const std::string bytes = a.save_state();
  for (std::size_t n = 0; n < bytes.size(); ++n)
    CHECK_THROWS_AS(b.load_state(bytes.substr(0, n)), std::runtime_error);
  CHECK_THROWS_AS(b.load_state(std::string(64, '\xff')), std::runtime_error);
  CHECK(b.low() == 10);  // a failed load changes nothing
}

TEST_CASE("MMR range from percentiles ignores outliers and has hysteresis", "[strategy][mmr]") {
  mmr_strategy s(0, 1000, 100);
  std::vector<float> v;
  for (int i = 0; i < 10000; ++i) v.push_back(static_cast<float>(i % 1000));
  for (int i = 0; i < 5; ++i) v.push_back(1e9f);
  auto u = s.rebalance(v, 0.001, 0.999);
  CHECK_FALSE(u.changed);  // within half a slice of [0, 1000]
  for (auto& x : v) x = x * 2 + 5000;
  u = s.rebalance(v, 0.001, 0.999);
  CHECK(u.changed);
  CHECK(s.low() == Approx(5000).margin(5));
  CHECK(s.high() == Approx(6998).margin(5));
  std::vector<float> same(100, 42.0f);
  s.rebalance(same, 0.001, 0.999);
  CHECK(s.low() < 42);
  CHECK(s.high() > 42);
}

TEST_CASE("attribute strategies: distinct and ranged labels", "[strategy]") {
  attribute_strategy<generic_profile> region({"region", 0, label_kind::distinct, true, 1});
  attribute_strategy<generic_profile> league({"league", 1, label_kind::ranged, false, 10});
  const auto m = model(1, 0, {3, 25, 0, 0});
  CHECK(region.label_of(m) == 3);
  CHECK(region.hard());
  CHECK(league.label_of(m) == 2);
  CHECK(league.label_of(query(1, 0, {0, 9, 0, 0})) == 0);
  CHECK(league.describe(2) == "league∈[20,30)");
  CHECK_THROWS_AS(attribute_strategy<generic_profile>({"x", 0, label_kind::ranged, false, 0}),
                  std::invalid_argument);
  CHECK_THROWS_AS(attribute_strategy<generic_profile>({"", 0, label_kind::distinct, false, 1}),
                  std::invalid_argument);
}

TEST_CASE("label distance", "[strategy]") {
  CHECK(label_distance(label_kind::distinct, false, 1, 1) == 0u);
  CHECK(label_distance(label_kind::distinct, false, 1, 2) == 2u);
  CHECK_FALSE(label_distance(label_kind::distinct, true, 1, 2).has_value());
  CHECK(label_distance(label_kind::ranged, false, 1, 4) == 3u);
  CHECK(label_distance(label_kind::ranged, false, static_cast<label_value>(-2), 1) == 3u);
  CHECK_FALSE(label_distance(label_kind::ranged, true, 1, 4).has_value());
}

TEST_CASE("bucket order: exact, nearer neighbour, then by distance, hard excluded",
          "[strategy][order]") {
  using pool_t = bucket_pool<generic_model, id_of_model<generic_profile>>;
  pool_t pool;
  rng r(1);
  auto tuple = [](std::uint32_t m, label_value region, label_value tier) {
    label_tuple t;
    t.mmr_index = m;
    t.extra_count = 2;
    t.extra = {region, tier};
    return t;
  };
  // region: distinct hard; tier: ranged soft.
  const strategy_traits traits[] = {{label_kind::distinct, true}, {label_kind::ranged, false}};
  for (std::uint32_t m = 0; m < 6; ++m)
    for (label_value region : {0u, 1u})
      for (label_value tier : {0u, 1u, 3u})
        if (!pool.find(tuple(m, region, tier))) pool.create(tuple(m, region, tier), 4u, r);

  std::vector<std::pair<std::uint64_t, std::uint32_t>> scratch;
  std::set<std::uint32_t> third_choices;  // what comes after the sure ones
  for (int rep = 0; rep < 40; ++rep) {
    bucket_order<pool_t> order(pool, tuple(3, 0, 1), /*upper_first=*/true, traits, r, scratch);
    std::vector<label_tuple> seen;
    while (auto b = order.next()) seen.push_back(pool.at(*b).labels);
    REQUIRE(seen.size() == 18);  // the 18 buckets of region 0
    CHECK(seen[0] == tuple(3, 0, 1));
    CHECK(seen[1] == tuple(4, 0, 1));
    CHECK(seen[2] == tuple(2, 0, 1));
    std::uint64_t last = 0;
    for (std::size_t i = 3; i < seen.size(); ++i) {
      CHECK(seen[i].extra[0] == 0);
      const auto dm = seen[i].mmr_index > 3 ? seen[i].mmr_index - 3 : 3 - seen[i].mmr_index;
      const auto dt = seen[i].extra[1] > 1 ? seen[i].extra[1] - 1 : 1 - seen[i].extra[1];
      CHECK(dm + dt >= last);
      last = dm + dt;
    }
    // seen[3] is the only bucket at distance 1; five share distance 2.
    third_choices.insert(seen[4].mmr_index * 10 + static_cast<std::uint32_t>(seen[4].extra[1]));
  }
  CHECK(third_choices.size() > 1);  // ties break at random

  bucket_order<pool_t> lower(pool, tuple(3, 1, 0), /*upper_first=*/false, traits, r, scratch);
  CHECK(pool.at(*lower.next()).labels == tuple(3, 1, 0));
  CHECK(pool.at(*lower.next()).labels == tuple(2, 1, 0));
  CHECK(pool.at(*lower.next()).labels == tuple(4, 1, 0));
}

TEST_CASE("engine labels use the profile's strategies in order", "[strategy]") {
  generic_profile_config c;
  c.attributes = {{"region", attribute_rule::hard_equal, 0, attribute_bucketing::distinct_hard, 1},
                  {"guild", attribute_rule::must_differ, 0, attribute_bucketing::none, 1},
                  {"tier", attribute_rule::none, 0, attribute_bucketing::ranged, 100}};
  generic_engine e(small_options(), generic_profile(c));
  const auto t = e.labels_of(model(1, 250, {2, 7, 350, 0}));
  CHECK(t.mmr_index == 2);
  REQUIRE(t.extra_count == 2);
  CHECK(t.extra[0] == 2);
  CHECK(t.extra[1] == 3);
  CHECK(e.describe(t) == std::vector<std::string>{"mmr#2", "region=2", "tier∈[300,400)"});
  const auto states = e.strategy_states();
  REQUIRE(states.size() == 3);
  CHECK(states[0].first == "mmr");
  CHECK(e.restore_strategy_state("mmr", states[0].second));
  CHECK_FALSE(e.restore_strategy_state("nope", ""));
}
