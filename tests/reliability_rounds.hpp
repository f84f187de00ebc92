// How many rounds a reliability test runs: its CI default times
// MM_RELIABILITY_ROUNDS (1 when unset), for longer nightly-style runs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>

namespace mm::test {

inline std::uint64_t rounds(std::uint64_t ci_default) {
  const char* v = std::getenv("MM_RELIABILITY_ROUNDS");
  return ci_default * (v ? std::max<std::uint64_t>(1, std::strtoull(v, nullptr, 10)) : 1);
}

}  // namespace mm::test
