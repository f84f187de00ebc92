// What a statement whose connection breaks under it costs in memory: per way
// the stores run statements through libpqxx (6.4 on Debian 12), and through
// the project's own libpq connection (pg_connection.hpp, the lease agent's).
// Each broken statement is a backend that ends itself during the statement
// (pg_terminate_backend(pg_backend_pid())); the next call connects again,
// as the stores and the agent do. The resident set is read after a warm-up
// and again after `n` more; its growth a statement is the leak, if any.
// Usage: mm_pg_broken_bench [n=10000]. JSON lines.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <pqxx/pqxx>

#include "bench_util.hpp"
#include "mm/storage/pg_connection.hpp"
#include "mm/storage/pg_store.hpp"
#include "mm/testing/postgres_server.hpp"

using mm::bench::emit;

namespace {

constexpr const char* bench = "pg_broken";
constexpr const char* suicide = "SELECT pg_terminate_backend(pg_backend_pid())";

// This process's resident set, bytes.
double rss_bytes() {
  std::ifstream in("/proc/self/statm");
  std::uint64_t size = 0, resident = 0;
  in >> size >> resident;
  return static_cast<double>(resident) * static_cast<double>(::sysconf(_SC_PAGESIZE));
}

// Runs `n` broken statements the way `how` runs one (true: it broke);
// counts the ones that broke (the others are a defect of the probe).
std::size_t break_many(std::size_t n, const std::function<bool()>& how) {
  std::size_t broken = 0;
  for (std::size_t i = 0; i < n; ++i) broken += how() ? 1 : 0;
  return broken;
}

// A libpqxx way of running the statement, on a libpqxx connection restored
// after each break (as the stores did before they moved to pg_connection).
std::function<bool()> with_libpqxx(pqxx::connection& c,
                                   std::function<void(pqxx::connection&)> how) {
  return [&c, how] {
    try {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
      if (!c.is_open()) c.activate();
#pragma GCC diagnostic pop
      how(c);
    } catch (const pqxx::broken_connection&) {
      return true;
    } catch (const pqxx::sql_error&) {
      return true;  // "terminating connection due to administrator command"
    }
    return false;
  };
}

// The statement in a transaction on a pg::connection (the lease agent's and
// the stores' path).
std::function<bool()> on_pg_connection(mm::pg::connection& c) {
  return [&c] {
    try {
      mm::pg::transaction tx(c);
      tx.exec_params("SELECT pg_terminate_backend(pg_backend_pid()) WHERE $1 = 1", 1);
      tx.commit();
    } catch (const mm::pg::failure& e) {
      return e.kind == mm::pg::failure_kind::broken;
    }
    return false;
  };
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::stoul(argv[1]) : 10'000;
  if (mm::test::postgres_server::binaries().empty()) {
    std::printf("mm_pg_broken_bench: skipped, PostgreSQL's server is not installed\n");
    return 0;
  }
  mm::test::postgres_server pg;
  pqxx::connection db(pg.url());
  mm::pg::connection own(pg.url(), std::chrono::seconds(5));
  mm::pg_store store(pg.url());  // the stores' own connection, with its limits
  const std::pair<const char*, std::function<bool()>> ways[] = {
      {"libpqxx_work_exec", with_libpqxx(db,
                                         [](pqxx::connection& c) {
                                           pqxx::work tx(c);
                                           tx.exec(suicide);
                                           tx.commit();
                                         })},
      {"libpqxx_work_exec_params",
       with_libpqxx(db,
                    [](pqxx::connection& c) {
                      pqxx::work tx(c);
                      tx.exec_params("SELECT pg_terminate_backend(pg_backend_pid()) WHERE $1 = 1",
                                     1);
                      tx.commit();
                    })},
      {"libpqxx_nontransaction_exec", with_libpqxx(db,
                                                   [](pqxx::connection& c) {
                                                     pqxx::nontransaction tx(c);
                                                     tx.exec(suicide);
                                                   })},
      {"pg_connection_transaction", on_pg_connection(own)},
      {"stores_connection_transaction", on_pg_connection(store.db().sql())},
  };
  for (const auto& [name, how] : ways) {
    break_many(200, how);  // warm-up: the allocator's arenas settle
    const double before = rss_bytes();
    const std::size_t broken = break_many(n, how);
    const double after = rss_bytes();
    const std::string extra = std::string("\"way\": \"") + name +
                              "\", \"statements\": " + std::to_string(n) +
                              ", \"broken\": " + std::to_string(broken);
    emit(bench, "rss_growth_bytes_per_broken_statement", (after - before) / static_cast<double>(n),
         "B", extra);
    emit(bench, "rss_mib", after / (1 << 20), "MiB", extra);
  }
  return 0;
}
