// A token bucket: the requests a caller may still make now, filled at `rate`
// a second up to `burst`. Plain C++ (the actors own one and pass the time).
#pragma once

#include <algorithm>
#include <chrono>

namespace mm::actors {

struct request_bucket {
  using time_point = std::chrono::steady_clock::time_point;
  double tokens = -1;  // -1: never used (full at its first use)
  time_point at;

  // One request, if the bucket (filled since `at`) holds one.
  bool take(time_point now, double rate, double burst) {
    const double elapsed = std::chrono::duration<double>(now - at).count();
    tokens = tokens < 0 ? burst : std::min(burst, tokens + std::max(0.0, elapsed) * rate);
    at = now;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  }
};

}  // namespace mm::actors
