// Limits of the plain actor port's guard (port_guard.hpp). No CAF here, so
// configuration code can hold them.
#pragma once

#include <chrono>
#include <cstdint>

namespace mm::actors {

struct port_limits {
  // Largest payload one frame may announce. CAF 0.17 allocates what a frame
  // header announces before reading it, so connections × this bounds what
  // peers can make the server allocate. The default holds a match request
  // with a million excluded ids (8 MB) with room to spare.
  std::uint32_t max_frame_bytes = 16u << 20;
  // Connections at once; more are accepted and closed at once. The plain
  // port serves this machine's processes only (off loopback it is TLS), so a
  // few dozen is plenty; with the frame limit it bounds the worst case at
  // 64 x 16 MiB = 1 GiB.
  std::uint32_t max_connections = 64;
  // A peer must have sent its whole handshake frame within this time.
  std::chrono::milliseconds handshake_timeout{10'000};
};

}  // namespace mm::actors
