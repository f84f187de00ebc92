#include "mm/storage/pg_connection.hpp"

#include <libpq-fe.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>

namespace mm::pg {

namespace {

// SQLSTATEs that mean a statement ran out of time on the server
// (statement_timeout, lock_timeout) rather than being wrong.
bool is_timeout_state(const std::string& s) {
  return s == "57014" || s == "55P03";
}

// Classes of SQLSTATE that mean the server is ending or has ended the
// session: 57P0x (admin shutdown, crash shutdown, cannot connect now), 08
// (connection exceptions).
bool is_broken_state(const std::string& s) {
  return s.rfind("57P0", 0) == 0 || s.rfind("08", 0) == 0;
}

std::string trimmed(const char* message) {
  std::string m = message ? message : "";
  while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
  return m;
}

}  // namespace

std::string with_options(const std::string& conninfo,
                         const std::vector<std::pair<std::string, std::string>>& options) {
  const bool is_url =
      conninfo.rfind("postgresql://", 0) == 0 || conninfo.rfind("postgres://", 0) == 0;
  std::string out = conninfo;
  for (const auto& [key, value] : options) {
    if (is_url)
      out += (out.find('?') == std::string::npos ? "?" : "&") + key + "=" + value;
    else
      out += " " + key + "=" + value;
  }
  return out;
}

namespace {
std::int64_t whole_seconds(std::chrono::milliseconds d) {
  return std::max<std::int64_t>(1, (static_cast<std::int64_t>(d.count()) + 999) / 1000);
}
}  // namespace

std::string with_client_limits(const std::string& conninfo, std::chrono::milliseconds io) {
  return with_options(
      conninfo, {{"connect_timeout", std::to_string(std::max<std::int64_t>(2, whole_seconds(io)))},
                 {"tcp_user_timeout", std::to_string(io.count())},
                 {"keepalives", "1"},
                 {"keepalives_idle", "1"},
                 {"keepalives_interval", "1"},
                 {"keepalives_count", "3"}});
}

std::vector<std::pair<std::string, std::string>> server_limits(std::chrono::milliseconds io) {
  const std::string t = std::to_string(io.count());
  return {{"statement_timeout", t},
          {"idle_in_transaction_session_timeout", t},
          {"tcp_user_timeout", t},
          {"tcp_keepalives_idle", "1"},
          {"tcp_keepalives_interval", "1"},
          {"tcp_keepalives_count", "3"},
          {"client_connection_check_interval", std::to_string(whole_seconds(io)) + "s"}};
}

result::result(pg_result* r) : r_(r) {}

void result::clear::operator()(pg_result* r) const {
  PQclear(r);
}

std::size_t result::size() const {
  return static_cast<std::size_t>(PQntuples(r_.get()));
}

std::uint64_t result::affected_rows() const {
  const char* n = PQcmdTuples(r_.get());
  return n && *n ? std::stoull(n) : 0;
}

bool result::is_null(std::size_t row, int column) const {
  return PQgetisnull(r_.get(), static_cast<int>(row), column) != 0;
}

std::string_view result::view(std::size_t row, int column) const {
  if (row >= size() || column < 0 || column >= PQnfields(r_.get()))
    throw failure(failure_kind::refused, {},
                  "no field " + std::to_string(column) + " in row " + std::to_string(row));
  const int r = static_cast<int>(row);
  return {PQgetvalue(r_.get(), r, column),
          static_cast<std::size_t>(PQgetlength(r_.get(), r, column))};
}

std::string result::text(std::size_t row, int column) const {
  return std::string(view(row, column));
}

std::string result::bytes(std::size_t row, int column) const {
  const std::string_view hex = view(row, column);
  if (is_null(row, column)) return {};
  if (hex.size() < 2 || hex[0] != '\\' || hex[1] != 'x' || hex.size() % 2 != 0)
    throw failure(failure_kind::refused, {},
                  "field " + std::to_string(column) + " is not bytea's hex form");
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    throw failure(failure_kind::refused, {}, "a bytea field holds a non-hex digit");
  };
  std::string out((hex.size() - 2) / 2, '\0');
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<char>(digit(hex[2 + 2 * i]) * 16 + digit(hex[3 + 2 * i]));
  return out;
}

std::int64_t result::int64(std::size_t row, int column) const {
  return std::stoll(text(row, column));
}

bool result::boolean(std::size_t row, int column) const {
  return text(row, column) == "t";
}

connection::connection(std::string conninfo, std::chrono::milliseconds call_timeout,
                       std::vector<std::pair<std::string, std::string>> settings)
    : conninfo_(std::move(conninfo)), call_timeout_(call_timeout), settings_(std::move(settings)) {}

connection::~connection() {
  close();
}

void connection::close() {
  if (conn_) PQfinish(conn_);
  conn_ = nullptr;
}

void connection::fail(failure_kind kind, const std::string& why) {
  if (kind != failure_kind::refused) close();
  throw failure(kind, {}, why);
}

bool connection::wait(short events, clock::time_point deadline) const {
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
    if (left <= 0) return false;
    pollfd p{PQsocket(conn_), events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 60'000)));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return true;  // let libpq see and name the error
  }
}

void connection::open() {
  if (conn_) return;
  const auto deadline = clock::now() + call_timeout_;
  connect(deadline);
  // A connection without its settings or its LISTENs is not kept: the next
  // call tries again from the start.
  try {
    for (const auto& [name, value] : settings_)
      // set_config skips what this server does not know, where SET would fail.
      run("SELECT set_config(name, $2, false) FROM pg_settings WHERE name = $1", {name, value},
          deadline);
    for (const auto& channel : channels_) run("LISTEN \"" + channel + "\"", {}, deadline);
    for (const auto& [name, sql] : prepared_) run(send_as::preparation, name, {}, deadline, sql);
  } catch (const failure&) {
    close();
    throw;
  }
}

void connection::connect(clock::time_point deadline) {
  // expand_dbname: `conninfo` may be a URL or key=value pairs.
  const char* keys[] = {"dbname", nullptr};
  const char* values[] = {conninfo_.c_str(), nullptr};
  conn_ = PQconnectStartParams(keys, values, 1);
  if (!conn_) throw failure(failure_kind::broken, {}, "out of memory for a connection");
  if (PQstatus(conn_) == CONNECTION_BAD)
    fail(failure_kind::broken, "cannot connect: " + trimmed(PQerrorMessage(conn_)));
  for (PostgresPollingStatusType s = PGRES_POLLING_WRITING;;) {
    if (s == PGRES_POLLING_OK) break;
    if (s == PGRES_POLLING_FAILED)
      fail(failure_kind::broken, "cannot connect: " + trimmed(PQerrorMessage(conn_)));
    if (!wait(s == PGRES_POLLING_READING ? POLLIN : POLLOUT, deadline))
      fail(failure_kind::timed_out,
           "cannot connect within " + std::to_string(call_timeout_.count()) + " ms");
    s = PQconnectPoll(conn_);
  }
  if (PQsetnonblocking(conn_, 1) != 0)
    fail(failure_kind::broken, "cannot make the connection non-blocking");
  ++generation_;
}

result connection::exec(std::string_view sql, const std::vector<param>& params) {
  open();
  return run(sql, params, clock::now() + call_timeout_);
}

std::vector<result> connection::exec_pipeline(const std::vector<statement>& statements) {
  open();
  const auto deadline = clock::now() + call_timeout_;
  if (!PQenterPipelineMode(conn_))
    fail(failure_kind::broken, "cannot start a pipeline: " + trimmed(PQerrorMessage(conn_)));
  for (const auto& s : statements) {
    std::vector<const char*> values;
    std::vector<int> lengths, formats;
    for (const auto& p : s.params) {
      values.push_back(p.value ? p.value->data() : nullptr);
      lengths.push_back(p.value ? static_cast<int>(p.value->size()) : 0);
      formats.push_back(p.binary ? 1 : 0);
    }
    if (!PQsendQueryParams(conn_, s.sql.c_str(), static_cast<int>(values.size()), nullptr,
                           values.data(), lengths.data(), formats.data(), 0))
      fail(failure_kind::broken, "cannot send a statement: " + trimmed(PQerrorMessage(conn_)));
  }
  if (!PQpipelineSync(conn_))
    fail(failure_kind::broken, "cannot end a pipeline: " + trimmed(PQerrorMessage(conn_)));
  flush(deadline);
  // Each statement's results end with a null; the sync's result ends all.
  std::vector<result> out;
  out.reserve(statements.size());
  std::optional<failure> first;
  for (std::size_t i = 0; i <= statements.size(); ++i) {
    pg_result* r = next_result(deadline);
    if (!r) fail(failure_kind::broken, "a pipeline's answer ended early");
    result owned(r);  // owned before anything else is asked
    const ExecStatusType status = PQresultStatus(r);
    if (i == statements.size()) {
      if (status != PGRES_PIPELINE_SYNC) fail(failure_kind::broken, "a pipeline lost its sync");
      break;
    }
    if (status == PGRES_FATAL_ERROR && !first) {
      const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
      const std::string code = state ? state : "";
      const bool lost = PQstatus(conn_) == CONNECTION_BAD || is_broken_state(code);
      first.emplace(lost                     ? failure_kind::broken
                    : is_timeout_state(code) ? failure_kind::timed_out
                                             : failure_kind::refused,
                    code, trimmed(PQresultErrorMessage(r)), i);
    }
    out.push_back(std::move(owned));
    if (next_result(deadline))
      fail(failure_kind::broken, "a statement of a pipeline had two answers");
  }
  if (!PQexitPipelineMode(conn_))
    fail(failure_kind::broken, "cannot leave a pipeline: " + trimmed(PQerrorMessage(conn_)));
  take_notifications();
  if (first) {
    if (first->kind == failure_kind::broken) close();
    throw *first;
  }
  return out;
}

void connection::flush(clock::time_point deadline) {
  for (int f; (f = PQflush(conn_)) != 0;) {
    if (f < 0) fail(failure_kind::broken, "cannot send: " + trimmed(PQerrorMessage(conn_)));
    if (!wait(POLLIN | POLLOUT, deadline))
      fail(failure_kind::timed_out,
           "no answer within " + std::to_string(call_timeout_.count()) + " ms");
    if (!PQconsumeInput(conn_))
      fail(failure_kind::broken, "connection lost: " + trimmed(PQerrorMessage(conn_)));
  }
}

pg_result* connection::next_result(clock::time_point deadline) {
  while (PQisBusy(conn_)) {
    if (!wait(POLLIN, deadline))
      fail(failure_kind::timed_out,
           "no answer within " + std::to_string(call_timeout_.count()) + " ms");
    if (!PQconsumeInput(conn_))
      fail(failure_kind::broken, "connection lost: " + trimmed(PQerrorMessage(conn_)));
  }
  return PQgetResult(conn_);
}

result connection::exec_by(clock::time_point deadline, std::string_view sql,
                           const std::vector<param>& params, bool prepared) {
  if (!conn_) throw failure(failure_kind::broken, {}, "the connection is not open");
  if (clock::now() >= deadline)
    fail(failure_kind::timed_out, "the transaction's time ran out before its next statement");
  return run(prepared ? send_as::prepared : send_as::statement, std::string(sql), params, deadline);
}

result connection::exec_prepared(const std::string& name, const std::vector<param>& params) {
  open();
  return run(send_as::prepared, name, params, clock::now() + call_timeout_);
}

void connection::prepare(const std::string& name, const std::string& sql) {
  for (auto& [n, s] : prepared_)
    if (n == name) throw failure(failure_kind::refused, {}, "'" + name + "' is prepared already");
  prepared_.emplace_back(name, sql);
  // Prepared by `open` when it connects; here only on a connection open now.
  if (conn_) run(send_as::preparation, name, {}, clock::now() + call_timeout_, sql);
}

void connection::set(const std::string& name, const std::string& value) {
  bool known = false;
  for (auto& [n, v] : settings_)
    if (n == name) {
      v = value;
      known = true;
    }
  if (!known) settings_.emplace_back(name, value);
  if (conn_)
    run("SELECT set_config(name, $2, false) FROM pg_settings WHERE name = $1", {name, value},
        clock::now() + call_timeout_);
}

result connection::run(send_as how, const std::string& text, const std::vector<param>& params,
                       clock::time_point deadline, const std::string& sql) {
  std::vector<const char*> values;
  std::vector<int> lengths, formats;
  values.reserve(params.size());
  lengths.reserve(params.size());
  formats.reserve(params.size());
  for (const auto& p : params) {
    values.push_back(p.value ? p.value->data() : nullptr);
    lengths.push_back(p.value ? static_cast<int>(p.value->size()) : 0);
    formats.push_back(p.binary ? 1 : 0);
  }
  const int n = static_cast<int>(values.size());
  // Without parameters, the simple protocol: one text may hold several
  // statements (a migration's file); the last one's result is the answer.
  const int sent = how == send_as::statement && n == 0 ? PQsendQuery(conn_, text.c_str())
                   : how == send_as::statement
                       ? PQsendQueryParams(conn_, text.c_str(), n, nullptr, values.data(),
                                           lengths.data(), formats.data(), 0)
                   : how == send_as::prepared
                       ? PQsendQueryPrepared(conn_, text.c_str(), n, values.data(), lengths.data(),
                                             formats.data(), 0)
                       : PQsendPrepare(conn_, text.c_str(), sql.c_str(), 0, nullptr);
  if (!sent)
    fail(failure_kind::broken, "cannot send a statement: " + trimmed(PQerrorMessage(conn_)));
  return answer(deadline);
}

result connection::answer(clock::time_point deadline) {
  flush(deadline);  // a large statement may need the socket writable more than once
  // Reading every result of the statement, each owned as it comes; the last
  // one is the answer (one statement gives one, then none).
  std::optional<result> last;
  std::string error_state, error_text;
  for (;;) {
    pg_result* r = next_result(deadline);
    if (!r) break;
    result owned(r);  // owned before anything else is asked
    const ExecStatusType status = PQresultStatus(r);
    if (status == PGRES_FATAL_ERROR || status == PGRES_BAD_RESPONSE ||
        status == PGRES_NONFATAL_ERROR) {
      const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
      error_state = state ? state : "";
      error_text = trimmed(PQresultErrorMessage(r));
    }
    last.emplace(std::move(owned));
  }
  take_notifications();
  if (PQstatus(conn_) == CONNECTION_BAD || is_broken_state(error_state)) {
    const std::string why = error_text.empty() ? trimmed(PQerrorMessage(conn_)) : error_text;
    close();
    throw failure(failure_kind::broken, error_state, "connection lost: " + why);
  }
  if (!error_state.empty() || !error_text.empty())
    throw failure(is_timeout_state(error_state) ? failure_kind::timed_out : failure_kind::refused,
                  error_state, error_text);
  if (!last) fail(failure_kind::broken, "no result for a statement");
  return std::move(*last);
}

void connection::listen(const std::string& channel) {
  if (std::find(channels_.begin(), channels_.end(), channel) == channels_.end())
    channels_.push_back(channel);
  exec("LISTEN \"" + channel + "\"");
}

std::size_t connection::take_notifications() {
  std::size_t n = 0;
  while (PGnotify* note = PQnotifies(conn_)) {
    PQfreemem(note);
    ++n;
  }
  notified_ += n;
  return n;
}

bool connection::wait_for_notification(std::chrono::milliseconds timeout) {
  open();
  const auto deadline = clock::now() + timeout;
  for (;;) {
    if (notified_ > 0) {
      notified_ = 0;
      return true;
    }
    if (!wait(POLLIN, deadline)) return false;
    if (!PQconsumeInput(conn_))
      fail(failure_kind::broken, "connection lost: " + trimmed(PQerrorMessage(conn_)));
    take_notifications();
  }
}

transaction::transaction(connection& c, const char* begin)
    : transaction(c, c.call_timeout(), begin) {}

transaction::transaction(connection& c, std::chrono::milliseconds budget, const char* begin)
    : c_(c), deadline_(std::chrono::steady_clock::now() + budget) {
  c_.open();
  generation_ = c_.generation();
  c_.exec_by(deadline_, begin, {});
}

result transaction::exec(std::string_view sql, const std::vector<param>& params) {
  if (!c_.is_open() || c_.generation() != generation_)
    throw failure(failure_kind::broken, {}, "the connection was lost during the transaction");
  return c_.exec_by(deadline_, sql, params);
}

result transaction::exec_prepared(const std::string& name, const std::vector<param>& params) {
  if (!c_.is_open() || c_.generation() != generation_)
    throw failure(failure_kind::broken, {}, "the connection was lost during the transaction");
  return c_.exec_by(deadline_, name, params, true);
}

transaction::~transaction() {
  if (done_ || !c_.is_open() || c_.generation() != generation_) return;
  try {
    c_.exec("ROLLBACK");
  } catch (const failure&) {
    // The connection is closed by the failure, which ends the transaction.
  }
}

void transaction::commit() {
  exec("COMMIT");
  done_ = true;
}

}  // namespace mm::pg
