// Helpers shared by the benchmark programs: JSON-lines output and process
// resource readings.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
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

// CPU seconds (user + system) a process has used so far, from /proc; 0 when
// it cannot be read.
inline double process_cpu_s(long pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  // Fields after the command's closing parenthesis; utime and stime are the
  // 12th and 13th of them.
  const auto close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(text.substr(close + 2));
  std::string field;
  double ticks = 0;
  for (int i = 1; i <= 13 && rest >> field; ++i)
    if (i >= 12) ticks += std::stod(field);
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
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
