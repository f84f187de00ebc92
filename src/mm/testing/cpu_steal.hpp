// The machine's CPU time as Linux counts it (/proc/stat's first line): all
// of it, and "steal", the time a hypervisor ran other guests while this
// one's CPUs had work. Tests and benches that judge latency on a virtual
// machine use it to tell the server's delays from the host's.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

namespace mm::test {

struct cpu_ticks {
  std::uint64_t total = 0, steal = 0;  // clock ticks (USER_HZ) since boot, all CPUs
};

inline cpu_ticks machine_ticks() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  in >> cpu;
  cpu_ticks t;
  // user nice system idle iowait irq softirq steal
  for (int i = 0; i < 8; ++i) {
    std::uint64_t x = 0;
    in >> x;
    t.total += x;
    if (i == 7) t.steal = x;
  }
  return t;
}

// The share of the CPU time between `from` and `to` that was stolen, 0 to 1.
inline double steal_share(const cpu_ticks& from, const cpu_ticks& to) {
  return to.total > from.total ? static_cast<double>(to.steal - from.steal) /
                                     static_cast<double>(to.total - from.total)
                               : 0.0;
}

}  // namespace mm::test
