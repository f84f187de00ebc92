// The identity of a bucket: one label per strategy, the MMR strategy first.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "mm/engine/stable_hash.hpp"
#include "mm/engine/types.hpp"

namespace mm {

// Game strategies beyond the MMR one. A fixed bound keeps tuples inline (no
// allocation per query); raise it if a game really needs more.
inline constexpr std::size_t max_extra_strategies = 6;

struct label_tuple {
  std::uint32_t mmr_index = 0;
  std::uint32_t extra_count = 0;
  std::array<label_value, max_extra_strategies> extra{};

  bool operator==(const label_tuple& o) const {
    if (mmr_index != o.mmr_index || extra_count != o.extra_count) return false;
    for (std::uint32_t i = 0; i < extra_count; ++i)
      if (extra[i] != o.extra[i]) return false;
    return true;
  }

  // A total order (MMR index, then the labels), for output that must not depend
  // on hash order.
  bool operator<(const label_tuple& o) const {
    if (mmr_index != o.mmr_index) return mmr_index < o.mmr_index;
    if (extra_count != o.extra_count) return extra_count < o.extra_count;
    for (std::uint32_t i = 0; i < extra_count; ++i)
      if (extra[i] != o.extra[i]) return extra[i] < o.extra[i];
    return false;
  }

  label_tuple with_mmr_index(std::uint32_t i) const {
    label_tuple t = *this;
    t.mmr_index = i;
    return t;
  }
};

// Stable across runs (no std::hash), so a tuple's hash may be persisted.
struct label_tuple_hash {
  std::size_t operator()(const label_tuple& t) const {
    std::uint64_t h = mix64(t.mmr_index + 0x9e3779b97f4a7c15ull);
    for (std::uint32_t i = 0; i < t.extra_count; ++i) h = mix64(h ^ t.extra[i]);
    return static_cast<std::size_t>(h);
  }
};

}  // namespace mm
