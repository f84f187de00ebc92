// Raw TCP clients for the HTTP server's tests: bytes no HTTP library would
// send (half heads, garbage, held connections), from a chosen loopback address.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace mm::test {

class raw_connection {
 public:
  // `from`: the local address to connect from (any 127.x.y.z is this machine),
  // so a test can be a different client than a flood it holds open.
  explicit raw_connection(std::uint16_t port, const char* from = nullptr) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd_ >= 0);
    if (from) {
      sockaddr_in local{};
      local.sin_family = AF_INET;
      REQUIRE(::inet_pton(AF_INET, from, &local.sin_addr) == 1);
      REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof local) == 0);
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~raw_connection() {
    if (fd_ >= 0) ::close(fd_);
  }
  raw_connection(const raw_connection&) = delete;
  raw_connection& operator=(const raw_connection&) = delete;
  raw_connection(raw_connection&& o) noexcept : fd_(o.fd_), connected_(o.connected_) { o.fd_ = -1; }

  bool connected() const { return connected_; }
  int fd() const { return fd_; }

  bool send(const std::string& bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }

  // What arrives within `wait`, until `enough(got)` holds or the peer closes.
  std::string receive(std::chrono::milliseconds wait,
                      const std::function<bool(const std::string&)>& enough) {
    std::string got;
    const auto deadline = std::chrono::steady_clock::now() + wait;
    while (!enough(got)) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd p{fd_, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
      char buf[4096];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) {
        peer_closed_ = true;
        break;
      }
      got.append(buf, static_cast<std::size_t>(n));
    }
    return got;
  }

  // One whole answer with a Content-Length body (what the server sends).
  std::string response(std::chrono::milliseconds wait = std::chrono::seconds(3)) {
    return receive(wait, [](const std::string& got) {
      const auto end = got.find("\r\n\r\n");
      if (end == std::string::npos) return false;
      const auto at = got.find("Content-Length: ");
      if (at == std::string::npos || at > end) return true;
      return got.size() >= end + 4 + std::stoul(got.substr(at + 16));
    });
  }

  // Whether the server closes the connection within `wait` (reading and
  // dropping whatever it sends first).
  bool closed_by_peer(std::chrono::milliseconds wait) {
    receive(wait, [](const std::string&) { return false; });
    return peer_closed_;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
  bool peer_closed_ = false;
};

// Sends raw bytes on a new loopback connection and returns the answer that
// comes within `wait` (the connection is left open until then: a body
// announced and never sent must not be needed for the answer).
inline std::string raw_exchange(std::uint16_t port, const std::string& bytes,
                                std::chrono::milliseconds wait = std::chrono::seconds(3)) {
  raw_connection c(port);
  REQUIRE(c.connected());
  REQUIRE(c.send(bytes));
  return c.response(wait);
}

}  // namespace mm::test
