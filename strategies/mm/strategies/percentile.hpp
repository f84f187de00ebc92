// The p-th percentile (0..1) of some values, by selection on a copy: O(n).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace mm {

template <class T>
T percentile(std::vector<T> values, double p) {
  if (values.empty()) return T{};
  const auto k = static_cast<std::size_t>(p * static_cast<double>(values.size() - 1));
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k), values.end());
  return values[k];
}

}  // namespace mm
