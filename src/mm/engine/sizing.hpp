// Dynamic bucket sizing (docs/design.md, Sizing): a FIFO of sampled label tuples taken from the
// real player base, and the sizing model derived from it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "mm/engine/label_tuple.hpp"
#include "mm/engine/options.hpp"

namespace mm {

// Ring buffer of samples: each one is a raw MMR (the MMR strategy re-derives its
// range from raw values) and the labels of the game's extra strategies.
class sample_fifo {
 public:
  sample_fifo(std::uint32_t capacity, std::uint32_t extra_count)
      : capacity_(capacity), extra_count_(extra_count) {}

  void push(float mmr, const label_tuple& t) {
    if (mmr_.size() < capacity_) {
      mmr_.push_back(mmr);
      extra_.insert(extra_.end(), t.extra.begin(), t.extra.begin() + extra_count_);
      return;
    }
    mmr_[head_] = mmr;
    std::copy_n(t.extra.begin(), extra_count_, extra_.begin() + head_ * extra_count_);
    head_ = (head_ + 1) % capacity_;
  }

  std::size_t size() const { return mmr_.size(); }
  std::uint32_t capacity() const { return capacity_; }
  // More than min(capacity / 10, 1000) samples (docs/design.md, Sizing).
  bool enough_data() const { return size() > std::min<std::size_t>(capacity_ / 10, 1000); }
  void clear() {
    mmr_.clear();
    extra_.clear();
    head_ = 0;
  }

  // Storage order, which is not age order once the ring wrapped; the sizing
  // model only counts, so order does not matter there.
  std::span<const float> mmrs() const { return mmr_; }
  label_value extra(std::size_t sample, std::uint32_t strategy) const {
    return extra_[sample * extra_count_ + strategy];
  }
  // One strategy's labels, oldest first.
  std::vector<label_value> extra_column(std::uint32_t strategy) const {
    std::vector<label_value> col;
    col.reserve(size());
    for (std::size_t i = 0; i < size(); ++i) col.push_back(extra((head_ + i) % size(), strategy));
    return col;
  }
  std::size_t memory_bytes() const {
    return mmr_.capacity() * sizeof(float) + extra_.capacity() * sizeof(label_value);
  }

 private:
  std::uint32_t capacity_, extra_count_;
  std::vector<float> mmr_;
  std::vector<label_value> extra_;
  std::size_t head_ = 0;  // oldest sample once full
};

// Share of each label tuple in the samples, under one MMR range.
struct sizing_model {
  double mmr_low = 0, mmr_high = 0;
  std::uint32_t player_cache_size = 0;
  std::uint64_t sample_count = 0;
  std::int64_t computed_at_unix_ms = 0;
  std::unordered_map<label_tuple, double, label_tuple_hash> ratios;

  bool empty() const { return ratios.empty(); }
};

// The sizing model of `samples`: each label tuple's share of them (a
// sample's MMR slice from `mmr_index`, then its `extra_count` strategy
// labels), for a cache of `cache_size` players.
template <class MmrIndex>
sizing_model measure_sizing(const sample_fifo& samples, MmrIndex mmr_index,
                            std::uint32_t extra_count, double mmr_low, double mmr_high,
                            std::uint32_t cache_size, std::int64_t now_unix_ms) {
  sizing_model s;
  s.mmr_low = mmr_low;
  s.mmr_high = mmr_high;
  s.player_cache_size = cache_size;
  s.sample_count = samples.size();
  s.computed_at_unix_ms = now_unix_ms;
  std::unordered_map<label_tuple, std::uint64_t, label_tuple_hash> counts;
  const auto mmrs = samples.mmrs();
  for (std::size_t i = 0; i < mmrs.size(); ++i) {
    label_tuple t;
    t.mmr_index = mmr_index(mmrs[i]);
    t.extra_count = extra_count;
    for (std::uint32_t k = 0; k < extra_count; ++k) t.extra[k] = samples.extra(i, k);
    ++counts[t];
  }
  for (auto& [t, n] : counts) s.ratios.emplace(t, static_cast<double>(n) / mmrs.size());
  return s;
}

// The capacity of every sized bucket, derived from a sizing model: a tuple's
// share of the samples times player_cache_size, at least a floor
// (planned_floor: bucket_min_size, lowered when not every tuple fits at that
// size), and all of them together at most player_cache_size.
// When the floors push the sum over, the part above the floor is scaled down
// for every tuple; only when even one slot each does not fit do the least
// sampled tuples go without a planned bucket. Tuples without a plan are sized
// bucket_initial_size when they first appear, within the engine's overall
// capacity limit (engine::capacity_limit).
class capacity_plan {
 public:
  // The smallest capacity the plan gives a bucket when `tuples` were sampled:
  // bucket_min_size while every tuple fits at that size; otherwise half the
  // cache spread evenly over them (at least one slot), the other half going
  // by share. A tuple without a bucket cannot be matched at all (every
  // attacker of its MMR range gets a fake opponent while the table holds
  // players for it), so a small bucket for every sampled tuple beats a large
  // one for some.
  static std::uint32_t planned_floor(const options& o, std::size_t tuples) {
    const std::uint64_t n = std::max<std::size_t>(tuples, 1);
    if (n * o.bucket_min_size <= o.player_cache_size) return o.bucket_min_size;
    return static_cast<std::uint32_t>(std::max<std::uint64_t>(1, o.player_cache_size / (2 * n)));
  }

  capacity_plan() = default;
  capacity_plan(const sizing_model& s, const options& o) {
    if (s.ratios.empty()) return;
    const double cache = o.player_cache_size;
    std::vector<std::pair<double, const label_tuple*>> by_share;
    by_share.reserve(s.ratios.size());
    for (const auto& [t, share] : s.ratios) by_share.emplace_back(share, &t);
    // Largest share first; ties by tuple so the plan does not depend on hash order.
    std::sort(by_share.begin(), by_share.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : *a.second < *b.second;
    });
    const double floor_size = planned_floor(o, by_share.size());
    const auto fit = static_cast<std::size_t>(cache / floor_size);
    if (by_share.size() > fit) by_share.resize(fit);
    double above_min = 0;
    for (const auto& [share, t] : by_share) above_min += std::max(0.0, share * cache - floor_size);
    const double room = cache - floor_size * static_cast<double>(by_share.size());
    const double scale = above_min > room ? room / above_min : 1.0;
    for (const auto& [share, t] : by_share) {
      const double want = floor_size + std::max(0.0, share * cache - floor_size) * scale;
      const auto c = static_cast<std::uint32_t>(want);
      capacity_.emplace(*t, c);
      total_ += c;
    }
  }

  // The planned capacity of a tuple's bucket, or 0 when it has none.
  std::uint32_t capacity_of(const label_tuple& t) const {
    auto it = capacity_.find(t);
    return it == capacity_.end() ? 0 : it->second;
  }
  std::uint64_t total() const { return total_; }
  std::size_t size() const { return capacity_.size(); }

 private:
  std::unordered_map<label_tuple, std::uint32_t, label_tuple_hash> capacity_;
  std::uint64_t total_ = 0;
};

// One bucket as it stands: a snapshot keeps these so that a restore rebuilds
// the same buckets with the same slot seeds.
struct bucket_layout {
  label_tuple labels;
  std::uint32_t capacity = 0;
  std::uint64_t seed = 0;
};

// True when moving from `current` to `wanted` is worth a resize (>= 10% change).
inline bool worth_resizing(std::uint32_t current, std::uint32_t wanted) {
  const double diff = current > wanted ? current - wanted : wanted - current;
  return diff >= 0.1 * current;
}

}  // namespace mm
