// Answers "might this player be cached anywhere?" without a per-player directory
// (which would cost more memory than the cache slots themselves). Updates for
// players the cache does not hold are the common case in a sampled cache, and
// without this filter each of them would probe every bucket.
//
// A register-blocked Bloom filter: each id sets four bits of one 64-bit word.
// Invariant: every id inserted since the last rebuild is present, so "no" is
// exact and "maybe" costs a probe of the buckets. Removals cannot clear bits,
// so the owner rebuilds it from the cache once it has seen more additions than
// it was sized for, which bounds the share of stale ids.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

#include "mm/engine/stable_hash.hpp"
#include "mm/engine/types.hpp"

namespace mm {

class membership_filter {
 public:
  // About 16 bits per id for `expected_ids`: a false "maybe" rate near 2%.
  explicit membership_filter(std::uint64_t expected_ids = 1024) { reset(expected_ids); }

  void reset(std::uint64_t expected_ids) {
    expected_ = std::max<std::uint64_t>(expected_ids, 64);
    words_.assign(std::bit_ceil(expected_ / 4), 0);
    mask_ = words_.size() - 1;
    added_ = 0;
  }

  void add(player_id id) {
    const std::uint64_t h = mix64(id ^ 0x5bd1e9955bd1e995ull);
    words_[h & mask_] |= bits_of(h);
    ++added_;
  }

  bool may_contain(player_id id) const {
    const std::uint64_t h = mix64(id ^ 0x5bd1e9955bd1e995ull);
    const std::uint64_t b = bits_of(h);
    return (words_[h & mask_] & b) == b;
  }

  // True once more ids were added than the filter was sized for.
  bool needs_rebuild() const { return added_ > expected_; }
  std::uint64_t expected_ids() const { return expected_; }
  std::size_t memory_bytes() const { return words_.size() * sizeof(std::uint64_t); }

 private:
  // Four bit positions from the hash's high bits (the low bits chose the word).
  static std::uint64_t bits_of(std::uint64_t h) {
    return (1ull << (h >> 58)) | (1ull << ((h >> 52) & 63)) | (1ull << ((h >> 46) & 63)) |
           (1ull << ((h >> 40) & 63));
  }

  std::vector<std::uint64_t> words_;
  std::uint64_t mask_ = 0, expected_ = 0, added_ = 0;
};

}  // namespace mm
