// The HTTP server's insides, shared by http_server.cpp (HTTP connections)
// and websocket_session.cpp (the connections that became WebSockets).
#pragma once

// clang-format off
#include <utility>  // before Asio: its awaitable.hpp uses std::exchange
// clang-format on
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <list>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>

#include "http_server.hpp"

namespace mm::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

class http_session;
class websocket_session;

// The request an HTTP connection is answering (http_request_log.cpp).
struct answered_request {
  std::string id, method, path;
  std::chrono::steady_clock::time_point since;
};

// Its line in the log: every answer when `every` (log.requests), and a
// server's failure (500 and above but 503, which says "not now": a
// takeover, a node not ready) always (mm/engine/log.hpp).
void log_http_answer(const answered_request& r, int status, const std::string& from, bool every);

struct http_server::impl : std::enable_shared_from_this<http_server::impl> {
  impl(http_limits l, http_handlers h) : limits(l), handlers(std::move(h)) {}

  http_limits limits;
  http_handlers handlers;
  http_connection_stats stats;
  // Replies that `start` took and has not answered yet (see http_reply::state).
  std::atomic<std::uint64_t> replies_owed{0};

  // Network thread only. Every open connection, and those waiting for a
  // request head in the order they began to wait (the eviction order).
  std::list<http_session*> all;
  std::list<http_session*> waiting;
  std::unordered_map<std::string, std::uint32_t> per_address;
  std::list<websocket_session*> websockets;  // network thread only

  std::unique_ptr<asio::thread_pool> handler_pool;  // `threads` handler threads
  std::thread network_thread;
  bool running = false;
  bool accepting = true;  // network thread: false once stopping
  // Declared last, destroyed first: the handlers it still holds release their
  // sessions while the bookkeeping above is alive.
  asio::io_context io{1};
  // Keeps the network thread running while nothing is pending, so that stop()
  // can always post to it.
  asio::executor_work_guard<asio::io_context::executor_type> keep_running{io.get_executor()};
  tcp::acceptor acceptor{io};
  asio::steady_timer retry_accept{io};

  void run_network();
  void accept();
  void admit_connection(tcp::socket socket);
  bool evict_one(const std::string* address);
};

}  // namespace mm::server
