// The two-lane walk on its own, over a hand-built pool: every player of the
// ordered buckets exactly once, buckets entered in the order's order, lanes
// merged in proportion to the players each has left.
#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <vector>

#include "mm/engine/bucket_pool.hpp"
#include "mm/engine/generic_profile.hpp"

using namespace mm;

namespace {
using pool_t = bucket_pool<generic_model, id_of_model<generic_profile>>;

label_tuple slice(std::uint32_t m) {
  label_tuple t;
  t.mmr_index = m;
  return t;
}

// Buckets 0..n-1 by MMR slice, bucket m holding counts[m] players with ids
// m * 100000 + 1, + 2, ...
pool_t make_pool(const std::vector<std::uint32_t>& capacities,
                 const std::vector<std::uint32_t>& counts, rng& r) {
  pool_t pool;
  for (std::uint32_t m = 0; m < capacities.size(); ++m) {
    const auto b = pool.create(slice(m), capacities[m], r);
    player_id next = m * 100'000ull + 1;
    while (pool.at(b).slots.count() < counts[m]) {
      pool.at(b).slots.insert(generic_model{next, static_cast<float>(m), {}});
      ++next;
    }
  }
  return pool;
}
}  // namespace

TEST_CASE("two-lane walk: every player of the order once, buckets in order", "[walk]") {
  rng r(3);
  const std::vector<std::uint32_t> caps = {64, 256, 32, 512, 128, 64};
  const std::vector<std::uint32_t> counts = {10, 200, 1, 300, 0, 40};
  pool_t pool = make_pool(caps, counts, r);
  std::vector<std::pair<std::uint64_t, std::uint32_t>> scratch;
  for (int rep = 0; rep < 20; ++rep) {
    bucket_order<pool_t> order(pool, slice(2), rep % 2 == 0, {}, r, scratch);
    two_lane_walk<pool_t> walk(pool, order, r);
    std::set<player_id> seen;
    std::vector<std::uint32_t> first_seen_order;  // buckets in the order they were entered
    std::uint32_t bucket = 0;
    while (const generic_model* m = walk.next<generic_model>(bucket)) {
      REQUIRE(seen.insert(m->id()).second);  // never twice
      REQUIRE(m->id() / 100'000 == bucket);  // the bucket index it reports is its own
      if (std::find(first_seen_order.begin(), first_seen_order.end(), bucket) ==
          first_seen_order.end())
        first_seen_order.push_back(bucket);
    }
    CHECK(seen.size() == 10 + 200 + 1 + 300 + 40);
    // The query's own slice and its neighbours are among the first two or
    // three buckets entered (two lanes start at once); slice 5, the farthest
    // non-empty one, is entered last.
    REQUIRE(first_seen_order.size() == 5);
    CHECK(std::find(first_seen_order.begin(), first_seen_order.begin() + 3, 2u) !=
          first_seen_order.begin() + 3);
    CHECK(first_seen_order.back() == 5);
  }
}

TEST_CASE("two-lane walk: the first players seen are a near-uniform sample of both lanes",
          "[walk]") {
  // A bucket of 12 players beside one of 1,200: strict alternation would show
  // each of the small bucket's players about 100 times as often as the
  // others; the proportional merge shows both about equally.
  rng r(5);
  pool_t pool = make_pool({32, 2048}, {12, 1200}, r);
  std::vector<std::pair<std::uint64_t, std::uint32_t>> scratch;
  std::map<std::uint32_t, std::uint64_t> firsts_by_bucket;
  const int walks = 20'000;
  for (int rep = 0; rep < walks; ++rep) {
    bucket_order<pool_t> order(pool, slice(0), true, {}, r, scratch);
    two_lane_walk<pool_t> walk(pool, order, r);
    std::uint32_t bucket = 0;
    for (int k = 0; k < 10; ++k) {
      if (!walk.next<generic_model>(bucket)) break;
      ++firsts_by_bucket[bucket];
    }
  }
  const double small_share = static_cast<double>(firsts_by_bucket[0]) / (walks * 10.0);
  CHECK(small_share == Approx(12.0 / 1212.0).margin(0.004));
}
