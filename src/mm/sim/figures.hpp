// The simulator's figures: a distribution summed up (mean and percentiles),
// and how evenly something is shared out (Gini).
#pragma once

#include <cstddef>
#include <vector>

namespace mm::sim {

struct distribution {
  std::size_t count = 0;
  double mean = 0, p50 = 0, p95 = 0, p99 = 0, max = 0;
};

// Nearest-rank percentiles of `values` (0 for an empty list).
distribution summarize(std::vector<double> values);

// The Gini coefficient of non-negative amounts: 0 when everyone has the
// same, towards 1 when one has everything (0 for none or all zero).
double gini(std::vector<double> amounts);

}  // namespace mm::sim
