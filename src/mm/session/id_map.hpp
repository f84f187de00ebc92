// A hash map from nonzero 64-bit ids to 64-bit values, for a session queue's
// lookups (ticket id -> its place, player id -> its ticket).
//
// One flat array of slots, open addressing with linear probing, at most half
// full; an erase shifts the slots after it back, so there are no tombstones
// and a lookup stops at the first empty slot. Key 0 marks an empty slot:
// ticket ids and player ids are never 0 (the queue refuses 0).
//
// Player ids come from clients, so the hash is keyed per map with a random
// seed: a client cannot choose ids that fall into one run of slots.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "mm/session/radix_sort.hpp"

namespace mm::session {

class id_map {
 public:
  id_map() : seed_(std::random_device{}() | (std::uint64_t{std::random_device{}()} << 32)) {}

  std::size_t size() const { return size_; }

  // The value of `key`, or null.
  const std::uint64_t* find(std::uint64_t key) const {
    if (slots_.empty()) return nullptr;
    for (std::size_t i = home(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return &slots_[i].value;
      if (slots_[i].key == 0) return nullptr;
    }
  }
  bool contains(std::uint64_t key) const { return find(key) != nullptr; }

  // Removes each of `keys` that is there. In the order of their slots, so
  // that many removals walk the array once instead of missing the cache
  // once each.
  void erase_many(const std::vector<std::uint64_t>& keys) {
    if (slots_.empty()) return;
    by_slot_.clear();
    for (std::uint64_t k : keys) by_slot_.push_back({home(k), k});
    radix_sort(by_slot_, scratch_, [](const slot& s) { return s.key; });
    for (const slot& s : by_slot_) erase(s.value);
  }

  // Removes every key, keeping the slots' memory.
  void clear() {
    std::fill(slots_.begin(), slots_.end(), slot{});
    size_ = 0;
  }

  // `key` (not 0) now maps to `value`.
  void set(std::uint64_t key, std::uint64_t value) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    std::size_t i = home(key);
    for (; slots_[i].key != 0; i = (i + 1) & mask_)
      if (slots_[i].key == key) {
        slots_[i].value = value;
        return;
      }
    slots_[i] = {key, value};
    ++size_;
  }

  // Removes `key`; false when it was not there.
  bool erase(std::uint64_t key) {
    if (slots_.empty()) return false;
    std::size_t hole = home(key);
    for (; slots_[hole].key != key; hole = (hole + 1) & mask_)
      if (slots_[hole].key == 0) return false;
    // Each later slot of the run moves into the hole when its home is not
    // between the hole and it (cyclically): so every key stays reachable
    // from its home without crossing an empty slot.
    for (std::size_t i = (hole + 1) & mask_; slots_[i].key != 0; i = (i + 1) & mask_) {
      const std::size_t h = home(slots_[i].key);
      if (((i - h) & mask_) >= ((i - hole) & mask_)) {
        slots_[hole] = slots_[i];
        hole = i;
      }
    }
    slots_[hole] = {};
    --size_;
    return true;
  }

 private:
  struct slot {
    std::uint64_t key = 0, value = 0;
  };

  std::size_t home(std::uint64_t key) const {
    // splitmix64's finalizer of the seeded key.
    std::uint64_t z = key ^ seed_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return static_cast<std::size_t>(z ^ (z >> 31)) & mask_;
  }

  void grow() {
    std::vector<slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 16 : old.size() * 2, slot{});
    mask_ = slots_.size() - 1;
    size_ = 0;
    for (const slot& s : old)
      if (s.key != 0) set(s.key, s.value);
  }

  std::uint64_t seed_;
  std::vector<slot> slots_;
  std::size_t mask_ = 0, size_ = 0;
  std::vector<slot> by_slot_, scratch_;  // erase_many(): {home, key}
};

}  // namespace mm::session
