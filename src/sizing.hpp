// Dynamic bucket sizing (SPEC §8): a FIFO of sampled label tuples taken from the
// real player base, and the sizing model derived from it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "label_tuple.hpp"
#include "options.hpp"

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
  // More than min(capacity / 10, 1000) samples (SPEC §8).
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
    for (std::size_t i = 0; i < size(); ++i)
      col.push_back(extra((head_ + i) % size(), strategy));
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

  // Capacity a bucket of this tuple should have: max(bucket_min_size, ratio *
  // player_cache_size); tuples never sampled get bucket_initial_size.
  std::uint32_t capacity_for(const label_tuple& t, const options& o) const {
    auto it = ratios.find(t);
    if (it == ratios.end()) return o.bucket_initial_size;
    const double want = it->second * o.player_cache_size;
    return std::max(o.bucket_min_size, static_cast<std::uint32_t>(want));
  }
};

// True when moving from `current` to `wanted` is worth a resize (>= 10% change).
inline bool worth_resizing(std::uint32_t current, std::uint32_t wanted) {
  const double diff = current > wanted ? current - wanted : wanted - current;
  return diff >= 0.1 * current;
}

}  // namespace mm
