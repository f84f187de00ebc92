// The MMR strategy, always first in a label tuple (docs/design.md, Strategies): [low, high] split
// into `count` equal slices; outside values clamp to the edge slices. Ranged and
// soft. Its range is re-derived from robust percentiles of the sizing samples so
// one outlier cannot stretch every bucket, and it can shrink as well as grow.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace mm {

class mmr_strategy {
 public:
  mmr_strategy(double low, double high, std::uint32_t count);

  std::uint32_t index_of(double mmr) const {
    if (!(mmr > low_)) return 0;  // also catches NaN, which callers reject earlier
    const double slot = (mmr - low_) * inv_width_;
    return slot >= count_ ? count_ - 1 : static_cast<std::uint32_t>(slot);
  }

  double low() const { return low_; }
  double high() const { return high_; }
  std::uint32_t count() const { return count_; }
  double slice_width() const { return (high_ - low_) / count_; }
  double slice_low(std::uint32_t i) const { return low_ + i * slice_width(); }
  double slice_high(std::uint32_t i) const { return low_ + (i + 1) * slice_width(); }
  // Where in its slice an MMR lies: 0 at the slice's low edge, 1 at its high edge.
  double position_in_slice(double mmr) const;

  struct range_update {
    bool changed = false;
    double low = 0, high = 0;
  };

  // Sets the range to the [p_low, p_high] percentiles of the samples. A move
  // smaller than half a slice at both ends is ignored: relabelling every cached
  // player costs collisions, and such a move would not change the sizing.
  range_update rebalance(std::span<const float> mmrs, double p_low, double p_high);

  void set_range(double low, double high);

  std::string save_state() const;
  void load_state(const std::string& bytes);  // throws std::runtime_error

 private:
  double low_, high_, inv_width_;
  std::uint32_t count_;
};

}  // namespace mm
