// The ids a query must never offer (the attacker and the caller's exclusions).
// A short list is scanned linearly; a long one is loaded into an open-addressing
// table, so a million excluded ids cost one linear build, not a million compares
// per candidate. Storage is reused across queries.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <span>
#include <vector>

#include "mm/engine/stable_hash.hpp"
#include "mm/engine/types.hpp"

namespace mm {

class exclusion_set {
 public:
  void assign(player_id attacker, std::span<const player_id> excluded) {
    attacker_ = attacker;
    if (excluded.size() <= linear_limit) {
      linear_.assign(excluded.begin(), excluded.end());
      hashed_ = false;
      return;
    }
    linear_.clear();
    hashed_ = true;
    // Power-of-two table at most half full: short probe sequences.
    const std::size_t size = std::bit_ceil(excluded.size() * 2);
    mask_ = size - 1;
    table_.assign(size, invalid_player);
    // A large table does not fit the CPU caches: request the slot of the id a
    // few places ahead, so the build streams instead of waiting on each miss.
    constexpr std::size_t ahead = 16;
    for (std::size_t k = 0; k < excluded.size(); ++k) {
      if (k + ahead < excluded.size())
        __builtin_prefetch(&table_[mix64(excluded[k + ahead]) & mask_], 1);
      const player_id id = excluded[k];
      if (id == invalid_player) continue;  // never a stored player anyway
      std::size_t i = mix64(id) & mask_;
      while (table_[i] != invalid_player && table_[i] != id) i = (i + 1) & mask_;
      table_[i] = id;
    }
  }

  bool contains(player_id id) const {
    if (id == attacker_) return true;
    if (!hashed_) return std::find(linear_.begin(), linear_.end(), id) != linear_.end();
    for (std::size_t i = mix64(id) & mask_;; i = (i + 1) & mask_) {
      if (table_[i] == id) return true;
      if (table_[i] == invalid_player) return false;
    }
  }

 private:
  static constexpr std::size_t linear_limit = 16;
  player_id attacker_ = invalid_player;
  bool hashed_ = false;
  std::vector<player_id> linear_;
  std::vector<player_id> table_;
  std::size_t mask_ = 0;
};

}  // namespace mm
