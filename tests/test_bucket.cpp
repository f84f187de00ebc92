#include <algorithm>
#include <catch2/catch.hpp>
#include <set>
#include <unordered_map>
#include <vector>

#include "mm/engine/bucket.hpp"

namespace {
struct item {
  mm::player_id id = 0;
  int value = 0;
};
struct item_id {
  mm::player_id operator()(const item& i) const { return i.id; }
};
using test_bucket = mm::bucket<item, item_id>;
}  // namespace

TEST_CASE("bucket insert fills, updates in place and evicts on collision", "[bucket]") {
  mm::rng r(1);
  test_bucket b(64, r);
  REQUIRE(b.capacity() == 64);
  REQUIRE(b.count() == 0);

  CHECK(b.insert({5, 1}).what == mm::bucket_insert::inserted);
  CHECK(b.count() == 1);
  CHECK(b.insert({5, 2}).what == mm::bucket_insert::updated);
  CHECK(b.count() == 1);
  REQUIRE(b.find(5) != nullptr);
  CHECK(b.find(5)->value == 2);

  // Find another id that lands in the same slot: inserting it evicts id 5.
  mm::player_id other = 6;
  while (b.slot_of(other) != b.slot_of(5)) ++other;
  auto ins = b.insert({other, 3});
  CHECK(ins.what == mm::bucket_insert::replaced);
  CHECK(ins.evicted == 5);
  CHECK(b.count() == 1);
  CHECK(b.find(5) == nullptr);
  CHECK(b.find(other)->value == 3);
}

TEST_CASE("bucket matches a model of one slot per id", "[bucket]") {
  // Oracle: a map slot -> last id inserted there.
  mm::rng r(2);
  test_bucket b(101, r);
  std::unordered_map<std::uint32_t, mm::player_id> oracle;
  mm::rng ids(3);
  for (int i = 0; i < 2000; ++i) {
    const mm::player_id id = 1 + ids.below(500);
    if (ids.below(4) == 0) {
      const bool present = b.contains(id);
      CHECK(b.erase(id) == present);
      if (present) oracle.erase(b.slot_of(id));
    } else {
      b.insert({id, i});
      oracle[b.slot_of(id)] = id;
    }
    REQUIRE(b.count() == oracle.size());
  }
  for (auto& [slot, id] : oracle) CHECK(b.find(id) != nullptr);
}

TEST_CASE("bucket id 0 is never found and capacity 0 is refused", "[bucket]") {
  mm::rng r(4);
  test_bucket b(1, r);
  CHECK(b.find(0) == nullptr);
  CHECK_FALSE(b.erase(0));
  CHECK_THROWS_AS(test_bucket(0, r), std::invalid_argument);
}

TEST_CASE("bucket of capacity 1 holds the last player", "[bucket]") {
  mm::rng r(5);
  test_bucket b(1, r);
  b.insert({1, 0});
  auto ins = b.insert({2, 0});
  CHECK(ins.what == mm::bucket_insert::replaced);
  CHECK(ins.evicted == 1);
  auto w = b.random_walk(r);
  REQUIRE(w.next() != nullptr);
  CHECK(w.next() == nullptr);
}

TEST_CASE("a random walk visits every player exactly once", "[bucket]") {
  mm::rng r(6);
  for (std::uint32_t cap : {1u, 2u, 3u, 7u, 64u, 97u, 1000u}) {
    test_bucket b(cap, r);
    for (mm::player_id id = 1; id <= cap; ++id) b.insert({id, 0});
    for (int rep = 0; rep < 20; ++rep) {
      std::multiset<mm::player_id> seen;
      auto w = b.random_walk(r);
      while (const item* i = w.next()) seen.insert(i->id);
      REQUIRE(seen.size() == b.count());
      REQUIRE(std::set<mm::player_id>(seen.begin(), seen.end()).size() == b.count());
    }
  }
}

TEST_CASE("random walks do not favour any slot", "[bucket]") {
  // Every player should come first about equally often over many walks.
  mm::rng r(7);
  test_bucket b(50, r);
  for (mm::player_id id = 1; id <= 400; ++id) b.insert({id, 0});
  std::unordered_map<mm::player_id, int> first;
  const int walks = 40000;
  for (int i = 0; i < walks; ++i) {
    auto w = b.random_walk(r);
    ++first[w.next()->id];
  }
  const double expected = static_cast<double>(walks) / b.count();
  for (auto& [id, n] : first) {
    INFO("player " << id);
    CHECK(n > expected * 0.75);
    CHECK(n < expected * 1.25);
  }
  CHECK(first.size() == b.count());
}

TEST_CASE("bucket fill, density and thresholds", "[bucket]") {
  mm::rng r(8);
  test_bucket b(10, r);
  mm::player_id id = 1;
  while (b.count() < 5) b.insert({id++, 0});
  CHECK(b.fill() == Approx(0.5));
  CHECK(b.density() == Approx(0.5));
  CHECK(mm::threshold_reached(mm::fill_threshold::low_population, b.fill()));
  CHECK_FALSE(mm::threshold_reached(mm::fill_threshold::high_population, b.fill()));
  while (b.count() < 8) b.insert({id++, 0});
  CHECK(mm::threshold_reached(mm::fill_threshold::high_population, b.fill()));
  CHECK(b.density() == Approx(1.0));
  CHECK(mm::threshold_reached(mm::fill_threshold::always, 0.0));
  CHECK_FALSE(mm::threshold_reached(mm::fill_threshold::never, 1.0));
  CHECK_FALSE(mm::threshold_reached(mm::fill_threshold::low_population, 0.2));
  test_bucket empty(10, r);
  CHECK(empty.density() == 0.0);
}

TEST_CASE("resize keeps players unless they collide, and counts the lost", "[bucket]") {
  mm::rng r(9);
  test_bucket b(1000, r);
  for (mm::player_id id = 1; id <= 300; ++id) b.insert({id, static_cast<int>(id)});
  const auto before = b.count();
  const auto lost = b.resize(5000, r);
  CHECK(b.capacity() == 5000);
  CHECK(b.count() + lost == before);
  b.for_each([&](const item& i) { CHECK(i.value == static_cast<int>(i.id)); });
  const auto before_shrink = b.count();
  const auto lost_shrink = b.resize(10, r);
  CHECK(b.count() <= 10);
  CHECK(b.count() + lost_shrink == before_shrink);
}

namespace {
// An empty value that is not zero bytes, and one that is not trivially copyable.
struct marked {
  mm::player_id id = 0;
  int mark = 7;
};
struct named {
  mm::player_id id = 0;
  std::vector<int> tags = {1, 2};
};
}  // namespace

TEST_CASE("slot arrays start as Model{} however the model is made", "[bucket]") {
  mm::slot_array<item> zero(100'000);
  CHECK(zero.size() == 100'000);
  CHECK(std::all_of(zero.begin(), zero.end(),
                    [](const item& i) { return i.id == 0 && i.value == 0; }));
  zero[99'999] = {5, 6};
  mm::slot_array<item> copy = zero;
  CHECK(copy[99'999].value == 6);
  copy[99'999].value = 8;
  CHECK(zero[99'999].value == 6);

  mm::slot_array<marked> marks(1000);
  CHECK(std::all_of(marks.begin(), marks.end(), [](const marked& m) { return m.mark == 7; }));
  mm::slot_array<named> names(1000);
  CHECK(std::all_of(names.begin(), names.end(), [](const named& n) {
    return n.tags == std::vector<int>{1, 2};
  }));
  names[3].tags.push_back(3);
  mm::slot_array<named> moved = std::move(names);
  CHECK(moved[3].tags.size() == 3);
  CHECK(mm::slot_array<item>(0).size() == 0);
}

TEST_CASE("a cleared bucket is empty and takes players again", "[bucket]") {
  mm::rng r(4);
  test_bucket b(4096, r);
  for (mm::player_id id = 1; id <= 1000; ++id) b.insert({id, 1});
  const auto held = b.count();
  REQUIRE(held > 800);
  b.clear();
  CHECK(b.count() == 0);
  CHECK(b.capacity() == 4096);
  std::size_t seen = 0;
  b.for_each([&](const item&) { ++seen; });
  CHECK(seen == 0);
  for (mm::player_id id = 1; id <= 1000; ++id) CHECK(b.find(id) == nullptr);
  for (mm::player_id id = 1; id <= 1000; ++id) b.insert({id, 2});
  CHECK(b.count() == held);  // the same seed: the same slots, the same collisions
}
