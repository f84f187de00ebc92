// A replace-on-insert, fixed-capacity hash table of player models (docs/design.md, Buckets).
//
// Invariants:
//  - a slot holds either nothing (its model's id is 0) or one player, and that
//    player's slot is slot_of(id): every id has exactly one possible place;
//  - count_ equals the number of occupied slots;
//  - memory is capacity * sizeof(Model) and never grows by inserting.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "mm/engine/random.hpp"
#include "mm/engine/slot_array.hpp"
#include "mm/engine/stable_hash.hpp"
#include "mm/engine/types.hpp"

namespace mm {

struct bucket_insert {
  enum kind : std::uint8_t { inserted, updated, replaced } what;
  player_id evicted = invalid_player;  // set when what == replaced
};

// IdOf is a function object returning the player_id of a Model. A
// value-initialised Model must have id 0 (an empty slot).
template <class Model, class IdOf>
class bucket {
 public:
  bucket(std::uint32_t capacity, rng& r) : seed_(r()) { reset(capacity, r); }
  // With a given slot seed: a bucket rebuilt from a snapshot puts every player
  // back in the slot it had, so a restore loses nobody to collisions.
  bucket(std::uint32_t capacity, std::uint64_t seed, rng& r) : seed_(seed) { reset(capacity, r); }

  std::uint32_t capacity() const { return static_cast<std::uint32_t>(slots_.size()); }
  std::uint32_t count() const { return count_; }
  double fill() const { return static_cast<double>(count_) / capacity(); }
  // Clamp((fill - 0.2) / 0.6, 0, 1): 0 while sparse, 1 once 80% full (docs/design.md, Buckets).
  double density() const { return std::clamp((fill() - 0.2) / 0.6, 0.0, 1.0); }
  std::uint64_t seed() const { return seed_; }

  std::uint32_t slot_of(player_id id) const {
    return static_cast<std::uint32_t>(reduce_range(mix64(id ^ seed_), slots_.size()));
  }

  // Puts m in its slot. Whoever held the slot before is evicted unless it is the
  // same player, which is updated in place.
  bucket_insert insert(const Model& m) {
    Model& slot = slots_[slot_of(IdOf{}(m))];
    const player_id held = IdOf{}(slot);
    slot = m;
    if (held == invalid_player) {
      ++count_;
      return {bucket_insert::inserted};
    }
    if (held == IdOf{}(m)) return {bucket_insert::updated};
    return {bucket_insert::replaced, held};
  }

  const Model* find(player_id id) const {
    const Model& slot = slots_[slot_of(id)];
    return (id != invalid_player && IdOf{}(slot) == id) ? &slot : nullptr;
  }
  Model* find(player_id id) {
    return const_cast<Model*>(static_cast<const bucket&>(*this).find(id));
  }
  bool contains(player_id id) const { return find(id) != nullptr; }

  bool erase(player_id id) {
    Model* m = find(id);
    if (!m) return false;
    *m = Model{};
    --count_;
    return true;
  }

  // Rehashes every player into `capacity` slots with a fresh seed. Players that
  // collide lose their place (the later one wins); returns how many were lost.
  std::uint32_t resize(std::uint32_t capacity, rng& r) {
    slot_array<Model> old = std::move(slots_);
    seed_ = r();
    reset(capacity, r);
    std::uint32_t lost = 0;
    for (const Model& m : old)
      if (IdOf{}(m) != invalid_player && insert(m).what == bucket_insert::replaced) ++lost;
    return lost;
  }

  // Fresh, untouched slots (slot_array.hpp), not a pass writing over every slot.
  void clear() {
    slots_ = slot_array<Model>(slots_.size());
    count_ = 0;
  }

  // Calls f(model) for every player, in slot order (for maintenance, not queries).
  template <class F>
  void for_each(F&& f) const {
    for (const Model& m : slots_)
      if (IdOf{}(m) != invalid_player) f(m);
  }

  // A walk visits every slot once in a fresh pseudo-random order: it starts at a
  // uniformly random slot and steps by a stride coprime with the capacity, so the
  // visiting order is a permutation and no slot is favoured by its position.
  //
  // The slots a walk reads next are prefetched: a cache of a million players does
  // not fit in the CPU caches, so each slot read is otherwise a wait on memory,
  // and that wait is most of a query's time.
  class walk {
   public:
    walk() = default;
    walk(const bucket& b, rng& r)
        : b_(&b),
          pos_(static_cast<std::uint32_t>(r.below(b.capacity()))),
          stride_(b.strides_[r.below(b.strides_.size())]),
          left_(b.capacity()) {
      std::uint32_t p = pos_;
      for (std::uint32_t k = 0; k <= prefetch_distance && k < left_; ++k, p = step(p)) prefetch(p);
      ahead_ = p;
    }

    // Next occupied slot of the walk, or nullptr once every slot was visited.
    const Model* next() {
      while (left_ > 0) {
        const Model& m = b_->slots_[pos_];
        --left_;
        pos_ = step(pos_);
        if (left_ > prefetch_distance) {
          prefetch(ahead_);
          ahead_ = step(ahead_);
        }
        if (IdOf{}(m) != invalid_player) return &m;
      }
      return nullptr;
    }
    bool done() const { return left_ == 0; }
    std::uint32_t slots_left() const { return left_; }

   private:
    std::uint32_t step(std::uint32_t p) const {
      p += stride_;
      return p >= b_->capacity() ? p - b_->capacity() : p;
    }
    // A slot may straddle two cache lines: ask for the line of its last byte too.
    void prefetch(std::uint32_t p) const {
      const char* slot = reinterpret_cast<const char*>(&b_->slots_[p]);
      __builtin_prefetch(slot);
      __builtin_prefetch(slot + sizeof(Model) - 1);
    }

    // How many slots ahead of the one being read are already requested.
    static constexpr std::uint32_t prefetch_distance = 3;

    const bucket* b_ = nullptr;
    std::uint32_t pos_ = 0, stride_ = 1, left_ = 0;
    std::uint32_t ahead_ = 0;  // next slot to prefetch
  };

  walk random_walk(rng& r) const { return walk(*this, r); }

 private:
  void reset(std::uint32_t capacity, rng& r) {
    if (capacity == 0) throw std::invalid_argument("bucket capacity must be at least 1");
    slots_ = slot_array<Model>(capacity);
    count_ = 0;
    pick_strides(r);
  }

  // A handful of random strides coprime with the capacity, chosen once per size so
  // that starting a walk costs no gcd computation.
  void pick_strides(rng& r) {
    constexpr std::size_t wanted = 8;
    const std::uint32_t cap = capacity();
    strides_.clear();
    if (cap <= 2) {
      strides_.push_back(1);
      return;
    }
    for (int attempt = 0; attempt < 256 && strides_.size() < wanted; ++attempt) {
      auto s = static_cast<std::uint32_t>(1 + r.below(cap - 1));
      if (std::gcd(s, cap) == 1) strides_.push_back(s);
    }
    if (strides_.empty()) strides_.push_back(1);
  }

  slot_array<Model> slots_;
  std::vector<std::uint32_t> strides_;
  std::uint64_t seed_;
  std::uint32_t count_ = 0;
};

}  // namespace mm
