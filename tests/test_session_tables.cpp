// The session loop's own tables against the standard library: the id map
// against std::unordered_map over random operations (clustered, sequential
// and sparse ids, removals in bulk), the radix sort against std::stable_sort
// (negative and equal values, keys of few distinct digits).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "mm/engine/random.hpp"
#include "mm/session/id_map.hpp"
#include "mm/session/radix_sort.hpp"

using namespace mm::session;

namespace {

// Ids shaped like a server's: sequential from a base, in dense clusters, or
// anywhere in 64 bits; never 0.
std::uint64_t some_id(mm::rng& r, int shape) {
  switch (shape) {
    case 0:
      return 1 + r.below(5'000);
    case 1:
      return (r.below(8) << 40) + 1 + r.below(300);
    default:
      return r() | 1;
  }
}

void same(const id_map& m, const std::unordered_map<std::uint64_t, std::uint64_t>& expected,
          const std::vector<std::uint64_t>& probes) {
  REQUIRE(m.size() == expected.size());
  for (const auto& [k, v] : expected) {
    const std::uint64_t* got = m.find(k);
    REQUIRE(got);
    REQUIRE(*got == v);
  }
  for (std::uint64_t k : probes) REQUIRE(m.contains(k) == (expected.count(k) > 0));
}

}  // namespace

TEST_CASE("the id map holds what a std::unordered_map holds, over random operations",
          "[session][tables]") {
  mm::rng r(41);
  for (int round = 0; round < 300; ++round) {
    const int shape = round % 3;
    id_map m;
    std::unordered_map<std::uint64_t, std::uint64_t> expected;
    std::vector<std::uint64_t> probes;
    const int ops = 1 + static_cast<int>(r.below(3'000));
    for (int op = 0; op < ops; ++op) {
      const std::uint64_t k = some_id(r, shape);
      probes.push_back(k);
      switch (r.below(4)) {
        case 0:
        case 1: {
          const std::uint64_t v = r();
          m.set(k, v);
          expected[k] = v;
          break;
        }
        case 2:
          REQUIRE(m.erase(k) == (expected.erase(k) > 0));
          break;
        default: {
          // Many at once, some absent, some twice.
          std::vector<std::uint64_t> batch;
          for (std::uint64_t i = r.below(40); i-- > 0;) batch.push_back(some_id(r, shape));
          if (!expected.empty() && r.below(2) == 0) batch.push_back(expected.begin()->first);
          if (!batch.empty()) batch.push_back(batch.front());
          m.erase_many(batch);
          for (std::uint64_t b : batch) expected.erase(b);
        }
      }
    }
    same(m, expected, probes);
    // Emptied in bulk, then filled again: the same slots serve.
    std::vector<std::uint64_t> all;
    for (const auto& [k, v] : expected) all.push_back(k);
    m.erase_many(all);
    expected.clear();
    same(m, expected, probes);
    for (std::uint64_t k : probes) m.set(k, k + 1), expected[k] = k + 1;
    same(m, expected, probes);
  }
}

TEST_CASE("the radix sort orders as std::stable_sort does", "[session][tables]") {
  mm::rng r(42);
  struct item {
    double value;
    std::uint32_t position;
  };
  std::vector<item> items, scratch;
  for (int round = 0; round < 500; ++round) {
    items.clear();
    const std::size_t n = r.below(2'000);
    const int shape = round % 4;
    for (std::uint32_t i = 0; i < n; ++i) {
      double v = 0;
      if (shape == 0) v = (r.unit() - 0.5) * 1e6;           // both signs
      if (shape == 1) v = static_cast<double>(r.below(5));  // many equal
      if (shape == 2) v = 1000 + 250 * r.unit();            // one exponent
      if (shape == 3) v = r.below(2) ? -0.0 : 0.0;          // zeros of both signs
      items.push_back({v, i});
    }
    std::vector<item> expected = items;
    std::stable_sort(expected.begin(), expected.end(),
                     [](const item& a, const item& b) { return a.value < b.value; });
    radix_sort(items, scratch, [](const item& x) { return ordered_key(x.value); });
    REQUIRE(items.size() == expected.size());
    for (std::size_t i = 0; i < items.size(); ++i) {
      REQUIRE(items[i].value == expected[i].value);
      REQUIRE(items[i].position == expected[i].position);
    }
  }
}
