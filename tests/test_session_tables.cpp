// The session loop's own tables against the standard library: the id map
// against std::unordered_map over random operations (clustered, sequential
// and sparse ids, removals in bulk), the radix sort against std::stable_sort
// (negative and equal values, keys of few distinct digits), and the lanes of
// the candidates' index against a scan of every ticket.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

#include "mm/engine/random.hpp"
#include "mm/session/id_map.hpp"
#include "mm/session/lane_index.hpp"
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
      if (r.below(500) == 0) {  // every key at once
        m.clear();
        expected.clear();
        continue;
      }
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

TEST_CASE("a seed's lane walks meet every ticket sharing a datacenter with it, nearest first",
          "[session][tables]") {
  mm::rng r(31);
  lane_index index;
  for (int run = 0; run < 3000; ++run) {
    // No policy, up to 64 datacenters (groups), or 100 (blocks of 64).
    const std::size_t words = run % 3, dcs = words == 0 ? 0 : words == 1 ? 12 + r.below(53) : 100;
    const std::size_t n = 1 + r.below(300);
    std::vector<std::vector<std::uint64_t>> mask(n, std::vector<std::uint64_t>(words, 0));
    std::vector<double> value(n);
    std::vector<bool> added(n, false), taken(n, false);
    index.reset(n, words);
    for (std::size_t i = 0; i < n; ++i) {
      value[i] = static_cast<double>(r.below(40));  // many equal values
      // Mostly near one of three regions of datacenters, in the ideal stage;
      // some anywhere (past it); some nowhere.
      const std::size_t region = r.below(3), kind = r.below(10);
      for (std::size_t d = 0; d < dcs; ++d) {
        const bool near = d * 3 / dcs == region && r.below(3) == 0;
        if ((kind < 7 && near) || (kind >= 7 && kind < 9 && r.below(4) == 0))
          mask[i][d / 64] |= std::uint64_t{1} << (d % 64);
      }
      if (r.below(8) == 0) continue;  // taken before the index (expired...)
      added[i] = true;
      index.add(i, value[i], r(), 1, mask[i].data(), kind < 7);
    }
    index.seal();
    for (std::size_t i = 0; i < n; ++i)
      if (added[i] && r.below(4) == 0) {
        index.take(i);
        taken[i] = true;
      }
    std::vector<lane_index::walk> walks;
    for (int s = 0; s < 5; ++s) {
      const std::size_t seed = r.below(n);
      index.walks_from(seed, value[seed], mask[seed].data(), walks);
      std::map<std::size_t, int> met;
      for (auto& w : walks) {
        double last = value[seed];
        for (std::size_t p = w.up; p < w.lane->size(); p = w.lane->alive_from(p + 1)) {
          const auto& e = (*w.lane)[p];
          REQUIRE(e.value >= last);  // outward: ascending values above
          last = e.value;
          if ((e.datacenters & w.datacenters) != 0 && e.ticket != seed) ++met[e.ticket];
        }
        last = value[seed];
        for (std::size_t p = w.down; p > 0; p = w.lane->alive_before(p - 1)) {
          const auto& e = (*w.lane)[p - 1];
          REQUIRE(e.value <= last);  // and descending below
          last = e.value;
          if ((e.datacenters & w.datacenters) != 0 && e.ticket != seed) ++met[e.ticket];
        }
      }
      for (std::size_t i = 0; i < n; ++i) {
        bool shares = words == 0;
        for (std::size_t w = 0; w < words; ++w)
          shares = shares || (mask[i][w] & mask[seed][w]) != 0;
        const bool expected = added[i] && !taken[i] && i != seed && shares;
        CHECK(met.count(i) == (expected ? 1u : 0u));
        if (expected && index.disjoint()) CHECK(met[i] == 1);  // once: one lane
      }
    }
  }
}

TEST_CASE("a running match's walks start where the index placed it, as a search would",
          "[session][tables]") {
  mm::rng r(37);
  lane_index index;
  for (int run = 0; run < 2000; ++run) {
    const std::size_t words = run % 3, dcs = words == 0 ? 0 : words == 1 ? 1 + r.below(64) : 100;
    const std::size_t n = r.below(200);
    index.reset(n, words);
    std::vector<std::uint64_t> mask(words);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t w = 0; w < words; ++w) mask[w] = 0;
      for (std::size_t d = 0; d < dcs; ++d)
        if (r.below(4) == 0) mask[d / 64] |= std::uint64_t{1} << (d % 64);
      index.add(i, static_cast<double>(r.below(30)), r(), 1, mask.data(), r.below(2) == 0);
    }
    index.seal();
    // Anchors below, among (often equal to a ticket's value) and above the
    // tickets' values, in no order.
    std::vector<double> anchors(r.below(40));
    for (double& v : anchors)
      v = static_cast<double>(r.below(34)) - 2 + (r.below(3) == 0 ? 0.5 : 0);
    index.place_anchors(anchors);
    for (std::size_t i = 0; i < n; ++i)
      if (r.below(3) == 0) index.take(i);  // the step's own takes, after the placing
    std::vector<lane_index::walk> placed, searched;
    for (std::size_t a = 0; a < anchors.size(); ++a) {
      for (std::size_t w = 0; w < words; ++w) mask[w] = 0;
      if (dcs > 0) {
        const std::size_t d = r.below(dcs);  // a match's one datacenter
        mask[d / 64] |= std::uint64_t{1} << (d % 64);
      }
      index.prefetch_anchor(a, dcs > 0 ? r.below(dcs) : 0);
      index.walks_from(n, anchors[a], mask.data(), placed, a);
      index.walks_from(n, anchors[a], mask.data(), searched);
      REQUIRE(placed.size() == searched.size());
      for (std::size_t k = 0; k < placed.size(); ++k) {
        CHECK(placed[k].lane == searched[k].lane);
        CHECK(placed[k].datacenters == searched[k].datacenters);
        CHECK(placed[k].up == searched[k].up);
        CHECK(placed[k].down == searched[k].down);
      }
    }
  }
}
