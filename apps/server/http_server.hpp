// An HTTP/1.1 server that a crowd of idle or slow clients cannot starve.
//
// One network thread reads and writes every connection asynchronously (Asio and
// Beast), so a connection costs a socket and a few hundred bytes, never a
// thread, while it waits. Only a request whose head and body are both in goes
// to a handler thread. Every wait is bounded:
//  - a request head must be complete within `header_timeout` of its first byte
//    (of the connection's opening, for the first request);
//  - a kept-alive connection may sit idle `idle_timeout` between requests;
//  - a body must arrive, and an answer be taken by the client, within
//    `body_timeout`;
//  - a connection serves at most `keep_alive_requests` requests;
//  - heads are at most `max_header_bytes`, bodies at most `max_body_bytes`, and
//    a body must come with a Content-Length (chunked bodies get 411), checked
//    before a byte of it is read.
// Connections are capped in all and per client address. At a cap, a new
// connection takes the place of the connection that has waited longest for a
// request head (idle or slow: it has nothing in progress); only when every
// connection is busy with a request is the new one refused with a 503. So a
// flood of idle connections delays a real client by one eviction, not by the
// flood's length.
//
// Who may send a body is decided before it is read: `admit` sees the head on the
// network thread and may answer at once (401, 403, 404...); when a body is
// left unread the connection then closes.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mm::server {

struct http_limits {
  std::uint32_t threads = 8;  // handler threads (a handler may wait on a matchmaker)
  // One log line per answer (method, path, status, ms, request id) at info;
  // answers of 500 and above but 503 are logged at warning either way.
  bool log_requests = false;
  std::uint32_t max_connections = 4096;
  std::uint32_t max_connections_per_address = 512;
  std::chrono::milliseconds header_timeout{10'000};
  std::chrono::milliseconds idle_timeout{30'000};
  std::chrono::milliseconds body_timeout{30'000};
  std::uint32_t keep_alive_requests = 1000;
  std::uint64_t max_body_bytes = 8u << 20;
  std::uint32_t max_header_bytes = 16 * 1024;
  // Bodies up to this size are given to `start` on the network thread; a
  // larger one (slower to parse) goes through a handler thread first.
  std::uint32_t inline_body_bytes = 16 * 1024;
  // While a deferred reply is owed, the network thread polls for it this long
  // before it sleeps (0: never polls).
  std::chrono::microseconds reply_spin{200};
  // WebSocket connections (http_handlers::upgrade): how many may be open, the
  // largest message a client may send, and how long one may be silent (the
  // server pings it at half that time; a peer that answers nothing is closed).
  std::uint32_t max_websockets = 1024;
  std::uint32_t max_websocket_message_bytes = 4096;
  std::chrono::milliseconds websocket_idle_timeout{60'000};
};

struct http_request;
// A request target ("/api/players?after=5"): its path and its query
// parameters, percent-decoded ('+' a space in the query), into `req`.
void parse_target(std::string_view target, http_request& req);

struct http_request {
  std::string method;                         // "GET", "POST", ...
  std::string path;                           // percent-decoded, without the query
  std::map<std::string, std::string> params;  // the query, decoded; the first of a name wins
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::string remote_address;
  // The request's id (request_id_of): the answer's X-Request-Id, and in what
  // is logged on its behalf.
  std::string id;
  // Set by `admit` for `handle`: which route, and the path's captured groups.
  int route = -1;
  std::vector<std::string> matches;

  bool has_header(std::string_view name) const;
  std::string header(std::string_view name) const;  // "" when absent; names ignore case
  bool has_param(const std::string& name) const { return params.count(name) != 0; }
  std::string param(const std::string& name) const;
};

struct http_response {
  int status = 200;
  std::string content_type = "text/plain";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;

  void set_content(std::string b, std::string type) {
    body = std::move(b);
    content_type = std::move(type);
  }
  void set_header(std::string name, std::string value) {
    headers.emplace_back(std::move(name), std::move(value));
  }
};

// What the server counts of its connections, for /metrics.
struct http_connection_stats {
  std::atomic<std::uint64_t> open{0};      // now
  std::atomic<std::uint64_t> accepted{0};  // since start
  std::atomic<std::uint64_t> evicted{0};   // closed to make room for a new one
  std::atomic<std::uint64_t> refused{
      0};  // 503 (every connection busy), or not accepted (no file descriptor left)
  std::atomic<std::uint64_t> timed_out{0};
  std::atomic<std::uint64_t> malformed{0};   // not HTTP, or a head over the limit
  std::atomic<std::uint64_t> websockets{0};  // WebSocket connections open now (not in `open`)
};

// What a WebSocket connection carries, after `http_handlers::upgrade` took
// it. The server calls it on its network thread only, one call at a time,
// and sends a step's messages in order before it asks for more.
class websocket_feed {
 public:
  struct step {
    std::vector<std::string> messages;  // text messages to send, in order
    // Then close with this code and reason (at most 123 bytes).
    std::optional<std::pair<std::uint16_t, std::string>> close;
  };
  virtual ~websocket_feed() = default;
  // The handshake is done. `wake` (any thread, any number of times) makes the
  // server call `next` soon on its network thread.
  virtual step opened(std::function<void()> wake) = 0;
  // Up to `max` messages to send now. With `max` 0 (a message is still being
  // sent), only whether to close: a client too slow to take what it is owed.
  virtual step next(std::size_t max) = 0;
  // A text message from the client (at most max_websocket_message_bytes).
  virtual step received(std::string_view text) = 0;
  // The connection ended, either side. Called once, last.
  virtual void closed() = 0;
};

// What `upgrade` decides for a WebSocket handshake: a feed, a refusal, or
// neither (the route is not a WebSocket one: the request is served as plain
// HTTP).
struct websocket_answer {
  std::shared_ptr<websocket_feed> feed;
  std::optional<http_response> refusal;
};

// The answer to a request that a handler finishes later, from any thread,
// without holding one while it waits. The first call sends the answer; a reply
// whose last copy is dropped unanswered sends a 500, so no client is left
// waiting on a connection that nothing will answer.
//
// Where the answer goes is a `sink`: an HTTP connection's (http_server.cpp),
// or another door's that serves the same routes (the RESP port's).
class http_reply {
 public:
  class sink {
   public:
    virtual ~sink() = default;
    virtual void deliver(http_response answer) = 0;
  };
  struct state;  // http_server.cpp: an HTTP connection's sink
  explicit http_reply(std::shared_ptr<sink> s) : sink_(std::move(s)) {}
  void operator()(http_response answer) const { sink_->deliver(std::move(answer)); }

 private:
  std::shared_ptr<sink> sink_;
};

struct http_handlers {
  // On the network thread, once a head is in and before the body is read: an
  // answer to send instead of reading on, or nothing to go on. Must not block.
  // (A request with no body answered here keeps its connection: static files
  // are served this way, without a handler thread.)
  std::function<std::optional<http_response>(http_request&)> admit;
  // With the body read, for a request that is answered later through `reply`
  // (false: not such a request, `handle` takes it). Must not block. Runs on
  // the network thread when the body is at most `inline_body_bytes`, else on
  // a handler thread. Exceptions are answered with 500.
  std::function<bool(http_request&, const http_reply& reply)> start;
  // On a handler thread, with the body read. Exceptions are answered with 500.
  std::function<http_response(http_request&)> handle;
  // The answer for the server's own refusals (400, 408, 411, 413, 431, 500, 503).
  std::function<http_response(int status, const std::string& message)> error;
  // A WebSocket handshake (a GET with Upgrade: websocket) that `admit` let
  // through: on the network thread, must not block. Unset: no WebSockets.
  std::function<websocket_answer(http_request&)> upgrade;
  // Every answer sent (for counters); on the network thread.
  std::function<void(int status)> answered;
};

class http_server {
 public:
  http_server(http_limits limits, http_handlers handlers);
  ~http_server();  // stops
  http_server(const http_server&) = delete;
  http_server& operator=(const http_server&) = delete;

  // Binds and starts serving; port 0 picks a free port. Returns the port.
  // Throws std::runtime_error naming the address when it cannot bind.
  std::uint16_t listen(const std::string& host, std::uint16_t port);
  // Closes every connection after the handlers running now, and the replies
  // still owed, have answered (a reply owed longer than `body_timeout` is
  // abandoned with its connection).
  void stop();

  const http_connection_stats& stats() const;

  // The server's insides (http_server_impl.hpp), for its connections' code.
  struct impl;

 private:
  friend class http_reply;
  std::shared_ptr<impl> impl_;  // shared with replies still owed
};

// A request's id: the client's X-Request-Id when it is 1 to 64 characters of
// letters, digits and "._:-" (so that a proxy's id is followed through),
// else 16 hex digits made here.
std::string request_id_of(const http_request& req);

// Raises this process's open-file limit to its hard limit (each connection is
// a file descriptor); returns the limit now in force.
std::uint64_t raise_open_file_limit();

}  // namespace mm::server
