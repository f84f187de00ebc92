// How long an actor that crashed waits before it is started again: a delay
// that doubles with each crash in a row, so a crash loop waits instead of
// spinning. Used by the matchmaker's supervisor and the session service.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace mm::actors {

struct restart_backoff {
  std::chrono::milliseconds initial{100};
  std::chrono::milliseconds max{30'000};
  // An instance that ran this long before crashing starts the backoff over.
  std::chrono::milliseconds reset_after{60'000};
};

// The delay before the next start after `crashes_in_a_row` crashes.
inline std::chrono::milliseconds backoff_delay(const restart_backoff& b, std::uint32_t crashes) {
  auto d = b.initial;
  for (std::uint32_t i = 1; i < crashes && d < b.max; ++i) d *= 2;
  return std::min(d, b.max);
}

}  // namespace mm::actors
