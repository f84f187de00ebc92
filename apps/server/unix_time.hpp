// The wall clock as the store and the API write it: milliseconds since the
// Unix epoch.
#pragma once

#include <chrono>
#include <cstdint>

namespace mm::server {

inline std::int64_t unix_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace mm::server
