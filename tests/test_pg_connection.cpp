// The project's own libpq connection (mm/storage/pg_connection.hpp) on a
// real server each test starts: statements and their failures by kind,
// every call within its deadline (a server that never answers included),
// reconnection with the session's settings and LISTENs, and a transaction
// that never goes on over a new connection.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <functional>

#include "mm/storage/pg_connection.hpp"
#include "mm/testing/postgres_server.hpp"
#include "postgres_available.hpp"

using mm::test::have_postgres;
using mm::test::postgres_server;
using namespace mm::pg;
using namespace std::chrono_literals;

namespace {

failure_kind kind_of(const std::function<void()>& f, std::string* state = nullptr) {
  try {
    f();
  } catch (const failure& e) {
    if (state) *state = e.state;
    return e.kind;
  }
  FAIL("no failure");
  return failure_kind::refused;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

TEST_CASE("the libpq connection runs statements and names each failure's kind",
          "[postgres][pg_connection]") {
  if (!have_postgres()) return;
  postgres_server pg;
  connection c(pg.url(), 5s, {{"statement_timeout", "400"}, {"no_such_setting", "1"}});
  c.exec("CREATE TABLE t (id BIGINT PRIMARY KEY, name TEXT, ok BOOLEAN)");
  CHECK(c.exec_params("INSERT INTO t VALUES ($1, $2, $3), ($4, NULL, false)", std::int64_t{1},
                      "one", true, std::int64_t{2})
            .affected_rows() == 2);
  const result r = c.exec("SELECT id, name, ok FROM t ORDER BY id");
  REQUIRE(r.size() == 2);
  CHECK(r.int64(0, 0) == 1);
  CHECK(r.text(0, 1) == "one");
  CHECK(r.boolean(0, 2));
  CHECK(r.is_null(1, 1));
  CHECK_FALSE(r.boolean(1, 2));
  CHECK(kind_of([&] { (void)r.text(2, 0); }) == failure_kind::refused);
  // The settings hold (an unknown one is skipped, not an error).
  CHECK(c.exec("SHOW statement_timeout").text(0, 0) == "400ms");

  // Refused by the server: the connection stays and serves.
  std::string state;
  CHECK(kind_of([&] { c.exec("SELECT * FROM nowhere"); }, &state) == failure_kind::refused);
  CHECK(state == "42P01");
  CHECK(c.is_open());
  CHECK(c.exec("SELECT 1").int64(0, 0) == 1);

  // The server's statement_timeout: timed out, by its SQLSTATE.
  CHECK(kind_of([&] { c.exec("SELECT pg_sleep(2)"); }, &state) == failure_kind::timed_out);
  CHECK(state == "57014");

  // A backend ended under the statement: broken, closed, and the next call
  // connects again with the settings set again.
  const auto generation = c.generation();
  CHECK(kind_of([&] { c.exec("SELECT pg_terminate_backend(pg_backend_pid())"); }) ==
        failure_kind::broken);
  CHECK_FALSE(c.is_open());
  CHECK(c.exec("SHOW statement_timeout").text(0, 0) == "400ms");
  CHECK(c.generation() == generation + 1);

  // A setting the server refuses: no connection is kept without it.
  connection bad(pg.url(), 5s, {{"statement_timeout", "soon"}});
  CHECK(kind_of([&] { bad.exec("SELECT 1"); }, &state) == failure_kind::refused);
  CHECK(state == "22023");
  CHECK_FALSE(bad.is_open());
}

TEST_CASE("every libpq call ends by its deadline: a slow statement, a server that never answers",
          "[postgres][pg_connection]") {
  if (!have_postgres()) return;
  postgres_server pg;
  // The client's deadline, well before the server's limit.
  connection c(pg.url(), 300ms, {{"statement_timeout", "60000"}});
  auto t = std::chrono::steady_clock::now();
  CHECK(kind_of([&] { c.exec("SELECT pg_sleep(10)"); }) == failure_kind::timed_out);
  CHECK(seconds_since(t) < 1.5);
  CHECK_FALSE(c.is_open());
  CHECK(c.exec("SELECT 2").int64(0, 0) == 2);

  // A listener that takes the connection and says nothing (a silent peer):
  // the connect gives up by its deadline, as every later attempt does.
  const int silent = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(silent, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::listen(silent, 16) == 0);
  socklen_t len = sizeof a;
  ::getsockname(silent, reinterpret_cast<sockaddr*>(&a), &len);
  connection mute("postgresql://mm@127.0.0.1:" + std::to_string(ntohs(a.sin_port)) + "/mm", 300ms);
  for (int i = 0; i < 3; ++i) {
    t = std::chrono::steady_clock::now();
    CHECK(kind_of([&] { mute.exec("SELECT 1"); }) == failure_kind::timed_out);
    CHECK(seconds_since(t) < 1.5);
  }
  ::close(silent);
}

TEST_CASE("a transaction never goes on over a new connection, and notifications survive one",
          "[postgres][pg_connection]") {
  if (!have_postgres()) return;
  postgres_server pg;
  connection c(pg.url(), 5s);
  connection other(pg.url(), 5s);
  c.exec("CREATE TABLE t (id BIGINT)");
  {
    transaction tx(c);
    tx.exec_params("INSERT INTO t VALUES ($1)", std::int64_t{1});
    const auto pid = c.exec("SELECT pg_backend_pid()").int64(0, 0);
    other.exec_params("SELECT pg_terminate_backend($1)", pid);
    // The first statement after finds the connection gone; the next would
    // run on a new connection, outside the transaction: refused as broken.
    CHECK(kind_of([&] { tx.exec("INSERT INTO t VALUES (2)"); }) == failure_kind::broken);
    CHECK(kind_of([&] { tx.exec("INSERT INTO t VALUES (3)"); }) == failure_kind::broken);
    CHECK(kind_of([&] { tx.commit(); }) == failure_kind::broken);
  }
  CHECK(other.exec("SELECT count(*) FROM t").int64(0, 0) == 0);
  {
    transaction tx(c);
    tx.exec("INSERT INTO t VALUES (4)");
    tx.commit();
  }
  {
    transaction tx(c);
    tx.exec("INSERT INTO t VALUES (5)");
  }  // not committed: rolled back
  CHECK(other.exec("SELECT array_agg(id)::text FROM t").text(0, 0) == "{4}");

  c.listen("news");
  auto t = std::chrono::steady_clock::now();
  CHECK_FALSE(c.wait_for_notification(200ms));
  CHECK(seconds_since(t) >= 0.19);
  other.exec("NOTIFY news");
  CHECK(c.wait_for_notification(5s));
  // After a reconnect the connection listens again.
  CHECK(kind_of([&] { c.exec("SELECT pg_terminate_backend(pg_backend_pid())"); }) ==
        failure_kind::broken);
  c.open();
  other.exec("NOTIFY news");
  CHECK(c.wait_for_notification(5s));
}

TEST_CASE("bytes go as bytea both ways, and prepared statements and settings outlive a reconnect",
          "[postgres][pg_connection]") {
  if (!have_postgres()) return;
  postgres_server pg;
  connection c(pg.url(), 5s);
  connection other(pg.url(), 5s);
  c.exec("CREATE TABLE b (id BIGINT PRIMARY KEY, v BYTEA)");
  // Every byte value, a NUL among them, and an empty value and a NULL.
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  c.exec_params("INSERT INTO b VALUES (1, $1), (2, $2), (3, NULL)", param::bytes(all),
                param::bytes(""));
  const result r = c.exec("SELECT v FROM b ORDER BY id");
  CHECK(r.bytes(0, 0) == all);
  CHECK(r.bytes(1, 0).empty());
  CHECK(r.bytes(2, 0).empty());
  CHECK(r.is_null(2, 0));
  CHECK(kind_of([&] { (void)c.exec("SELECT 'not hex'::text").bytes(0, 0); }) ==
        failure_kind::refused);

  c.prepare("by_id", "SELECT length(v) FROM b WHERE id = $1");
  c.set("work_mem", "8MB");
  CHECK(c.exec_prepared("by_id", {"1"}).int64(0, 0) == 256);
  CHECK(kind_of([&] { c.prepare("by_id", "SELECT 1"); }) == failure_kind::refused);
  // The server ends the session: the next calls connect again, prepare again
  // and set again.
  const auto before = c.generation();
  other.exec_params(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> "
      "pg_backend_pid() AND datname = current_database()");
  CHECK(kind_of([&] { c.exec("SELECT 1"); }) == failure_kind::broken);
  CHECK(c.exec_prepared("by_id", {"1"}).int64(0, 0) == 256);
  CHECK(c.generation() == before + 1);
  CHECK(c.exec("SHOW work_mem").text(0, 0) == "8MB");
  // Several statements in one text, without parameters: the last one answers.
  CHECK(c.exec("SELECT 1; SELECT 2").int64(0, 0) == 2);
  {
    longer_calls longer(c, 20s);
    CHECK(c.call_timeout() == 20s);
  }
  CHECK(c.call_timeout() == 5s);
}

TEST_CASE("a transaction's statements share one deadline", "[postgres][pg_connection]") {
  if (!have_postgres()) return;
  postgres_server pg;
  connection c(pg.url(), 1s);
  // Each statement well within a call's second; the three together not.
  const auto start = std::chrono::steady_clock::now();
  CHECK(kind_of([&] {
          transaction tx(c);
          for (int i = 0; i < 3; ++i) tx.exec("SELECT pg_sleep(0.4)");
          tx.commit();
        }) == failure_kind::timed_out);
  CHECK(seconds_since(start) < 1.5);
  // A budget of its own: the same three fit.
  transaction tx(c, 3s);
  for (int i = 0; i < 3; ++i) tx.exec("SELECT pg_sleep(0.4)");
  tx.commit();
}

TEST_CASE("a pipeline is one round trip and one transaction: all of it commits or none",
          "[postgres][pg_connection]") {
  if (!have_postgres()) return;
  postgres_server pg;
  connection c(pg.url(), 5s);
  c.exec("CREATE TABLE p (id BIGINT PRIMARY KEY, v BYTEA)");
  const auto out = c.exec_pipeline({{"INSERT INTO p VALUES ($1, $2)", {"1", param::bytes("a")}},
                                    {"INSERT INTO p VALUES ($1, $2)", {"2", param::bytes("b")}},
                                    {"SELECT count(*) FROM p", {}}});
  REQUIRE(out.size() == 3);
  CHECK(out[0].affected_rows() == 1);
  CHECK(out[2].int64(0, 0) == 2);
  // The second statement fails (a duplicate key): the first is rolled back
  // with it, the third never runs, and the failure names the second.
  try {
    c.exec_pipeline({{"INSERT INTO p VALUES ($1, NULL)", {"3"}},
                     {"INSERT INTO p VALUES ($1, NULL)", {"1"}},
                     {"INSERT INTO p VALUES ($1, NULL)", {"4"}}});
    FAIL("a duplicate key was accepted");
  } catch (const failure& e) {
    CHECK(e.kind == failure_kind::refused);
    CHECK(e.state == "23505");
    CHECK(e.statement == 1);
  }
  CHECK(c.exec("SELECT count(*) FROM p").int64(0, 0) == 2);
  // The connection goes on after it, in and out of pipelines.
  CHECK(c.exec_pipeline({{"SELECT 7", {}}}).at(0).int64(0, 0) == 7);
  CHECK(c.exec_pipeline({}).empty());
}
