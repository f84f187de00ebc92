// The footing of the PostgreSQL store's tests: a real server that the test
// starts itself (mm/testing/postgres_server.hpp), reached with libpqxx.
// Skipped, with a message, only where PostgreSQL's server is not installed.
#include <catch2/catch.hpp>
#include <pqxx/pqxx>

#include "mm/testing/postgres_server.hpp"

using mm::test::postgres_server;

TEST_CASE("a PostgreSQL server started by the test takes libpqxx connections and is gone after",
          "[postgres]") {
  if (postgres_server::binaries().empty()) {
    WARN("skipped: PostgreSQL's server is not installed (apt-get install postgresql)");
    return;
  }
  std::string url;
  {
    postgres_server pg;
    postgres_server other;  // two at once, each on its own port
    CHECK(pg.port() != other.port());
    pqxx::connection c(pg.url());
    {
      pqxx::work w(c);
      w.exec0("CREATE TABLE t (id BIGINT PRIMARY KEY, mmr DOUBLE PRECISION NOT NULL)");
      w.exec_params0("INSERT INTO t VALUES ($1, $2), ($3, $4)", 1, 1500.0, 2, 900.5);
      w.commit();
    }
    pqxx::work r(c);
    const pqxx::row row = r.exec1("SELECT count(*), sum(mmr) FROM t");
    CHECK(row[0].as<int>() == 2);
    CHECK(row[1].as<double>() == Approx(2400.5));
    // The other server is another cluster: no table t there.
    pqxx::connection o(other.url());
    pqxx::work ow(o);
    CHECK(ow.exec1("SELECT count(*) FROM pg_tables WHERE tablename = 't'")[0].as<int>() == 0);
    url = pg.url();
  }
  // Stopped and deleted with the object.
  CHECK_THROWS_AS(pqxx::connection(url), pqxx::broken_connection);
}
