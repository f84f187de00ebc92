// The exclusion set on its own, against std::set: a short list is scanned,
// a long one hashed, and storage is reused from one query to the next.
#include <catch2/catch.hpp>
#include <cstdint>
#include <set>
#include <vector>

#include "mm/engine/exclusion_set.hpp"
#include "mm/engine/random.hpp"

using namespace mm;

TEST_CASE("exclusion set agrees with a std::set at every size", "[exclusion]") {
  rng r(11);
  exclusion_set ex;
  // Sizes around the switch from the linear scan to the hash table (16), and
  // ids clustered the way callers send them: recent opponents, close ids.
  for (std::size_t n : {0u, 1u, 15u, 16u, 17u, 100u, 5000u}) {
    CAPTURE(n);
    const player_id attacker = 1 + r.below(1000);
    std::vector<player_id> excluded;
    for (std::size_t i = 0; i < n; ++i)
      excluded.push_back(i % 3 == 0 ? r() : 500'000 + r.below(2 * n + 1));
    if (n > 2) excluded.push_back(excluded[0]);  // duplicates are fine
    ex.assign(attacker, excluded);
    const std::set<player_id> oracle(excluded.begin(), excluded.end());
    CHECK(ex.contains(attacker));
    for (player_id id : excluded) REQUIRE(ex.contains(id));
    for (int probe = 0; probe < 20'000; ++probe) {
      const player_id id = probe % 2 ? 500'000 + r.below(4 * n + 4) : r();
      REQUIRE(ex.contains(id) == (id == attacker || oracle.count(id) > 0));
    }
  }
}

TEST_CASE("exclusion set forgets the previous query's ids", "[exclusion]") {
  exclusion_set ex;
  std::vector<player_id> many;
  for (player_id id = 1000; id < 1100; ++id) many.push_back(id);
  ex.assign(1, many);
  CHECK(ex.contains(1050));
  ex.assign(2, std::vector<player_id>{7});
  CHECK_FALSE(ex.contains(1050));
  CHECK_FALSE(ex.contains(1));  // the old attacker too
  CHECK(ex.contains(2));
  CHECK(ex.contains(7));
  ex.assign(3, many);
  CHECK_FALSE(ex.contains(7));
  CHECK(ex.contains(1099));
}

TEST_CASE("exclusion set: id 0 in the list matches nothing stored", "[exclusion]") {
  exclusion_set ex;
  std::vector<player_id> with_zero(40, invalid_player);
  with_zero.push_back(99);
  ex.assign(5, with_zero);
  CHECK(ex.contains(99));
  CHECK_FALSE(ex.contains(98));
}
