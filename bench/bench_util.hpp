// Helpers shared by the benchmark programs: JSON-lines output and process
// resource readings.
#pragma once

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace mm::bench {

// The middle one of three.
inline double median3(double a, double b, double c) {
  return std::max(std::min(a, b), std::min(std::max(a, b), c));
}

inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Runs the calling thread on `cpus` only (all of the machine's when empty);
// threads it starts afterwards inherit that. False when the kernel refused.
inline bool pin_thread_to(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (cpus.empty())
    for (long c = 0; c < sysconf(_SC_NPROCESSORS_ONLN) && c < CPU_SETSIZE; ++c) CPU_SET(c, &set);
  for (const int c : cpus) CPU_SET(c, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

// Runs every thread of process `pid` (this process: getpid()) except
// thread `except` on `cpus` only (all of the machine's when empty). Returns
// how many threads it moved.
inline int pin_process_threads(long pid, const std::vector<int>& cpus, long except = -1) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (cpus.empty())
    for (long c = 0; c < sysconf(_SC_NPROCESSORS_ONLN) && c < CPU_SETSIZE; ++c) CPU_SET(c, &set);
  for (const int c : cpus) CPU_SET(c, &set);
  int moved = 0;
  std::error_code ec;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    const long tid = std::stol(task.path().filename().string());
    if (tid != except && sched_setaffinity(static_cast<pid_t>(tid), sizeof set, &set) == 0) ++moved;
  }
  return moved;
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

// A latency measured under open-loop arrivals means something only while
// the arrival generator kept to its plan: the p99 of how late it sent must be
// under a tenth of the run's latency p99. When it was not, the generator was
// measured, not the service.
inline bool generator_kept_up(double latency_p99_us, double lateness_p99_us) {
  return lateness_p99_us < latency_p99_us / 10;
}

// One latency figure of an open-loop run, with the generator's lateness
// beside it; when the generator fell behind (generator_kept_up() of the run's
// p99), the line has no value ("value": null) and says why. Returns `kept_up`.
inline bool emit_latency(const char* bench, const char* metric, double value_us, bool kept_up,
                         double lateness_p99_us, const std::string& extra = {}) {
  char late[64];
  std::snprintf(late, sizeof late, "\"generator_lateness_p99_us\": %.6g", lateness_p99_us);
  const std::string params = extra.empty() ? late : extra + ", " + late;
  if (kept_up) {
    emit(bench, metric, value_us, "us", params);
    return true;
  }
  std::printf(
      "{\"bench\": \"%s\", \"metric\": \"%s\", \"value\": null, \"unit\": \"us\", %s, "
      "\"not_measured\": \"the load generator fell behind: its lateness p99 is not under a "
      "tenth of the latency p99 of the same run\"}\n",
      bench, metric, params.c_str());
  std::fflush(stdout);
  return false;
}

// Profiles one part of a bench: with MM_PERF_CONTROL naming perf's control
// FIFO (`perf record -D -1 --control fifo:FIFO`), the samples are taken only
// while one of these lives. Without it, nothing.
class perf_window {
 public:
  perf_window() { send("enable\n"); }
  ~perf_window() { send("disable\n"); }
  perf_window(const perf_window&) = delete;
  perf_window& operator=(const perf_window&) = delete;

 private:
  static void send(const char* command) {
    const char* fifo = std::getenv("MM_PERF_CONTROL");
    if (!fifo) return;
    std::ofstream(fifo) << command << std::flush;
  }
};

}  // namespace mm::bench
