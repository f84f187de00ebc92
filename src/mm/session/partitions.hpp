// The session queues in partitions (docs/design.md, "Session queues over
// several nodes"): each partition is a session service of its own, with its
// own lease, so a cluster spreads the queues over its nodes. A queue's
// partition is a stable hash of its name, the same on every node and build.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "mm/engine/stable_hash.hpp"

namespace mm::session {

// Which of `partitions` (at least 1) runs the queue `name`.
constexpr std::uint32_t queue_partition(std::string_view name, std::uint32_t partitions) {
  return static_cast<std::uint32_t>(
      reduce_range(mix64(fnv1a64(name)), partitions ? partitions : 1));
}

// The lease of partition `p`: "sessions" while there is one partition (as
// before partitions existed), else "sessions-0", "sessions-1"...
inline std::string partition_resource(std::uint32_t p, std::uint32_t partitions) {
  return partitions <= 1 ? std::string("sessions") : "sessions-" + std::to_string(p);
}

}  // namespace mm::session
