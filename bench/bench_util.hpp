// Helpers shared by the benchmark programs: JSON-lines output and process
// resource readings.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

namespace mm::bench {

inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Resident set size of this process in bytes.
inline long long resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  long long pages_total = 0, pages_resident = 0;
  statm >> pages_total >> pages_resident;
  return pages_resident * sysconf(_SC_PAGESIZE);
}

// One result line: {"bench": ..., "metric": ..., "value": ..., "unit": ..., extra}.
// `extra` is a pre-rendered JSON fragment of parameters, without braces.
inline void emit(const char* bench, const char* metric, double value, const char* unit,
                 const std::string& extra = {}) {
  std::printf("{\"bench\": \"%s\", \"metric\": \"%s\", \"value\": %.6g, \"unit\": \"%s\"%s%s}\n",
              bench, metric, value, unit, extra.empty() ? "" : ", ", extra.c_str());
  std::fflush(stdout);
}

}  // namespace mm::bench
