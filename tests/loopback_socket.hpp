// A plain TCP socket to a port on 127.0.0.1, for tests that speak a
// protocol byte by byte (or not at all). -1 when it cannot connect; a
// non-blocking socket may still be connecting when it is returned.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace mm::test {

inline int loopback_socket(std::uint16_t port, bool non_blocking = false) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | (non_blocking ? SOCK_NONBLOCK : 0), 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 && errno != EINPROGRESS) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace mm::test
