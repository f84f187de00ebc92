// What the RESP port's tests share: a server with the RESP port open and the
// session queues of session_http.hpp, a hiredis connection, and commands
// whose replies are checked by type.
#pragma once

#include <hiredis/hiredis.h>

#include <memory>
#include <string>
#include <vector>

#include "session_http.hpp"

namespace mm::test {

inline json resp_patch(json extra = json::object()) {
  json p = session_patch();
  p["resp"] = {{"port", 0}};
  p.merge_patch(extra);
  return p;
}

struct reply_deleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using reply_ptr = std::unique_ptr<redisReply, reply_deleter>;

class resp_connection {
 public:
  explicit resp_connection(std::uint16_t port) : c_(redisConnect("127.0.0.1", port)) {
    REQUIRE(c_);
    REQUIRE(c_->err == 0);
  }
  ~resp_connection() { redisFree(c_); }
  resp_connection(const resp_connection&) = delete;
  resp_connection& operator=(const resp_connection&) = delete;

  // A command from its arguments (binary-safe: a JSON body is one argument).
  reply_ptr run(const std::vector<std::string>& args) {
    std::vector<const char*> argv;
    std::vector<std::size_t> lens;
    for (const auto& a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    auto* r = static_cast<redisReply*>(
        redisCommandArgv(c_, static_cast<int>(args.size()), argv.data(), lens.data()));
    INFO("connection error: " << c_->errstr);
    REQUIRE(r);
    return reply_ptr(r);
  }
  void append(const std::vector<std::string>& args) {
    std::vector<const char*> argv;
    std::vector<std::size_t> lens;
    for (const auto& a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    REQUIRE(redisAppendCommandArgv(c_, static_cast<int>(args.size()), argv.data(), lens.data()) ==
            REDIS_OK);
  }
  reply_ptr next() {
    void* r = nullptr;
    REQUIRE(redisGetReply(c_, &r) == REDIS_OK);
    return reply_ptr(static_cast<redisReply*>(r));
  }
  // A command that must answer a bulk string of JSON.
  json json_of(const std::vector<std::string>& args) {
    auto r = run(args);
    INFO(args[0] << ": " << (r->type == REDIS_REPLY_ERROR ? r->str : "not an error"));
    REQUIRE(r->type == REDIS_REPLY_STRING);
    return json::parse(std::string(r->str, r->len));
  }
  // A command that must fail: its error line.
  std::string error_of(const std::vector<std::string>& args) {
    auto r = run(args);
    INFO(args[0]);
    REQUIRE(r->type == REDIS_REPLY_ERROR);
    return std::string(r->str, r->len);
  }
  redisContext* raw() { return c_; }

 private:
  redisContext* c_;
};

}  // namespace mm::test
