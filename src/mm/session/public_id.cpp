#include "mm/session/public_id.hpp"

#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "mm/engine/error.hpp"

namespace mm::session {

namespace {

constexpr std::uint64_t rotl(std::uint64_t x, int b) {
  return (x << b) | (x >> (64 - b));
}

struct sip_state {
  std::uint64_t v0, v1, v2, v3;
  void round() {
    v0 += v1;
    v1 = rotl(v1, 13);
    v1 ^= v0;
    v0 = rotl(v0, 32);
    v2 += v3;
    v3 = rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = rotl(v1, 17);
    v1 ^= v2;
    v2 = rotl(v2, 32);
  }
};

constexpr int feistel_rounds = 8;

// Round `r`'s function of a 32-bit half.
std::uint32_t round_function(const id_key& key, int r, std::uint32_t half) {
  return static_cast<std::uint32_t>(siphash24(key, (static_cast<std::uint64_t>(r) << 32) | half));
}

}  // namespace

std::uint64_t siphash24(const id_key& key, std::uint64_t word) {
  // One message word of 8 bytes, then the final block holding the length (8).
  sip_state s{key[0] ^ 0x736f6d6570736575ull, key[1] ^ 0x646f72616e646f6dull,
              key[0] ^ 0x6c7967656e657261ull, key[1] ^ 0x7465646279746573ull};
  for (const std::uint64_t m : {word, std::uint64_t{8} << 56}) {
    s.v3 ^= m;
    s.round();
    s.round();
    s.v0 ^= m;
  }
  s.v2 ^= 0xff;
  for (int i = 0; i < 4; ++i) s.round();
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

std::uint64_t id_permutation::encode(std::uint64_t serial) const {
  auto left = static_cast<std::uint32_t>(serial >> 32);
  auto right = static_cast<std::uint32_t>(serial);
  for (int r = 0; r < feistel_rounds; ++r) {
    const std::uint32_t next = left ^ round_function(key_, r, right);
    left = right;
    right = next;
  }
  return (static_cast<std::uint64_t>(left) << 32) | right;
}

std::uint64_t id_permutation::decode(std::uint64_t id) const {
  auto left = static_cast<std::uint32_t>(id >> 32);
  auto right = static_cast<std::uint32_t>(id);
  for (int r = feistel_rounds; r-- > 0;) {
    const std::uint32_t prev = right ^ round_function(key_, r, left);
    right = left;
    left = prev;
  }
  return (static_cast<std::uint64_t>(left) << 32) | right;
}

std::string format_public_id(std::uint64_t id) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, id >>= 4) out[static_cast<std::size_t>(i)] = digits[id & 15];
  return out;
}

std::optional<std::uint64_t> parse_public_id(std::string_view text) {
  if (text.size() != 16) return std::nullopt;
  std::uint64_t id = 0;
  for (const char c : text) {
    int v = -1;
    if (c >= '0' && c <= '9') v = c - '0';
    if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
    if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
    if (v < 0) return std::nullopt;
    id = (id << 4) | static_cast<std::uint64_t>(v);
  }
  return id;
}

id_key random_id_key() {
  id_key key{};
  auto* bytes = reinterpret_cast<unsigned char*>(key.data());
  std::size_t got = 0;
  while (got < sizeof(key)) {
    const ssize_t n = getrandom(bytes + got, sizeof(key) - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw mm::error(errc::system_failure, std::string("getrandom: ") + std::strerror(errno));
    got += static_cast<std::size_t>(n);
  }
  return key;
}

id_source::id_source(id_key key, std::function<std::uint64_t()> reserve_generation,
                     std::uint32_t partition)
    : permutation_(key),
      reserve_(std::move(reserve_generation)),
      partition_bits_(static_cast<std::uint64_t>(partition % max_id_partitions)
                      << id_counter_bits) {
  std::lock_guard<std::mutex> lock(refill_);
  const std::uint64_t base = reserve_() << id_sequence_bits | partition_bits_;
  next_serial_ = base | 1;  // counter 0 is never used first: no serial is 0
  end_serial_ = base + (std::uint64_t{1} << id_counter_bits);
}

std::uint64_t id_source::next() {
  for (;;) {
    const std::uint64_t serial = next_serial_.fetch_add(1);
    // A serial drawn past the end of a range carries the next partition's
    // bits (or the next generation's): it may be compared with the end of
    // the range a refill has just set, so its partition is checked too.
    constexpr std::uint64_t partition_mask = std::uint64_t{max_id_partitions - 1}
                                             << id_counter_bits;
    if (serial < end_serial_.load() && (serial & partition_mask) == partition_bits_)
      return permutation_.encode(serial);
    // The range is used up: one caller takes the next; the others retry.
    std::lock_guard<std::mutex> lock(refill_);
    if (next_serial_.load() < end_serial_.load()) continue;
    const std::uint64_t base = reserve_() << id_sequence_bits | partition_bits_;
    end_serial_ = base + (std::uint64_t{1} << id_counter_bits);
    next_serial_ = base;
  }
}

}  // namespace mm::session
