#include "mm/sim/figures.hpp"

#include <algorithm>
#include <cmath>

namespace mm::sim {

distribution summarize(std::vector<double> values) {
  distribution d;
  d.count = values.size();
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  double sum = 0;
  for (double v : values) sum += v;
  d.mean = sum / static_cast<double>(values.size());
  const auto rank = [&](double p) {
    const auto k = static_cast<std::size_t>(std::ceil(p * static_cast<double>(values.size())));
    return values[std::clamp<std::size_t>(k, 1, values.size()) - 1];
  };
  d.p50 = rank(0.50);
  d.p95 = rank(0.95);
  d.p99 = rank(0.99);
  d.max = values.back();
  return d;
}

double gini(std::vector<double> amounts) {
  if (amounts.empty()) return 0;
  std::sort(amounts.begin(), amounts.end());
  // G = sum_i (2i - n - 1) x_i / (n sum x), i from 1, x ascending.
  double weighted = 0, total = 0;
  const auto n = static_cast<double>(amounts.size());
  for (std::size_t i = 0; i < amounts.size(); ++i) {
    weighted += (2.0 * static_cast<double>(i + 1) - n - 1) * amounts[i];
    total += amounts[i];
  }
  return total > 0 ? weighted / (n * total) : 0;
}

}  // namespace mm::sim
