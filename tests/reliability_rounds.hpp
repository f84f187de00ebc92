// How many rounds a reliability test runs: its CI default times
// MM_RELIABILITY_ROUNDS (1 when unset), for longer nightly-style runs; and
// what the reliability tests measure of a process (its resident memory).
#pragma once

#include <sys/types.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

namespace mm::test {

inline std::uint64_t rounds(std::uint64_t ci_default) {
  const char* v = std::getenv("MM_RELIABILITY_ROUNDS");
  return ci_default * (v ? std::max<std::uint64_t>(1, std::strtoull(v, nullptr, 10)) : 1);
}

// A process's resident memory in KiB (0 when it cannot be read).
inline std::uint64_t rss_kib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::strtoull(line.c_str() + 6, nullptr, 10);
  return 0;
}

}  // namespace mm::test
