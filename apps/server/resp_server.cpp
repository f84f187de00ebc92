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

namespace mm::server {

namespace {

using clock = std::chrono::steady_clock;
constexpr std::size_t read_chunk = 64 * 1024;
// What one turn of the loop does for one source, so that none holds the
// others back: connections accepted, commands run for one connection (the
// rest wait for the next turn).
constexpr int accepts_per_turn = 16;
constexpr std::size_t commands_per_turn = 32;
constexpr auto sweep_every = std::chrono::milliseconds(250);
// After a protocol error or QUIT, the replies still owed get this long.
constexpr auto closing_grace = std::chrono::seconds(5);

thread_local bool on_network_thread = false;

// One reply slot: filled now or later, sent in order.
struct slot {
  std::string bytes;
  bool done = false;
};

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

// An inline "command" that is an HTTP request line or header.
bool looks_like_http(const std::vector<std::string>& args) {
  if (args.empty()) return false;
  std::string word = args[0];
  for (char& ch : word) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  for (const char* http : {"GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "HOST:"})
    if (word == http) return true;
  return false;
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

struct resp_connection {
  resp_connection(std::shared_ptr<resp_server::impl> s, int f) : srv(std::move(s)), fd(f) {}
  std::shared_ptr<resp_server::impl> srv;
  int fd;
  resp_client client;
  std::string in;
  std::size_t in_need = 0;  // parse again once `in` holds this much
  std::string out;
  std::size_t out_at = 0;
  std::uint32_t events = 0;  // epoll interest now
  clock::time_point active, partial_since, write_waiting_since, closing_since;
  bool closing = false;  // no more reads; close when nothing is owed
  bool gone = false;     // closed (network thread)
  std::list<resp_connection*>::iterator lru;
  std::atomic<bool> in_ready{false};
  std::atomic<bool> stream_woken{false};
  // Guarded by `mutex`: the reply slots, the first one's sequence number.
  std::mutex mutex;
  std::deque<slot> slots;
  std::uint64_t first_seq = 0;
  bool closed = false;

  bool owes() {
    std::lock_guard lock(mutex);
    return !slots.empty();
  }
  std::size_t owed() {
    std::lock_guard lock(mutex);
    return slots.size();
  }
};

struct resp_server::impl : std::enable_shared_from_this<resp_server::impl> {
  impl(resp_settings s, resp_handlers h) : settings(std::move(s)), handlers(std::move(h)) {}
  ~impl() {
    for (int fd : {listener, epoll_fd, wake_fd})
      if (fd >= 0) ::close(fd);
  }

  resp_settings settings;
  resp_handlers handlers;
  resp_stats stats;
  int listener = -1, epoll_fd = -1, wake_fd = -1;
  std::atomic<bool> running{false};
  std::thread network;
  std::unordered_map<resp_connection*, std::shared_ptr<resp_connection>> conns;
  std::unordered_map<std::string, std::uint32_t> per_address;
  std::list<resp_connection*> lru;  // least recently active first
  std::uint64_t next_id = 1;
  bool accepting = true;
  clock::time_point accept_again;
  // Connections with replies or pushes to send, from any thread.
  std::mutex ready_mutex;
  std::vector<std::shared_ptr<resp_connection>> ready;
  std::atomic<bool> signalled{false};

  void mark_ready(const std::shared_ptr<resp_connection>& c) {
    if (c->in_ready.exchange(true)) return;
    {
      std::lock_guard lock(ready_mutex);
      ready.push_back(c);
    }
    // The network thread drains the list before it sleeps: no wake-up needed.
    if (on_network_thread || signalled.exchange(true)) return;
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto n = ::write(wake_fd, &one, sizeof one);
  }

  void run();
  void accept_all();
  void admit(int fd, const sockaddr_storage& addr);
  bool evict_for(const std::string* address);
  void readable(const std::shared_ptr<resp_connection>& c);
  void process(const std::shared_ptr<resp_connection>& c);
  void flush(const std::shared_ptr<resp_connection>& c);
  void collect(resp_connection& c);
  void pump(const std::shared_ptr<resp_connection>& c);
  void interest(resp_connection& c);
  void close(const std::shared_ptr<resp_connection>& c);
  void sweep();
  void touch(resp_connection& c) {
    c.active = clock::now();
    lru.splice(lru.end(), lru, c.lru);
  }
  bool paused(resp_connection& c) {
    return c.closing || c.owed() >= settings.max_pipeline ||
           c.out.size() - c.out_at >= settings.max_output_bytes;
  }
};

struct resp_reply::state {
  state(std::shared_ptr<resp_connection> c, std::uint64_t s) : owner(std::move(c)), seq(s) {}
  state(const state&) = delete;
  state& operator=(const state&) = delete;
  ~state() {
    if (!answered.exchange(true)) {
      std::string e;
      resp::error(e, "ERR", "the command was not answered");
      fill(std::move(e));
    }
  }
  void fill(std::string bytes) {
    {
      std::lock_guard lock(owner->mutex);
      if (owner->closed || seq < owner->first_seq) return;
      slot& s = owner->slots[seq - owner->first_seq];
      s.bytes = std::move(bytes);
      s.done = true;
    }
    owner->srv->mark_ready(owner);
  }
  std::shared_ptr<resp_connection> owner;
  std::uint64_t seq;
  std::atomic<bool> answered{false};
};

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

void resp_server::impl::process(const std::shared_ptr<resp_connection>& c) {
  collect(*c);  // replies done free their slots: commands held back may go on
  std::vector<std::string> args;
  std::size_t at = 0;
  for (std::size_t ran = 0; ran < commands_per_turn && !paused(*c) && at < c->in.size() &&
                            c->in.size() - at >= c->in_need;
       ++ran) {
    resp_read_limits limits{settings.max_arguments, c->client.max_bulk_bytes, 64 * 1024};
    const resp_parse p = read_command(std::string_view(c->in).substr(at), limits, args);
    if (p.result == resp_parse::status::incomplete) {
      c->in_need = p.bytes;
      if (c->in.size() - at > settings.max_command_bytes) {
        ++stats.protocol_errors;
        std::string e;
        resp::error(e, "ERR",
                    "Protocol error: a command is larger than resp.max_command_bytes (" +
                        std::to_string(settings.max_command_bytes) + ")");
        std::lock_guard lock(c->mutex);
        c->slots.push_back({std::move(e), true});
        c->closing = true;
        c->closing_since = clock::now();
      }
      break;
    }
    c->in_need = 0;
    std::uint64_t seq;
    {
      std::lock_guard lock(c->mutex);
      seq = c->first_seq + c->slots.size();
      c->slots.emplace_back();
      if (p.result == resp_parse::status::error) {
        ++stats.protocol_errors;
        resp::error(c->slots.back().bytes, "ERR", "Protocol error: " + p.error);
        c->slots.back().done = true;
      }
    }
    if (p.result == resp_parse::status::error) {
      c->closing = true;
      c->closing_since = clock::now();
      break;
    }
    at += p.bytes;
    if (p.inline_form && looks_like_http(args)) {
      // A browser's request sent here by another site's page: each header
      // line would be read as a command. Refused and closed (no command ran).
      ++stats.protocol_errors;
      std::lock_guard lock(c->mutex);
      resp::error(c->slots.back().bytes, "ERR",
                  "Protocol error: this is a RESP port, not HTTP (see resp.port)");
      c->slots.back().done = true;
      c->closing = true;
      c->closing_since = clock::now();
      break;
    }
    if (args.empty()) {  // a blank inline line: nothing to answer
      std::lock_guard lock(c->mutex);
      c->slots.pop_back();
      continue;
    }
    ++stats.commands;
    const resp_reply reply(std::make_shared<resp_reply::state>(c, seq));
    try {
      handlers.command(c->client, args, reply);
    } catch (const std::exception& e) {
      std::string r;
      resp::error(r, "ERR", std::string("internal error: ") + e.what());
      reply(std::move(r));
    }
    if (c->client.quit && !c->closing) {
      c->closing = true;
      c->closing_since = clock::now();
    }
  }
  if (at > 0) c->in.erase(0, at);
  c->partial_since = c->in.empty() ? clock::time_point{} : c->partial_since;
  if (!c->in.empty() && c->partial_since == clock::time_point{}) c->partial_since = clock::now();
  flush(c);
}

// Sends the replies that are ready, in order, then what a subscription has
// to push; asks for EPOLLOUT while bytes are left.
void resp_server::impl::flush(const std::shared_ptr<resp_connection>& c) {
  if (c->gone) return;
  collect(*c);
  if (!c->owes()) pump(c);  // pushes never overtake a reply owed
  if (c->gone) return;
  while (c->out_at < c->out.size()) {
    const ssize_t sent =
        ::send(c->fd, c->out.data() + c->out_at, c->out.size() - c->out_at, MSG_NOSIGNAL);
    if (sent > 0) {
      c->out_at += static_cast<std::size_t>(sent);
      c->write_waiting_since = clock::time_point{};
      continue;
    }
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (c->write_waiting_since == clock::time_point{}) c->write_waiting_since = clock::now();
      break;
    }
    close(c);
    return;
  }
  if (c->out_at == c->out.size()) {
    c->out.clear();
    c->out_at = 0;
  } else if (c->out_at > (1u << 20)) {
    c->out.erase(0, c->out_at);
    c->out_at = 0;
  }
  if (c->closing && c->out.empty() && !c->owes()) return close(c);
  interest(*c);
  // Commands read while the connection was paused go on once it is not.
  if (!c->in.empty() && c->in.size() >= c->in_need && !paused(*c)) mark_ready(c);
}

void resp_server::impl::collect(resp_connection& c) {
  std::lock_guard lock(c.mutex);
  while (!c.slots.empty() && c.slots.front().done) {
    c.out += c.slots.front().bytes;
    c.slots.pop_front();
    ++c.first_seq;
  }
}

// A subscription's pushes, while the client takes them.
void resp_server::impl::pump(const std::shared_ptr<resp_connection>& c) {
  if (!c->client.pushes || !c->stream_woken.exchange(false)) return;
  if (c->out.size() - c->out_at >= settings.max_output_bytes) {
    c->stream_woken = true;  // again once the client took some
    return;
  }
  const auto step = c->client.pushes->next(64);
  c->out += step.bytes;
  if (step.close && !c->closing) {
    c->closing = true;
    c->closing_since = clock::now();
  } else if (!step.bytes.empty()) {
    c->stream_woken = true;  // there may be more
    c->srv->mark_ready(c);
  }
}

void resp_server::impl::interest(resp_connection& c) {
  std::uint32_t want = 0;
  if (!paused(c) && c.in.size() <= settings.max_command_bytes) want |= EPOLLIN;
  if (c.out_at < c.out.size()) want |= EPOLLOUT;
  if (want == c.events) return;
  c.events = want;
  epoll_event ev{};
  ev.events = want;
  ev.data.ptr = &c;
  ::epoll_ctl(epoll_fd, EPOLL_CTL_MOD, c.fd, &ev);
}

void resp_server::impl::close(const std::shared_ptr<resp_connection>& c) {
  if (c->gone) return;
  c->gone = true;
  {
    std::lock_guard lock(c->mutex);
    c->closed = true;
    c->slots.clear();
  }
  if (c->client.pushes) {
    c->client.pushes->closed();
    c->client.pushes.reset();
  }
  c->client.wake = nullptr;
  ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, c->fd, nullptr);
  ::close(c->fd);
  lru.erase(c->lru);
  if (--per_address[c->client.address] == 0) per_address.erase(c->client.address);
  --stats.open;
  conns.erase(c.get());
}

// The time limits: a command that takes too long to arrive, replies the
// client leaves untaken, a connection idle too long, a close that waited
// long enough for the replies owed.
void resp_server::impl::sweep() {
  const auto now = clock::now();
  if (!accepting && now >= accept_again) {
    accepting = true;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = listener;
    ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listener, &ev);
    accept_all();
  }
  std::vector<std::shared_ptr<resp_connection>> expired;
  for (auto& [raw, c] : conns) {
    const bool partial = c->partial_since != clock::time_point{} &&
                         now - c->partial_since > settings.command_timeout;
    const bool stalled = c->write_waiting_since != clock::time_point{} &&
                         now - c->write_waiting_since > settings.stalled_timeout;
    const bool idle = !c->client.pushes && c->in.empty() && c->out.empty() &&
                      now - c->active > settings.idle_timeout && !c->owes();
    const bool late_close = c->closing && now - c->closing_since > closing_grace;
    if (partial || stalled || idle || late_close) expired.push_back(c);
  }
  for (auto& c : expired) {
    ++stats.timed_out;
    close(c);
  }
}

}  // namespace mm::server
