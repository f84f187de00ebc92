// Public ids (mm/session/public_id.hpp): the keyed permutation is a
// bijection, different keys give unrelated ids, the wire form is exact, and
// sources on different generations never meet; the claims of multi-queue
// tickets (mm/session/ticket_claims.hpp): the first claim wins, all or none.
#include <catch2/catch.hpp>
#include <set>
#include <thread>
#include <unordered_set>

#include "mm/engine/random.hpp"
#include "mm/session/public_id.hpp"
#include "mm/session/ticket_claims.hpp"

using namespace mm::session;

TEST_CASE("the id permutation is a bijection that decodes what it encodes", "[session][ids]") {
  const id_permutation p({0x0123456789abcdefull, 0xfedcba9876543210ull});
  mm::rng r(5);
  for (int i = 0; i < 100'000; ++i) {
    const std::uint64_t x = r();
    CHECK(p.decode(p.encode(x)) == x);
  }
  // A million serials as a generation hands them out: a million distinct ids.
  std::unordered_set<std::uint64_t> seen;
  for (std::uint64_t s = (std::uint64_t{7} << id_sequence_bits) | 1; seen.size() < 1'000'000; ++s)
    REQUIRE(seen.insert(p.encode(s)).second);
  // Another key: other ids for the same serials, with no bit in common beyond chance.
  const id_permutation q({1, 2});
  int same = 0;
  for (std::uint64_t s = 1; s <= 1000; ++s) same += p.encode(s) == q.encode(s) ? 1 : 0;
  CHECK(same == 0);
  // Neighbouring serials differ in about half their bits.
  double bits = 0;
  for (std::uint64_t s = 1; s <= 10'000; ++s)
    bits += __builtin_popcountll(p.encode(s) ^ p.encode(s + 1));
  CHECK(bits / 10'000 == Approx(32).margin(1));
}

TEST_CASE("an id on the wire is 16 hex digits, and nothing else reads as one", "[session][ids]") {
  CHECK(format_public_id(0) == "0000000000000000");
  CHECK(format_public_id(0xfedcba9876543210ull) == "fedcba9876543210");
  CHECK(parse_public_id("fedcba9876543210") == 0xfedcba9876543210ull);
  CHECK(parse_public_id("FEDCBA9876543210") == 0xfedcba9876543210ull);
  for (const char* bad : {"", "12345", "fedcba98765432100", "fedcba987654321g", "-edcba9876543210",
                          " edcba9876543210", "0x00000000000001"})
    CHECK_FALSE(parse_public_id(bad));
}

TEST_CASE("id sources on different generations never hand out the same id", "[session][ids]") {
  std::uint64_t generation = 0;
  const auto next_generation = [&generation] { return ++generation; };
  const id_key key = random_id_key();
  id_source a(key, next_generation), b(key, next_generation);
  std::unordered_set<std::uint64_t> ids;
  for (int i = 0; i < 50'000; ++i) {
    REQUIRE(ids.insert(a.next()).second);
    REQUIRE(ids.insert(b.next()).second);
  }
  CHECK(generation == 2);
  // From two threads at once: still unique.
  id_source c(key, next_generation);
  std::vector<std::uint64_t> left, right;
  std::thread t([&] {
    for (int i = 0; i < 20'000; ++i) left.push_back(c.next());
  });
  for (int i = 0; i < 20'000; ++i) right.push_back(c.next());
  t.join();
  for (const auto id : left) REQUIRE(ids.insert(id).second);
  for (const auto id : right) REQUIRE(ids.insert(id).second);
  CHECK(random_id_key() != random_id_key());
}

TEST_CASE("a shared ticket is claimed once, all of a match's or none", "[session][ids]") {
  ticket_claims claims;
  const ticket_id ab[] = {1, 2};
  CHECK(claims.try_claim(ab).empty());
  const ticket_id bc[] = {2, 3};
  CHECK(claims.try_claim(bc) == std::vector<ticket_id>{2});
  const ticket_id c[] = {3};
  CHECK(claims.try_claim(c).empty());  // 3 was not taken by the refused claim
  claims.release(2);
  const ticket_id b[] = {2};
  CHECK(claims.try_claim(b).empty());
  CHECK(claims.size() == 3);
}
