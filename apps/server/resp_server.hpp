// The RESP port's network layer: one thread, epoll, non-blocking sockets, no
// knowledge of any command (resp_commands.cpp gives it their meaning).
//
// A connection's bytes are read, its commands parsed (resp_protocol.hpp) and
// handed to `resp_handlers::command` one after another on the network
// thread, many per read. Each command gets a slot in the connection's reply
// queue; its reply fills the slot now (answered on this thread) or later
// from any thread, and replies leave in the order the commands came, as many
// per write as are ready. So a pipelining client is batched for free.
//
// Every wait and every byte is bounded (resp_settings): the bytes buffered
// for an unfinished command, the commands whose replies are owed (the
// connection is not read further until some are sent), the reply bytes a
// client has not taken (idem), the time a command may take to arrive, the
// time a client may leave its replies untaken, the idle time, and the
// connections in all and per address. At a cap a new connection takes the
// place of the one that was quiet longest with nothing owed; only when every
// connection is busy is it refused. TCP keepalive finds half-open peers.
// A protocol error is answered with one error reply, after the replies owed,
// and the connection is closed.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace mm::server {

struct resp_settings {
  std::string host = "127.0.0.1";
  // -2: 6380 on the demo database, off otherwise; -1: off; 0: any free port.
  std::int32_t port = -2;
  std::uint32_t threads = 4;  // for commands that wait (the player table, the admin bridge)
  std::uint32_t max_connections = 10'000;
  std::uint32_t max_connections_per_address = 10'000;
  std::chrono::milliseconds idle_timeout{600'000};
  std::chrono::milliseconds command_timeout{10'000};  // from a command's first byte to its last
  std::chrono::milliseconds stalled_timeout{30'000};  // replies left untaken by the client
  std::size_t max_arguments = 1024;
  std::size_t max_bulk_bytes = 1u << 20;
  std::size_t max_command_bytes = 2u << 20;  // one command, all its arguments
  std::size_t max_pipeline = 1024;           // commands whose replies are owed
  std::size_t max_output_bytes = 4u << 20;   // reply bytes the client has not taken
};

// A connection as the commands see it: on the network thread only.
struct resp_client {
  std::uint64_t id = 0;
  std::string address;
  int protocol = 2;   // HELLO 3: RESP3
  std::string token;  // AUTH's; empty: none given
  bool authenticated = false;
  std::string name;  // CLIENT SETNAME
  // The bulk size the reader takes now: small until the client authenticated
  // when tokens are required (a body is not read before its sender is known).
  std::size_t max_bulk_bytes = 0;
  bool quit = false;  // close once the replies owed are sent
  // A subscription: what the connection pushes (set by a command).
  class stream {
   public:
    struct step {
      std::string bytes;   // encoded frames to send
      bool close = false;  // then close the connection
    };
    virtual ~stream() = default;
    virtual step next(std::size_t max_frames) = 0;
    virtual void closed() = 0;  // once, last
  };
  std::shared_ptr<stream> pushes;
  // From any thread: makes the network thread call pushes->next soon.
  std::function<void()> wake;
};

// A command's reply: call once, from any thread, with the encoded reply. A
// reply whose last copy goes uncalled answers an error, so the connection's
// later replies are never held behind it.
class resp_reply {
 public:
  struct state;  // resp_server.cpp
  explicit resp_reply(std::shared_ptr<state> s) : state_(std::move(s)) {}
  void operator()(std::string encoded) const;

 private:
  std::shared_ptr<state> state_;
};

struct resp_handlers {
  // A command (args[0] is its name), on the network thread: must not block.
  std::function<void(resp_client&, std::vector<std::string>& args, const resp_reply&)> command;
  // A connection opened (before its first command): may set its limits.
  std::function<void(resp_client&)> opened;
};

struct resp_stats {
  std::atomic<std::uint64_t> open{0}, accepted{0}, evicted{0}, refused{0}, timed_out{0},
      protocol_errors{0}, commands{0};
};

class resp_server {
 public:
  resp_server(resp_settings settings, resp_handlers handlers);
  ~resp_server();  // stops
  resp_server(const resp_server&) = delete;
  resp_server& operator=(const resp_server&) = delete;

  // Binds and serves; port 0 picks a free one. Returns the port. Throws
  // std::runtime_error naming the address when it cannot bind.
  std::uint16_t listen(const std::string& host, std::uint16_t port);
  void stop();  // closes every connection; replies that come later are dropped
  const resp_stats& stats() const;

  struct impl;

 private:
  std::shared_ptr<impl> impl_;
};

}  // namespace mm::server
