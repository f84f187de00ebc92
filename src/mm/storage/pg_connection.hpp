// A PostgreSQL connection over libpq itself, for the code that must hold
// under network faults (the lease agent first). Two things libpqxx 6.4
// (Debian 12's) does not give:
//
// - Every call is bounded in time on the client: connecting, sending and
//   waiting for the answer all wait on the socket with one deadline per
//   call (`call_timeout`). Past it the connection is closed and the call
//   fails as timed_out; the next call connects again. The server ends what
//   the closed connection left behind by its own limits, set on every
//   connection (statement_timeout, idle_in_transaction_session_timeout, and
//   the server side's TCP user timeout and keepalives), so neither side waits
//   on a silent link for ever. No thread is needed to watch a call.
// - A result is owned from the moment libpq returns it. libpqxx 6.4 asks the
//   connection's encoding after libpq returned a result and before anything
//   owns it; when the connection broke during the statement that throws, and
//   the result (a 216-byte header and its 2 KiB block) is lost: 2.2 KiB a
//   broken statement, measured by mm_pg_broken_bench.
//
// One thread uses a connection at a time. Errors are pg::failure with a
// kind (what the caller decides on) and the server's SQLSTATE; never parsed
// from a message.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

struct pg_conn;
struct pg_result;

namespace mm::pg {

enum class failure_kind {
  broken,     // the connection is gone (or could not be made): it is closed
  timed_out,  // the call's deadline passed, or the server's statement_timeout
  refused,    // the server refused the statement (an SQL error); still open
};

class failure : public std::runtime_error {
 public:
  failure(failure_kind k, std::string sqlstate, const std::string& what)
      : std::runtime_error(what), kind(k), state(std::move(sqlstate)) {}
  failure_kind kind;
  std::string state;  // SQLSTATE when the server said one ("40001"), else empty
};

// One statement's rows, as text (the statements here ask for text results).
class result {
 public:
  explicit result(pg_result* r);
  std::size_t size() const;
  bool empty() const { return size() == 0; }
  std::uint64_t affected_rows() const;  // of an INSERT, UPDATE or DELETE
  bool is_null(std::size_t row, int column) const;
  std::string text(std::size_t row, int column) const;
  std::int64_t int64(std::size_t row, int column) const;
  bool boolean(std::size_t row, int column) const;

 private:
  struct clear {
    void operator()(pg_result* r) const;
  };
  std::unique_ptr<pg_result, clear> r_;
};

// A statement's parameters, as text: null when absent.
using param = std::optional<std::string>;
inline param to_param(const std::string& s) {
  return s;
}
inline param to_param(const char* s) {
  return std::string(s);
}
inline param to_param(std::int64_t x) {
  return std::to_string(x);
}
inline param to_param(std::uint64_t x) {
  return std::to_string(x);
}
inline param to_param(int x) {
  return std::to_string(x);
}
inline param to_param(bool x) {
  return std::string(x ? "true" : "false");
}

class connection {
 public:
  // `conninfo`: a libpq URL or key=value string. `settings`: the server's
  // variables for every connection made (set again after each reconnect).
  // Nothing is connected until the first call.
  connection(std::string conninfo, std::chrono::milliseconds call_timeout,
             std::vector<std::pair<std::string, std::string>> settings = {});
  ~connection();
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  bool is_open() const { return conn_ != nullptr; }
  // Counts the connections made: a transaction refuses to go on over a new one.
  std::uint64_t generation() const { return generation_; }
  // Connects when not connected (then sets `settings` and listens again).
  void open();
  // Closes; the next call connects again.
  void close();

  // One statement, within the call's deadline.
  result exec(std::string_view sql, const std::vector<param>& params = {});
  template <class... A>
  result exec_params(std::string_view sql, const A&... args) {
    return exec(sql, {to_param(args)...});
  }

  // LISTEN on `channel`, now and after every reconnect.
  void listen(const std::string& channel);
  // Waits up to `timeout` for a notification on a listened channel (ones
  // that came with earlier answers count); true when one came.
  bool wait_for_notification(std::chrono::milliseconds timeout);

 private:
  using clock = std::chrono::steady_clock;
  void connect(clock::time_point deadline);
  result run(std::string_view sql, const std::vector<param>& params, clock::time_point deadline);
  // Waits for the socket (`events` of poll) until `deadline`: false past it.
  bool wait(short events, clock::time_point deadline) const;
  [[noreturn]] void fail(failure_kind kind, const std::string& why);
  std::size_t take_notifications();

  std::string conninfo_;
  std::chrono::milliseconds call_timeout_;
  std::vector<std::pair<std::string, std::string>> settings_;
  std::vector<std::string> channels_;
  std::size_t notified_ = 0;  // notifications taken and not yet waited for
  pg_conn* conn_ = nullptr;
  std::uint64_t generation_ = 0;
};

// BEGIN at construction, ROLLBACK at destruction unless committed.
class transaction {
 public:
  explicit transaction(connection& c, const char* begin = "BEGIN");
  ~transaction();
  transaction(const transaction&) = delete;
  transaction& operator=(const transaction&) = delete;

  // A statement in the transaction: broken when its connection was lost
  // since BEGIN (a new one would run it outside).
  result exec(std::string_view sql, const std::vector<param>& params = {});
  template <class... A>
  result exec_params(std::string_view sql, const A&... args) {
    return exec(sql, {to_param(args)...});
  }
  void commit();

 private:
  connection& c_;
  std::uint64_t generation_;
  bool done_ = false;
};

}  // namespace mm::pg
