// Public ids (mm/session/public_id.hpp): the keyed permutation is a
// bijection, different keys give unrelated ids, the wire form is exact, and
// sources on different generations never meet; the claims of multi-queue
// tickets (mm/session/ticket_claims.hpp): the first claim wins, all or none.
#include <catch2/catch.hpp>
#include <memory>
#include <set>
#include <thread>
#include <unordered_set>

#include "mm/engine/random.hpp"
#include "mm/session/partitions.hpp"
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

TEST_CASE("an id tells the key's holder which partition made it, and no two sources collide",
          "[session][ids]") {
  std::uint64_t generation = 0;
  const auto next_generation = [&generation] { return ++generation; };
  const id_key key = random_id_key();
  std::vector<std::unique_ptr<id_source>> sources;
  for (const std::uint32_t p : {0u, 1u, 3u, 200u, 255u})
    sources.push_back(std::make_unique<id_source>(key, next_generation, p));
  const std::uint32_t partitions[] = {0, 1, 3, 200, 255};
  std::unordered_set<std::uint64_t> ids;
  for (int i = 0; i < 20'000; ++i)
    for (std::size_t s = 0; s < sources.size(); ++s) {
      const auto id = sources[s]->next();
      REQUIRE(ids.insert(id).second);
      const auto serial = sources[s]->permutation().decode(id);
      REQUIRE(partition_of_serial(serial) == partitions[s]);
      REQUIRE(serial >> id_sequence_bits == s + 1);  // its own generation
    }
  // Partition 0's serials are laid out as before partitions existed.
  id_source plain(key, next_generation);
  CHECK(plain.permutation().decode(plain.next()) == (generation << id_sequence_bits | 1));
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

TEST_CASE("a queue's partition is a stable hash of its name, spread evenly", "[session][ids]") {
  // Fixed values: a partition's queues must not move between builds.
  static_assert(queue_partition("duel", 1) == 0);
  static_assert(queue_partition("duel", 8) == 3);
  static_assert(queue_partition("ranked-eu", 16) == 0);
  CHECK(partition_resource(0, 1) == "sessions");
  CHECK(partition_resource(3, 8) == "sessions-3");
  std::vector<int> count(8);
  for (int i = 0; i < 8000; ++i) ++count[queue_partition("queue-" + std::to_string(i), 8)];
  for (const int c : count) {
    CHECK(c > 850);
    CHECK(c < 1150);
  }
}
