#include "resp_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <deque>
#include <list>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <unordered_map>

#include "mm/engine/log.hpp"
#include "resp_protocol.hpp"
#include "resp_server_impl.hpp"

namespace mm::server {

namespace {

using namespace resp_detail;

void keep_alive(int fd) {
  const int on = 1, idle = 60, interval = 10, count = 3;
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}

std::string peer_address(const sockaddr_storage& a) {
  char text[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET)
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(a).sin_addr, text, sizeof text);
  else if (a.ss_family == AF_INET6)
    ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(a).sin6_addr, text, sizeof text);
  return text;
}

// The kernel grows a process's descriptor table by doubling, and in a
// process with several threads each growth waits for an RCU grace period:
// milliseconds during which the accepting thread (this port's only one)
// stands still, at 256, 512, ... 8192 connections. Growing it once, here,
// to hold every connection the port allows moves that wait to the start.
void reserve_descriptors(std::uint32_t connections) {
  rlimit l{};
  if (::getrlimit(RLIMIT_NOFILE, &l) != 0 || l.rlim_cur < 64) return;
  const auto want = std::min<rlim_t>(l.rlim_cur - 1, rlim_t{connections} + 256);
  const int probe = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (probe < 0) return;
  if (static_cast<rlim_t>(probe) < want) {
    const int high = ::fcntl(probe, F_DUPFD_CLOEXEC, static_cast<int>(want));
    if (high >= 0) ::close(high);
  }
  ::close(probe);
}

}  // namespace

void resp_reply::operator()(std::string encoded) const {
  if (state_->answered.exchange(true)) return;
  state_->fill(std::move(encoded));
}

resp_server::resp_server(resp_settings settings, resp_handlers handlers)
    : impl_(std::make_shared<impl>(std::move(settings), std::move(handlers))) {}

resp_server::~resp_server() {
  stop();
}

const resp_stats& resp_server::stats() const {
  return impl_->stats;
}

std::uint16_t resp_server::listen(const std::string& host, std::uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string where = host + ":" + std::to_string(port);
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0 || !found)
    throw std::runtime_error("resp: cannot resolve " + where);
  const int fd = ::socket(found->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  const int on = 1;
  if (fd >= 0) ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  const bool bound =
      fd >= 0 && ::bind(fd, found->ai_addr, found->ai_addrlen) == 0 && ::listen(fd, SOMAXCONN) == 0;
  ::freeaddrinfo(found);
  if (!bound) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("resp: cannot listen on " + where + ": " + why);
  }
  sockaddr_storage local{};
  socklen_t len = sizeof local;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len);
  const std::uint16_t bound_port =
      ntohs(local.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6&>(local).sin6_port
                                        : reinterpret_cast<sockaddr_in&>(local).sin_port);
  reserve_descriptors(impl_->settings.max_connections);
  impl& s = *impl_;
  s.listener = fd;
  s.epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
  s.wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  for (int f : {s.listener, s.wake_fd}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.ptr = nullptr;
    ev.data.fd = f;
    ::epoll_ctl(s.epoll_fd, EPOLL_CTL_ADD, f, &ev);
  }
  s.running = true;
  s.network = std::thread([self = impl_] { self->run(); });
  return bound_port;
}

void resp_server::stop() {
  impl& s = *impl_;
  if (!s.running.exchange(false)) return;
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto n = ::write(s.wake_fd, &one, sizeof one);
  if (s.network.joinable()) s.network.join();
}

// Listener and eventfd events carry their descriptor (small numbers); a
// connection's carries its address, which is never that small.
void resp_server::impl::run() {
  on_network_thread = true;
  std::vector<epoll_event> events(256);
  auto next_sweep = clock::now() + sweep_every;
  while (running) {
    std::vector<std::shared_ptr<resp_connection>> now_ready;
    {
      std::lock_guard lock(ready_mutex);
      now_ready.swap(ready);
    }
    for (auto& c : now_ready) {
      c->in_ready = false;
      if (c->gone) continue;
      if (c->closing)
        flush(c);
      else
        process(c);  // a slot freed may let the commands held back go on
    }
    bool more;
    {
      std::lock_guard lock(ready_mutex);
      more = !ready.empty();
    }
    const auto wait =
        std::chrono::duration_cast<std::chrono::milliseconds>(next_sweep - clock::now());
    const int n = ::epoll_wait(epoll_fd, events.data(), static_cast<int>(events.size()),
                               more ? 0 : std::max<int>(0, static_cast<int>(wait.count()) + 1));
    for (int i = 0; i < n; ++i) {
      const epoll_event& e = events[i];
      if (e.data.fd == listener && e.data.u64 == static_cast<std::uint64_t>(listener)) {
        accept_all();
      } else if (e.data.fd == wake_fd && e.data.u64 == static_cast<std::uint64_t>(wake_fd)) {
        std::uint64_t count = 0;
        [[maybe_unused]] const auto r = ::read(wake_fd, &count, sizeof count);
        signalled = false;
      } else {
        auto* raw = static_cast<resp_connection*>(e.data.ptr);
        const auto it = conns.find(raw);
        if (it == conns.end()) continue;
        const std::shared_ptr<resp_connection> c = it->second;
        if (e.events & (EPOLLIN | EPOLLHUP | EPOLLERR)) readable(c);
        if (!c->gone && (e.events & EPOLLOUT)) flush(c);
      }
    }
    if (clock::now() >= next_sweep) {
      sweep();
      next_sweep = clock::now() + sweep_every;
    }
  }
  while (!conns.empty()) close(conns.begin()->second);
}

void resp_server::impl::accept_all() {
  for (int turn = 0; accepting && turn < accepts_per_turn; ++turn) {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    const int fd =
        ::accept4(listener, reinterpret_cast<sockaddr*>(&addr), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      admit(fd, addr);
      continue;
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
      // Out of descriptors: stop listening a moment rather than spin.
      ++stats.refused;
      accepting = false;
      accept_again = clock::now() + std::chrono::milliseconds(20);
      ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, listener, nullptr);
    }
    return;
  }
}

// The least recently active connection that owes nothing (of `address`,
// when given) is closed to make room. False: every one is busy.
bool resp_server::impl::evict_for(const std::string* address) {
  for (resp_connection* c : lru) {
    if (address && c->client.address != *address) continue;
    if (c->client.pushes || c->owes() || c->out.size() > c->out_at) continue;
    ++stats.evicted;
    close(conns.at(c));
    return true;
  }
  return false;
}

void resp_server::impl::admit(int fd, const sockaddr_storage& addr) {
  const std::string address = peer_address(addr);
  const bool room_here =
      per_address[address] < settings.max_connections_per_address || evict_for(&address);
  const bool room = room_here && (conns.size() < settings.max_connections || evict_for(nullptr));
  if (!room) {
    ++stats.refused;
    static const char busy[] = "-ERR max number of clients reached (resp.max_connections)\r\n";
    [[maybe_unused]] const auto n = ::send(fd, busy, sizeof busy - 1, MSG_NOSIGNAL);
    ::close(fd);
    return;
  }
  keep_alive(fd);
  auto c = std::make_shared<resp_connection>(shared_from_this(), fd);
  c->client.id = next_id++;
  c->client.address = address;
  c->client.max_bulk_bytes = settings.max_bulk_bytes;
  c->active = clock::now();
  c->lru = lru.insert(lru.end(), c.get());
  std::weak_ptr<resp_connection> weak = c;
  c->client.wake = [weak] {
    if (auto s = weak.lock()) {
      s->stream_woken = true;
      s->srv->mark_ready(s);
    }
  };
  if (handlers.opened) handlers.opened(c->client);
  conns.emplace(c.get(), c);
  ++per_address[address];
  ++stats.open;
  ++stats.accepted;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.ptr = c.get();
  c->events = EPOLLIN;
  ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev);
}

void resp_server::impl::readable(const std::shared_ptr<resp_connection>& c) {
  // At most a chunk past the command limit is held: a command that is not
  // whole by then is refused (process).
  const std::size_t cap = settings.max_command_bytes + read_chunk;
  // Read into one buffer of the thread's, then keep what came: growing the
  // connection's buffer by a chunk before each read would zero it each time.
  static thread_local char chunk[read_chunk];
  while (!c->closing && c->in.size() < cap) {
    const ssize_t got = ::recv(c->fd, chunk, read_chunk, 0);
    if (got > 0) c->in.append(chunk, static_cast<std::size_t>(got));
    if (got > 0) {
      if (static_cast<std::size_t>(got) < read_chunk) break;
      continue;
    }
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (got < 0 && errno == EINTR) continue;
    close(c);  // the peer closed, or the connection broke: nothing owed is sent
    return;
  }
  touch(*c);
  process(c);
}

}  // namespace mm::server
