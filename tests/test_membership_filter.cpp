// The membership filter on its own: "no" must be exact for every id added
// since the last reset, whatever the ids look like; "maybe" must stay rare.
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "mm/engine/membership_filter.hpp"
#include "mm/engine/random.hpp"

using namespace mm;

namespace {
// Id sets shaped like production: sequential signups, a few dense clusters
// (ids handed out in blocks per region), and sparse 64-bit ids.
std::vector<player_id> ids_of_shape(int shape, std::size_t n, rng& r) {
  std::vector<player_id> out;
  for (std::size_t i = 0; i < n; ++i) {
    switch (shape) {
      case 0:
        out.push_back(1 + i);
        break;
      case 1:
        out.push_back((1 + i % 4) * 1'000'000'000ull + (i / 4));
        break;
      default:
        out.push_back(r() | 1);
        break;
    }
  }
  return out;
}
}  // namespace

TEST_CASE("membership filter: no false negatives, few false positives", "[filter]") {
  rng r(7);
  for (int shape = 0; shape < 3; ++shape) {
    CAPTURE(shape);
    const std::size_t n = 50'000;
    membership_filter f(n);
    const auto ids = ids_of_shape(shape, n, r);
    for (player_id id : ids) f.add(id);
    for (player_id id : ids) REQUIRE(f.may_contain(id));
    CHECK_FALSE(f.needs_rebuild());  // exactly as many as it was sized for
    // Ids never added: the false "maybe" rate stays near the documented 2%.
    std::size_t maybe = 0;
    const std::size_t probes = 100'000;
    for (std::size_t i = 0; i < probes; ++i) maybe += f.may_contain((r() | (1ull << 63)) ^ 0x1234);
    CHECK(static_cast<double>(maybe) / probes < 0.05);
  }
}

TEST_CASE("membership filter: sizing, rebuild signal and reset", "[filter]") {
  membership_filter f(1000);
  CHECK(f.expected_ids() == 1000);
  CHECK(f.memory_bytes() >= 1000 * 2);  // about 16 bits per expected id
  CHECK(f.memory_bytes() <= 1000 * 4);
  for (player_id id = 1; id <= 1000; ++id) f.add(id);
  CHECK_FALSE(f.needs_rebuild());
  f.add(1001);
  CHECK(f.needs_rebuild());  // more additions than it was sized for
  f.reset(1000);
  CHECK_FALSE(f.needs_rebuild());
  std::size_t still = 0;
  for (player_id id = 1; id <= 1001; ++id) still += f.may_contain(id);
  CHECK(still == 0);  // an empty filter says "no" to everyone
  membership_filter tiny(1);
  CHECK(tiny.expected_ids() == 64);  // never sized below one word per 4 ids of 64
}
