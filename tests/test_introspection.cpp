#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace mm;
using namespace mm::test;

TEST_CASE("info counts what the buckets hold", "[introspection]") {
  auto o = small_options(1000);
  o.mmr_bucket_count = 10;
  generic_engine e(o);
  for (player_id id = 1; id <= 50; ++id) e.update(id, model(id, static_cast<float>(id * 10)));
  const auto info = e.info();
  CHECK(info.name == o.name);
  std::uint64_t players = 0, capacity = 0;
  for (const auto& b : info.buckets) {
    players += b.count;
    capacity += b.capacity;
    CHECK(b.fill == Approx(static_cast<double>(b.count) / b.capacity));
    CHECK(b.labels.size() == 1);
    CHECK(b.mmr_high - b.mmr_low == Approx(100));
  }
  CHECK(players == info.players);
  CHECK(capacity == info.capacity);
  CHECK(info.players == cached(e).size());
  CHECK(info.bucket_count == info.buckets.size());
  CHECK(info.overall_fill == Approx(static_cast<double>(players) / capacity));
  CHECK(info.memory_bytes >= capacity * sizeof(generic_model));
  CHECK_FALSE(info.enough_data_for_rebalance);
}

TEST_CASE("player info: participation, MMR, percentile, buckets", "[introspection]") {
  auto o = small_options(10'000);
  o.bucket_initial_size = 5000;
  generic_engine e(o);
  for (player_id id = 1; id <= 100; ++id) e.update(id, model(id, static_cast<float>(id)));
  const auto all = cached(e);
  const auto p = e.player(50);
  if (!p.participating) return;  // evicted by a collision: nothing to compare
  CHECK(p.mmr == 50);
  const auto below = std::count_if(all.begin(), all.end(),
                                   [](const generic_model& m) { return m.mmr <= 50; });
  CHECK(p.percentile == Approx(static_cast<double>(below) / all.size()));
  REQUIRE(p.buckets.size() == 1);
  CHECK(e.inspect_bucket(p.buckets[0], 0, 10'000).size() > 0);
  CHECK_FALSE(e.player(100'000).participating);
  CHECK_FALSE(e.player(0).participating);
}

TEST_CASE("inspect bucket pages by MMR descending, top N matches a full sort",
          "[introspection]") {
  auto o = small_options(10'000);
  o.mmr_bucket_count = 1;
  o.bucket_initial_size = 5000;
  generic_engine e(o);
  rng r(3);
  for (player_id id = 1; id <= 1000; ++id) e.update(id, model(id, static_cast<float>(r.below(500))));
  auto all = cached(e);
  std::sort(all.begin(), all.end(), [](auto& a, auto& b) {
    return a.mmr != b.mmr ? a.mmr > b.mmr : a.id() < b.id();
  });
  std::vector<generic_model> paged;
  for (std::uint32_t off = 0;; off += 37) {
    auto page = e.inspect_bucket(0, off, 37);
    if (page.empty()) break;
    CHECK(page.size() <= 37);
    paged.insert(paged.end(), page.begin(), page.end());
  }
  REQUIRE(paged.size() == all.size());
  for (std::size_t i = 0; i < all.size(); ++i) CHECK(paged[i].id() == all[i].id());
  CHECK(e.inspect_bucket(5, 0, 10).empty());  // unknown bucket

  const auto top = e.top_by_mmr(100);
  REQUIRE(top.size() == 100);
  for (std::size_t i = 0; i < top.size(); ++i) CHECK(top[i].id() == all[i].id());
  CHECK(e.top_by_mmr(100'000).size() == all.size());
}

TEST_CASE("the snapshot sample is proportional to bucket counts", "[introspection]") {
  auto o = small_options(100'000);
  o.mmr_bucket_count = 4;  // slices of 250
  o.bucket_initial_size = 50'000;
  generic_engine e(o);
  // Three quarters of the players in slice 0, a quarter in slice 3.
  for (player_id id = 1; id <= 3000; ++id) e.update(id, model(id, 10));
  for (player_id id = 3001; id <= 4000; ++id) e.update(id, model(id, 900));
  const auto info = e.info();
  const auto sample = e.proportional_sample(400);
  CHECK(sample.size() <= 400);
  CHECK(sample.size() >= 398);
  const auto low = std::count_if(sample.begin(), sample.end(),
                                 [](const generic_model& m) { return m.mmr < 500; });
  double low_share = 0;
  for (const auto& b : info.buckets)
    if (b.mmr_low < 500) low_share += static_cast<double>(b.count) / info.players;
  CHECK(static_cast<double>(low) / sample.size() == Approx(low_share).margin(0.01));
  CHECK(e.proportional_sample(1'000'000).size() == info.players);
  CHECK(e.proportional_sample(0).empty());
}

TEST_CASE("clear empties the cache and keeps sizing", "[introspection]") {
  auto o = small_options(1000);
  generic_engine e(o);
  for (int i = 0; i < 2000; ++i) e.add_sample(model(1, static_cast<float>(i % 500)));
  e.rebalance(7);
  for (player_id id = 1; id <= 100; ++id) e.update(id, model(id, 100));
  e.clear();
  CHECK(e.info().players == 0);
  CHECK(e.last_rebalance_unix_ms() == 7);
  CHECK_FALSE(e.sizing().empty());
  CHECK(e.update(1, model(1, 100)).outcome == update_outcome::inserted);
}
