// The running matches' owners and bounds (backfill_owners.hpp) against a
// brute-force oracle over random registrations, stops and reads by several
// credentials and an admin; and the change rate per credential.
#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "mm/actors/backfill_owners.hpp"
#include "mm/engine/random.hpp"

using namespace mm;
using namespace mm::actors;

TEST_CASE("backfill owners: a credential acts on its own matches only, within its bounds",
          "[session][backfill][security]") {
  const std::vector<std::string> credentials = {"game-a", "game-b", "game-c"};
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    rng r(seed);
    const std::size_t cap = 1 + r.below(4);
    backfill_owners owners({cap, 100, 200});
    std::map<std::string, std::pair<std::string, bool>> oracle;  // id -> (credential, pending)
    for (int step = 0; step < 200; ++step) {
      const std::string id = "m" + std::to_string(r.below(12));
      const std::string who = r.below(6) == 0 ? std::string() : credentials[r.below(3)];
      std::size_t held = 0;
      for (const auto& [_, o] : oracle) held += o.first == who ? 1 : 0;
      switch (r.below(4)) {
        case 0: {  // register
          const auto why = owners.refusal(id, who);
          const bool refuse = oracle.count(id) || (!who.empty() && held >= cap);
          REQUIRE(why.has_value() == refuse);
          if (!refuse) {
            const bool pending = r.below(3) == 0;
            owners.add(id, 0, who, pending);
            oracle[id] = {who, pending};
          }
          break;
        }
        case 1:  // written
          owners.written(id);
          if (oracle.count(id)) oracle[id].second = false;
          break;
        case 2:  // stop
          owners.forget(id);
          oracle.erase(id);
          break;
        default: {  // act on it
          const auto* o = owners.owned(id, who);
          const auto it = oracle.find(id);
          const bool may =
              it != oracle.end() && !it->second.second && (who.empty() || it->second.first == who);
          REQUIRE((o != nullptr) == may);
          if (o) CHECK(o->credential == it->second.first);
        }
      }
      for (const auto& c : credentials) {
        std::size_t n = 0;
        for (const auto& [_, o] : oracle) n += o.first == c ? 1 : 0;
        REQUIRE(owners.held(c) == n);
      }
      REQUIRE(owners.size() == oracle.size());
    }
  }
}

TEST_CASE("backfill owners: changes a second per credential, an admin's unbounded",
          "[session][backfill]") {
  backfill_owners owners({10, 10, 20});
  const auto t0 = request_bucket::time_point{} + std::chrono::hours(1);
  int a = 0;
  while (owners.take("game-a", t0)) ++a;
  CHECK(a == 20);                          // the burst
  CHECK(owners.take("game-b", t0));        // another credential's bucket is its own
  CHECK_FALSE(owners.take("game-a", t0));  // still empty
  CHECK(owners.take("game-a", t0 + std::chrono::milliseconds(100)));  // 10 a second
  for (int i = 0; i < 1000; ++i) REQUIRE(owners.take("", t0));
  CHECK_THAT(owners.too_fast().what(), Catch::Matchers::Contains("more than 10 changes a second"));
}
