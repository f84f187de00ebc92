#include "mm/strategies/mmr_strategy.hpp"

#include <algorithm>
#include <cereal/archives/portable_binary.hpp>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "mm/strategies/percentile.hpp"

namespace mm {

mmr_strategy::mmr_strategy(double low, double high, std::uint32_t count) : count_(count) {
  if (count == 0) throw std::invalid_argument("mmr_bucket_count must be at least 1");
  set_range(low, high);
}

void mmr_strategy::set_range(double low, double high) {
  if (!std::isfinite(low) || !std::isfinite(high) || !(low < high))
    throw std::invalid_argument("MMR range must be finite with low < high");
  low_ = low;
  high_ = high;
  inv_width_ = count_ / (high_ - low_);
}

double mmr_strategy::position_in_slice(double mmr) const {
  const double slot = (mmr - low_) * inv_width_;
  return std::clamp(slot - std::floor(slot), 0.0, 1.0);
}

mmr_strategy::range_update mmr_strategy::rebalance(std::span<const float> mmrs, double p_low,
                                                   double p_high) {
  if (mmrs.empty()) return {false, low_, high_};
  const std::vector<float> v(mmrs.begin(), mmrs.end());
  double lo = percentile(v, p_low), hi = percentile(v, p_high);
  if (!(hi > lo)) {  // all samples (nearly) equal: give the range some width
    const double pad = std::max(1.0, std::abs(lo) * 1e-3);
    lo -= pad;
    hi += pad;
  }
  const double tolerance = slice_width() / 2;
  if (std::abs(lo - low_) < tolerance && std::abs(hi - high_) < tolerance)
    return {false, low_, high_};
  set_range(lo, hi);
  return {true, low_, high_};
}

std::string mmr_strategy::save_state() const {
  std::ostringstream os;
  {
    cereal::PortableBinaryOutputArchive ar(os);
    ar(std::uint32_t{1}, low_, high_);
  }
  return os.str();
}

void mmr_strategy::load_state(const std::string& bytes) {
  std::istringstream is(bytes);
  std::uint32_t version = 0;
  double lo = 0, hi = 0;
  try {
    cereal::PortableBinaryInputArchive ar(is);
    ar(version, lo, hi);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("MMR strategy state unreadable: ") + e.what());
  }
  if (version != 1) throw std::runtime_error("MMR strategy state has unknown version");
  try {
    set_range(lo, hi);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(std::string("MMR strategy state invalid: ") + e.what());
  }
}

}  // namespace mm
