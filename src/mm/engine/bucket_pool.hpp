// Label tuple -> bucket, and the order in which a query visits buckets (design.md, Queries).
#pragma once

#include <algorithm>
#include <bit>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "mm/engine/bucket.hpp"
#include "mm/engine/label_tuple.hpp"
#include "mm/strategies/strategy.hpp"

namespace mm {

template <class Model, class IdOf>
class bucket_pool {
 public:
  using bucket_type = bucket<Model, IdOf>;
  struct entry {
    label_tuple labels;
    bucket_type slots;
  };

  std::size_t size() const { return entries_.size(); }
  entry& at(std::uint32_t i) { return *entries_[i]; }
  const entry& at(std::uint32_t i) const { return *entries_[i]; }

  std::optional<std::uint32_t> find(const label_tuple& t) const {
    if (index_.empty()) return std::nullopt;
    const std::uint64_t h = label_tuple_hash{}(t);
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      const index_slot& s = index_[i];
      if (s.entry == no_entry) return std::nullopt;
      if (s.hash == h && entries_[s.entry]->labels == t) return s.entry;
    }
  }

  // A new bucket for a tuple the pool does not hold yet (check with find()).
  // Entries live behind pointers, so creating a bucket never moves another one.
  template <class... SlotArgs>
  std::uint32_t create(const label_tuple& t, SlotArgs&&... slot_args) {
    adopt(std::make_unique<entry>(entry{t, bucket_type(std::forward<SlotArgs>(slot_args)...)}));
    return static_cast<std::uint32_t>(entries_.size() - 1);
  }

  void clear() {
    entries_.clear();
    capacity_ = 0;
    reindex();
  }

  // Takes every bucket out, leaving the pool empty (for a rebuild).
  std::vector<std::unique_ptr<entry>> release() {
    auto all = std::exchange(entries_, {});
    capacity_ = 0;
    reindex();
    return all;
  }
  void adopt(std::unique_ptr<entry> e) {
    capacity_ += e->slots.capacity();
    entries_.push_back(std::move(e));
    index_add(static_cast<std::uint32_t>(entries_.size() - 1));
  }

  std::uint64_t players() const {
    std::uint64_t n = 0;
    for (auto& e : entries_) n += e->slots.count();
    return n;
  }
  // Sum of the bucket capacities (kept as buckets come and go: a bucket's
  // capacity only changes while it is released).
  std::uint64_t capacity() const { return capacity_; }

 private:
  // The index is an open-addressing table of (tuple hash, entry) kept at most half
  // full; every query looks up one to three tuples, so this is on the hot path.
  struct index_slot {
    std::uint64_t hash = 0;
    std::uint32_t entry = no_entry;
  };
  static constexpr std::uint32_t no_entry = 0xffffffffu;

  void index_add(std::uint32_t e) {
    if (2 * entries_.size() > index_.size()) {
      reindex();  // covers e as well
      return;
    }
    const std::uint64_t h = label_tuple_hash{}(entries_[e]->labels);
    std::size_t i = h & mask_;
    while (index_[i].entry != no_entry) i = (i + 1) & mask_;
    index_[i] = {h, e};
  }

  void reindex() {
    index_.assign(std::bit_ceil(std::max<std::size_t>(16, 2 * entries_.size() + 2)), {});
    mask_ = index_.size() - 1;
    for (std::uint32_t e = 0; e < entries_.size(); ++e) {
      const std::uint64_t h = label_tuple_hash{}(entries_[e]->labels);
      std::size_t i = h & mask_;
      while (index_[i].entry != no_entry) i = (i + 1) & mask_;
      index_[i] = {h, e};
    }
  }

  std::vector<std::unique_ptr<entry>> entries_;
  std::vector<index_slot> index_;
  std::size_t mask_ = 0;
  std::uint64_t capacity_ = 0;
};

// How one extra strategy compares labels, for the bucket order.
struct strategy_traits {
  label_kind kind;
  bool hard;
};

// Yields bucket indices for one query, lazily, in the order of design.md, Queries:
// the exact tuple; its MMR neighbours (the one nearer to the query's MMR first);
// then all other buckets by label distance, hard mismatches excluded, ties broken
// at random. Most queries end inside the first buckets, so the full sort of the
// remaining ones is only paid when a walk gets that far.
template <class Pool>
class bucket_order {
 public:
  bucket_order(const Pool& pool, const label_tuple& query, bool upper_neighbour_first,
               std::span<const strategy_traits> traits, rng& r,
               std::vector<std::pair<std::uint64_t, std::uint32_t>>& scratch)
      : pool_(pool),
        query_(query),
        upper_first_(upper_neighbour_first),
        traits_(traits),
        rng_(r),
        rest_(scratch) {}

  std::optional<std::uint32_t> next() {
    // The exact tuple and its two MMR neighbours are looked up one at a time:
    // most queries never need the third. Tuples that do not exist (below slice 0,
    // past the last slice, never filled) are simply not found.
    while (head_stage_ < 3) {
      const std::uint32_t m = query_.mmr_index;
      const int stage = head_stage_++;
      std::optional<std::uint32_t> b;
      const bool upper = (stage == 1) == upper_first_;
      if (stage == 0)
        b = pool_.find(query_);
      else if (upper)
        b = pool_.find(query_.with_mmr_index(m + 1));
      else if (m > 0)
        b = pool_.find(query_.with_mmr_index(m - 1));
      if (b) {
        head_[head_count_++] = *b;
        return b;
      }
    }
    if (!rest_built_) build_rest();
    if (rest_pos_ < rest_.size()) return rest_[rest_pos_++].second;
    return std::nullopt;
  }

 private:
  void build_rest() {
    rest_built_ = true;
    rest_.clear();
    for (std::uint32_t i = 0; i < pool_.size(); ++i) {
      if (std::find(head_, head_ + head_count_, i) != head_ + head_count_) continue;
      const label_tuple& t = pool_.at(i).labels;
      std::uint64_t d = t.mmr_index > query_.mmr_index ? t.mmr_index - query_.mmr_index
                                                       : query_.mmr_index - t.mmr_index;
      bool allowed = true;
      for (std::size_t s = 0; s < traits_.size() && allowed; ++s) {
        auto ds = label_distance(traits_[s].kind, traits_[s].hard, t.extra[s], query_.extra[s]);
        if (ds)
          d += *ds;
        else
          allowed = false;
      }
      if (!allowed) continue;
      rest_.emplace_back((std::min<std::uint64_t>(d, 0xffffffffu) << 32) | (rng_() >> 32), i);
    }
    std::sort(rest_.begin(), rest_.end());
  }

  const Pool& pool_;
  label_tuple query_;
  bool upper_first_;
  std::span<const strategy_traits> traits_;
  rng& rng_;
  std::uint32_t head_[3]{};
  std::uint32_t head_count_ = 0;
  int head_stage_ = 0;
  std::vector<std::pair<std::uint64_t, std::uint32_t>>& rest_;
  std::size_t rest_pos_ = 0;
  bool rest_built_ = false;
};

// Two lanes walk the bucket order at once; a lane whose bucket runs out takes
// the next bucket of the order. A query near a bucket border therefore sees
// both sides from its first candidates on.
//
// Each step takes the next player of one lane, chosen with a chance
// proportional to the players that lane's bucket has left (its slots left times
// its fill): the two random walks merge into about one random walk over both
// buckets, so the first players seen are a near-uniform sample of the two. Strict alternation would
// not be fair: beside a bucket of 2,000 players, each of a 12-player bucket's players would be seen
// about 80 times as often as each of the others.
template <class Pool>
class two_lane_walk {
  using walk_type = typename Pool::bucket_type::walk;

 public:
  two_lane_walk(const Pool& pool, bucket_order<Pool>& order, rng& r)
      : pool_(pool), order_(order), rng_(r) {
    refill(lanes_[0]);
    refill(lanes_[1]);
  }

  // Next player of the walk and the index of its bucket; nullptr when all the
  // buckets of the order were walked.
  template <class Model>
  const Model* next(std::uint32_t& bucket_index) {
    for (;;) {
      lane* l = pick();
      if (!l) return nullptr;
      if (const Model* m = l->walk.next()) {
        bucket_index = l->bucket_index;
        return m;
      }
      refill(*l);  // its bucket ran out: the next bucket of the order
    }
  }

 private:
  struct lane {
    walk_type walk;
    std::uint32_t bucket_index = 0;
    double fill = 0;  // of its bucket when the walk began
    bool active = false;
  };

  void refill(lane& l) {
    auto i = order_.next();
    l.active = i.has_value();
    if (!l.active) return;
    l.bucket_index = *i;
    l.walk = pool_.at(*i).slots.random_walk(rng_);
    l.fill = pool_.at(*i).slots.fill();
  }

  // The lane of the next step, by the players each has left (see above). A
  // lane whose walk is over takes its next bucket first.
  lane* pick() {
    for (lane& l : lanes_)
      while (l.active && l.walk.done()) refill(l);
    lane& a = lanes_[0];
    lane& b = lanes_[1];
    if (!a.active) return b.active ? &b : nullptr;
    if (!b.active) return &a;
    const double left_a = a.walk.slots_left() * a.fill, left_b = b.walk.slots_left() * b.fill;
    return rng_.unit() * (left_a + left_b) < left_a ? &a : &b;
  }

  const Pool& pool_;
  bucket_order<Pool>& order_;
  rng& rng_;
  lane lanes_[2];
};

}  // namespace mm
