// Public ids of tickets and matches: unique for the life of a deployment and
// unpredictable to whoever sees some of them.
//
// A public id is a keyed permutation of a serial number. Serials are never
// repeated: a serial is (generation << 40) | sequence, where each generation
// is taken once from the store (a counter incremented in a transaction at
// every start, and again whenever a source uses up its 2^32 counters), so two runs
// or two nodes sharing a database never draw from the same range, and a run
// killed with SIGKILL simply leaves the rest of its range unused. The
// permutation is a 64-bit Feistel network whose rounds are SipHash-2-4 under
// the deployment's 128-bit key (kept in the store, drawn from the system's
// random source at the first start): a bijection, so distinct serials give
// distinct ids, and without the key neither the next id nor any other valid
// one can be told from those seen.
//
// On the wire an id is 16 lowercase hexadecimal characters (a JSON number
// would lose bits above 2^53 in JavaScript).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace mm::session {

using id_key = std::array<std::uint64_t, 2>;

// SipHash-2-4 of one 64-bit word under `key`.
std::uint64_t siphash24(const id_key& key, std::uint64_t word);

// A keyed permutation of the 64-bit numbers.
class id_permutation {
 public:
  explicit id_permutation(id_key key) : key_(key) {}
  std::uint64_t encode(std::uint64_t serial) const;
  std::uint64_t decode(std::uint64_t id) const;
  const id_key& key() const { return key_; }

 private:
  id_key key_;
};

// The wire form: 16 lowercase hex digits. `parse_public_id` takes exactly
// that (upper case too) and nothing else.
std::string format_public_id(std::uint64_t id);
std::optional<std::uint64_t> parse_public_id(std::string_view text);

// 128 bits from the system's random source (getrandom).
id_key random_id_key();

inline constexpr unsigned id_sequence_bits = 40;
// A sequence is the partition that drew it (8 bits) and a counter (32 bits):
// serial = generation << 40 | partition << 32 | counter. Whoever holds the
// key can tell from an id which session partition made its ticket.
inline constexpr unsigned id_counter_bits = 32;
inline constexpr std::uint32_t max_id_partitions = 256;

inline std::uint32_t partition_of_serial(std::uint64_t serial) {
  return static_cast<std::uint32_t>(serial >> id_counter_bits) & (max_id_partitions - 1);
}

// Hands out public ids, thread-safe. `reserve_generation` returns a
// generation number never returned before (from the store; 1 and up) and
// is called at construction and whenever a generation's counters run out.
// `partition` (below max_id_partitions) is put in every serial it makes.
class id_source {
 public:
  id_source(id_key key, std::function<std::uint64_t()> reserve_generation,
            std::uint32_t partition = 0);
  id_source(const id_source&) = delete;
  id_source& operator=(const id_source&) = delete;

  std::uint64_t next();
  const id_permutation& permutation() const { return permutation_; }

 private:
  id_permutation permutation_;
  std::function<std::uint64_t()> reserve_;
  std::uint64_t partition_bits_;  // partition << id_counter_bits
  std::mutex refill_;
  std::atomic<std::uint64_t> next_serial_{0};  // the next serial to hand out
  std::atomic<std::uint64_t> end_serial_{0};   // the first serial past the partition's range
};

}  // namespace mm::session
