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

#include <charconv>
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
  failure(failure_kind k, std::string sqlstate, const std::string& what, std::size_t at = 0)
      : std::runtime_error(what), kind(k), state(std::move(sqlstate)), statement(at) {}
  failure_kind kind;
  std::string state;      // SQLSTATE when the server said one ("40001"), else empty
  std::size_t statement;  // in a pipeline: the index of the statement that failed
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
  // The field's text without a copy; valid while the result lives.
  std::string_view view(std::size_t row, int column) const;
  std::int64_t int64(std::size_t row, int column) const;
  bool boolean(std::size_t row, int column) const;
  // A bytea field's bytes (its text is the hex form, "\\x..."); NULL: empty.
  std::string bytes(std::size_t row, int column) const;

 private:
  struct clear {
    void operator()(pg_result* r) const;
  };
  std::unique_ptr<pg_result, clear> r_;
};

// A statement's parameter: text, or bytes (a bytea, sent in binary), or
// NULL when `value` is empty.
struct param {
  param(std::string text) : value(std::move(text)) {}    // NOLINT: a parameter is its text
  param(const char* text) : value(std::string(text)) {}  // NOLINT
  param(std::nullopt_t) {}                               // NOLINT: NULL
  static param bytes(std::string_view b) {
    param p{std::string(b)};
    p.binary = true;
    return p;
  }
  std::optional<std::string> value;
  bool binary = false;
};
inline param to_param(const param& p) {
  return p;
}
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
// The shortest text that reads back as the same double.
inline param to_param(double x) {
  char buf[32];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, x).ptr);
}

// A statement of a pipeline.
struct statement {
  std::string sql;
  std::vector<param> params;
};

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

  // One statement, within the call's deadline. Without parameters the text
  // may hold several statements (the simple protocol); the answer is the
  // last one's.
  result exec(std::string_view sql, const std::vector<param>& params = {});
  template <class... A>
  result exec_params(std::string_view sql, const A&... args) {
    return exec(sql, {to_param(args)...});
  }
  // The statements sent together and answered together, in one round trip,
  // within the call's deadline. With no BEGIN or COMMIT of their own they
  // are one transaction (the pipeline's implicit one): they all commit at
  // its end, or none does. A failure names the statement (`statement`);
  // the ones after it did not run. One answer per statement.
  std::vector<result> exec_pipeline(const std::vector<statement>& statements);

  // A statement prepared under `name` on every connection made (now, when
  // open, and after each reconnect), run by that name.
  void prepare(const std::string& name, const std::string& sql);
  result exec_prepared(const std::string& name, const std::vector<param>& params);

  // A server variable for every connection made from now on, and for this
  // one when open.
  void set(const std::string& name, const std::string& value);
  // The deadline of each later call; what `open` uses too.
  std::chrono::milliseconds call_timeout() const { return call_timeout_; }
  void set_call_timeout(std::chrono::milliseconds t) { call_timeout_ = t; }

  // A statement on the open connection by `deadline` (a transaction's: its
  // statements share one). Broken when the connection is not open.
  result exec_by(std::chrono::steady_clock::time_point deadline, std::string_view sql,
                 const std::vector<param>& params, bool prepared = false);

  // LISTEN on `channel`, now and after every reconnect.
  void listen(const std::string& channel);
  // Waits up to `timeout` for a notification on a listened channel (ones
  // that came with earlier answers count); true when one came.
  bool wait_for_notification(std::chrono::milliseconds timeout);

 private:
  using clock = std::chrono::steady_clock;
  void connect(clock::time_point deadline);
  enum class send_as { statement, prepared, preparation };
  // Sends `text` (a statement, or a prepared statement's name) and reads its
  // answer, within `deadline`. A preparation's statement is `sql`.
  result run(send_as how, const std::string& text, const std::vector<param>& params,
             clock::time_point deadline, const std::string& sql = {});
  result run(std::string_view sql, const std::vector<param>& params, clock::time_point deadline) {
    return run(send_as::statement, std::string(sql), params, deadline);
  }
  result answer(clock::time_point deadline);
  // Sends what libpq holds, by `deadline`.
  void flush(clock::time_point deadline);
  // The next result (null: the end of a statement's), waiting by `deadline`.
  pg_result* next_result(clock::time_point deadline);
  // Waits for the socket (`events` of poll) until `deadline`: false past it.
  bool wait(short events, clock::time_point deadline) const;
  [[noreturn]] void fail(failure_kind kind, const std::string& why);
  std::size_t take_notifications();

  std::string conninfo_;
  std::chrono::milliseconds call_timeout_;
  std::vector<std::pair<std::string, std::string>> settings_;
  std::vector<std::string> channels_;
  std::vector<std::pair<std::string, std::string>> prepared_;  // name, statement
  std::size_t notified_ = 0;  // notifications taken and not yet waited for
  pg_conn* conn_ = nullptr;
  std::uint64_t generation_ = 0;
};

// Each call on `c` gets `t` while this lives (a migration, an index build),
// then the usual deadline again.
class longer_calls {
 public:
  longer_calls(connection& c, std::chrono::milliseconds t) : c_(c), usual_(c.call_timeout()) {
    c_.set_call_timeout(t);
  }
  ~longer_calls() { c_.set_call_timeout(usual_); }
  longer_calls(const longer_calls&) = delete;
  longer_calls& operator=(const longer_calls&) = delete;

 private:
  connection& c_;
  std::chrono::milliseconds usual_;
};

// `conninfo` with libpq options added (a URL gets "?a=b&c=d", a key=value
// string " a=b c=d").
std::string with_options(const std::string& conninfo,
                         const std::vector<std::pair<std::string, std::string>>& options);

// The client side's limits for a connection whose calls give up within
// `io`: the connect timeout, the kernel giving up on data left
// unacknowledged for `io`, and keepalive probes of an idle link every second.
std::string with_client_limits(const std::string& conninfo, std::chrono::milliseconds io);

// The server side's, set on each connection made (the `settings` of a
// connection): a statement or an idle transaction of a paused or cut-off
// client ends within `io`, and so does the session of a client whose link
// went silent (TCP user timeout and keepalives of the server's socket), or
// who went away mid-statement (client_connection_check_interval).
std::vector<std::pair<std::string, std::string>> server_limits(std::chrono::milliseconds io);

// BEGIN at construction, ROLLBACK at destruction unless committed. Its
// statements, BEGIN to COMMIT, share one deadline: `budget` from its start
// (the connection's call timeout unless given), so that a transaction on a
// link that answers slowly cannot take a call timeout per statement (a
// fenced write holds its lease row until it ends).
class transaction {
 public:
  explicit transaction(connection& c, const char* begin = "BEGIN");
  transaction(connection& c, std::chrono::milliseconds budget, const char* begin = "BEGIN");
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
  result exec_prepared(const std::string& name, const std::vector<param>& params);
  void commit();

 private:
  connection& c_;
  std::chrono::steady_clock::time_point deadline_;
  std::uint64_t generation_ = 0;
  bool done_ = false;
};

}  // namespace mm::pg
