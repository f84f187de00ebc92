// A closed-loop HTTP/1.1 load from one thread: `connections` keep-alive
// connections on epoll, each sending its next request as soon as the last
// one's response is whole. Hundreds of requests stay in flight for the cost
// of one client thread, so the server's capacity is measured, not the
// patience of a few blocking clients (each of which waits for its own
// durable commit).
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace mm::bench {

struct http_load_result {
  std::uint64_t answered = 0;  // responses with the expected status
  std::uint64_t other = 0;     // responses with another status
  double seconds = 0;
  double per_s() const { return seconds > 0 ? static_cast<double>(answered) / seconds : 0; }
};

namespace http_load_detail {

struct connection {
  int fd = -1;
  std::string out;
  std::size_t sent = 0;
  std::string in;
};

// The status and the length of one whole response at the front of `in`,
// or a length of 0 while it is not whole yet.
inline std::pair<int, std::size_t> whole_response(const std::string& in) {
  const auto head_end = in.find("\r\n\r\n");
  if (head_end == std::string::npos || in.size() < 12) return {0, 0};
  const int status = std::atoi(in.c_str() + 9);  // "HTTP/1.1 201 ..."
  std::size_t body = 0;
  for (std::size_t line = in.find("\r\n") + 2; line < head_end;) {
    const auto next = in.find("\r\n", line);
    const auto colon = in.find(':', line);
    if (colon < next && colon - line == 14 &&
        strncasecmp(in.c_str() + line, "content-length", 14) == 0)
      body = std::strtoull(in.c_str() + colon + 1, nullptr, 10);
    line = next + 2;
  }
  const std::size_t total = head_end + 4 + body;
  return in.size() < total ? std::pair<int, std::size_t>{0, 0} : std::pair{status, total};
}

inline int connect_to(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot connect to 127.0.0.1:" + std::to_string(port));
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  return fd;
}

// Sends what is left of the connection's request; watches for writability
// only while some of it is left (level-triggered EPOLLOUT would spin).
inline void flush(int ep, std::uint64_t index, connection& c) {
  if (c.sent < c.out.size()) {
    const auto w = ::send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
    if (w > 0) c.sent += static_cast<std::size_t>(w);
  }
  epoll_event ev{};
  ev.events = EPOLLIN | (c.sent < c.out.size() ? EPOLLOUT : 0u);
  ev.data.u64 = index;
  ::epoll_ctl(ep, EPOLL_CTL_MOD, c.fd, &ev);
}

}  // namespace http_load_detail

// Runs the load for `seconds`: each connection's requests come from
// `next_request` (a whole HTTP/1.1 request, keep-alive); responses with
// status `expected` are counted as answered.
inline http_load_result http_closed_loop(std::uint16_t port, int connections, double seconds,
                                         const std::function<std::string()>& next_request,
                                         int expected) {
  using namespace http_load_detail;
  const int ep = ::epoll_create1(0);
  std::vector<connection> conns(static_cast<std::size_t>(connections));
  for (std::size_t i = 0; i < conns.size(); ++i) {
    conns[i].fd = connect_to(port);
    conns[i].out = next_request();
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = i;
    ::epoll_ctl(ep, EPOLL_CTL_ADD, conns[i].fd, &ev);
    flush(ep, i, conns[i]);
  }
  http_load_result r;
  const auto t0 = std::chrono::steady_clock::now();
  const auto end = t0 + std::chrono::duration<double>(seconds);
  std::vector<epoll_event> events(conns.size());
  char buf[65536];
  while (std::chrono::steady_clock::now() < end) {
    const int n = ::epoll_wait(ep, events.data(), static_cast<int>(events.size()), 50);
    for (int k = 0; k < n; ++k) {
      const auto index = events[static_cast<std::size_t>(k)].data.u64;
      auto& c = conns[index];
      if (c.sent < c.out.size()) flush(ep, index, c);
      for (;;) {
        const auto got = ::recv(c.fd, buf, sizeof buf, 0);
        if (got <= 0) break;
        c.in.append(buf, static_cast<std::size_t>(got));
      }
      for (;;) {
        const auto [status, length] = whole_response(c.in);
        if (length == 0) break;
        ++(status == expected ? r.answered : r.other);
        c.in.erase(0, length);
        c.out = next_request();
        c.sent = 0;
        flush(ep, index, c);
      }
    }
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (auto& c : conns) ::close(c.fd);
  ::close(ep);
  return r;
}

// A POST of a JSON body, keep-alive.
inline std::string http_post(const std::string& path, const std::string& json_body) {
  return "POST " + path +
         " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(json_body.size()) + "\r\n\r\n" + json_body;
}

}  // namespace mm::bench
