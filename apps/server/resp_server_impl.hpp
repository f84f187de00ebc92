// The RESP port's inside, shared by its two files: resp_server.cpp (the
// listener, the loop, connections admitted and closed) and
// resp_connection_io.cpp (a connection's commands read and run, and its
// replies and pushes sent in order). Included by those two alone.
#pragma once

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "resp_server.hpp"

namespace mm::server {

namespace resp_detail {

using clock = std::chrono::steady_clock;
inline constexpr std::size_t read_chunk = 64 * 1024;
// What one turn of the loop does for one source, so that none holds the
// others back: connections accepted, commands run for one connection (the
// rest wait for the next turn).
inline constexpr int accepts_per_turn = 16;
inline constexpr std::size_t commands_per_turn = 32;
inline constexpr auto sweep_every = std::chrono::milliseconds(250);
// After a protocol error or QUIT, the replies still owed get this long.
inline constexpr auto closing_grace = std::chrono::seconds(5);

inline thread_local bool on_network_thread = false;

// One reply slot: filled now or later, sent in order.
struct slot {
  std::string bytes;
  bool done = false;
};

}  // namespace resp_detail

using resp_detail::clock;
using resp_detail::slot;

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
    if (resp_detail::on_network_thread || signalled.exchange(true)) return;
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

}  // namespace mm::server
