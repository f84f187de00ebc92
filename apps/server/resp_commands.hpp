// The RESP port's commands (docs/api.md, "The RESP port"): the API's routes
// under names a Redis client can send, plus the connection commands every
// Redis client expects (AUTH, HELLO, PING, CLIENT SETNAME, QUIT, COMMAND).
//
// One table, no second implementation: a command names an API route
// (api_routes.hpp). Its arguments become the route's path segments, its JSON
// body and its query parameters; the route then runs exactly as for an HTTP
// request, with the same role check, the same node that serves it, the same
// validation and the same owner (the AUTH token's identity, as a bearer
// token's over HTTP). A success is the route's JSON as one bulk string; a
// failure is one RESP error whose code comes from the HTTP status
// (resp_error_code), so `-NOPERM` is what a 403 is over HTTP.
//
// Where it runs: a route that answers through a reply (a query, a ticket)
// starts on the network thread, as the HTTP server starts it, and a query
// is answered there by the engine when it is free (query_bridge.hpp); a
// route that waits (the player table, the admin bridge) runs on one of
// resp.threads threads.
//
// The ticket events (resp_events.cpp) come two ways: MM.XREAD, shaped as
// Redis Streams' XREAD with COUNT, BLOCK and a resume id, and MM.SUBSCRIBE,
// pushed as they are written (RESP3 push frames; in RESP2 as Redis's own
// subscribed connections get them).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "api_routes.hpp"
#include "resp_server.hpp"

namespace boost::asio {
class thread_pool;
}

namespace mm::server {

struct resp_command_spec {
  std::string name;             // "MM.TICKET.GET": the MM. prefix never clashes with Redis's own
  std::string method, pattern;  // the route it runs: "GET", "/api/tickets/*"
  enum class body_kind { none, required, optional };
  body_kind body = body_kind::none;
  std::vector<std::string> options;  // NAME value pairs: the route's query parameters
  std::string usage;                 // the arguments, for errors and COMMAND DOCS
  std::string summary;
};

// Every command that runs a route, in the order docs/api.md lists them.
const std::vector<resp_command_spec>& resp_command_table();

// The RESP error code for an HTTP status: the one place they are mapped.
// 400 ERR, 401 NOAUTH, 403 NOPERM, 404 NOTFOUND, 409 CONFLICT, 429 BUSY,
// 307 REDIRECT (the owner's address follows), 503 TRYAGAIN, others ERR.
const char* resp_error_code(int status);

// A route's answer as a RESP reply.
std::string resp_answer(const http_response& res);

class resp_commands {
 public:
  // `routes` must outlive this object; so must `ctx`.
  resp_commands(http_context& ctx, std::shared_ptr<const api_routes> routes,
                const resp_settings& settings);
  ~resp_commands();  // waits for the commands running on its threads
  resp_commands(const resp_commands&) = delete;
  resp_commands& operator=(const resp_commands&) = delete;

  resp_handlers handlers();

  // A route's answer as the RESP reply of a command (the connection's protocol).
  using encoder = std::function<std::string(const http_response&, int protocol)>;

 private:
  struct bound {  // a table entry with its route found
    const resp_command_spec* spec;
    std::size_t route;
    std::size_t captures;
  };
  void command(resp_client& client, std::vector<std::string>& args, const resp_reply& reply);
  bool connection_command(resp_client& client, const std::string& name,
                          std::vector<std::string>& args, const resp_reply& reply);
  void run_route(resp_client& client, const bound& b, std::vector<std::string>& args,
                 const resp_reply& reply);
  // Admits and runs `req` for `route`; `encode` turns the answer into RESP.
  void run(http_request req, std::size_t route, const resp_reply& reply, int protocol,
           const encoder& encode);
  http_request request_of(const resp_client& client, const std::string& method,
                          std::string path) const;
  bool authenticate(resp_client& client, const std::string& token, const resp_reply& reply);
  // resp_events.cpp
  void xread(resp_client& client, std::vector<std::string>& args, const resp_reply& reply);
  void subscribe(resp_client& client, std::vector<std::string>& args, const resp_reply& reply);
  void unsubscribe(resp_client& client, const resp_reply& reply);

  http_context& ctx_;
  std::shared_ptr<const api_routes> routes_;
  resp_settings settings_;
  std::vector<bound> bound_;
  std::size_t events_route_;
  std::unique_ptr<boost::asio::thread_pool> pool_;
};

}  // namespace mm::server
