// The PostgreSQL store on a real server that each test starts itself
// (mm/testing/postgres_server.hpp). Skipped, with a message, only where
// PostgreSQL's server is not installed.
#include <catch2/catch.hpp>
#include <future>
#include <map>
#include <pqxx/pqxx>

#include "mm/storage/pg_database.hpp"
#include "mm/storage/player_store.hpp"
#include "mm/testing/postgres_server.hpp"
#include "postgres_available.hpp"

using mm::test::have_postgres;
using mm::test::postgres_server;

namespace {

// Column name -> type of a table, as PostgreSQL reports them.
std::map<std::string, std::string> columns(mm::pg::connection& c, const std::string& table) {
  std::map<std::string, std::string> out;
  const auto r = c.exec_params(
      "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = $1", table);
  for (std::size_t i = 0; i < r.size(); ++i) out[r.text(i, 0)] = r.text(i, 1);
  return out;
}

int migration_rows(mm::pg::connection& c) {
  return static_cast<int>(c.exec("SELECT count(*) FROM schema_migrations").int64(0, 0));
}

}  // namespace

TEST_CASE("a PostgreSQL server started by the test takes libpqxx connections and is gone after",
          "[postgres]") {
  if (!have_postgres()) return;
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

TEST_CASE("both dialects have the same migrations", "[postgres]") {
  const auto& sqlite = mm::migrations();
  const auto& postgres = mm::postgres_migrations();
  REQUIRE(sqlite.size() == postgres.size());
  for (std::size_t i = 0; i < sqlite.size(); ++i) {
    CHECK(sqlite[i].version == postgres[i].version);
    CHECK(sqlite[i].name == postgres[i].name);
  }
  CHECK(mm::pg_database::latest_schema_version() == mm::database::latest_schema_version());
}

TEST_CASE("a new PostgreSQL database is migrated once to the schema of SQLite's", "[postgres]") {
  if (!have_postgres()) return;
  postgres_server pg;
  {
    mm::pg_database db(pg.url());
    CHECK(db.schema_version() == mm::pg_database::latest_schema_version());
    // The same tables and columns as on SQLite, in PostgreSQL's types.
    const auto players = columns(db.sql(), "players");
    CHECK(players.size() == 9);
    CHECK(players.at("id") == "bigint");
    CHECK(players.at("mmr") == "double precision");
    CHECK(players.at("payload") == "bytea");
    CHECK(players.at("updated_at") == "bigint");
    // ... and PostgreSQL's own: the epoch a snapshot was written under, and
    // the cluster's nodes and leases (schema/postgresql/005_cluster_leases.sql).
    CHECK(columns(db.sql(), "matchmaker_state").size() == 5);
    CHECK(columns(db.sql(), "matchmaker_state").at("lease_epoch") == "bigint");
    CHECK(columns(db.sql(), "cluster_nodes").size() == 9);
    CHECK(columns(db.sql(), "cluster_leases").size() == 5);
    CHECK(columns(db.sql(), "matchmaker_state_rejected").size() == 6);
    CHECK(migration_rows(db.sql()) == mm::pg_database::latest_schema_version());
  }
  // Opened again: nothing to do. Opened by four nodes at once: one migrates.
  mm::pg_database again(pg.url());
  CHECK(migration_rows(again.sql()) == mm::pg_database::latest_schema_version());
  postgres_server fresh;
  std::vector<std::future<int>> nodes;
  for (int i = 0; i < 4; ++i)
    nodes.push_back(std::async(std::launch::async,
                               [&] { return mm::pg_database(fresh.url()).schema_version(); }));
  for (auto& n : nodes) CHECK(n.get() == mm::pg_database::latest_schema_version());
  mm::pg_database after(fresh.url());
  CHECK(migration_rows(after.sql()) == mm::pg_database::latest_schema_version());
}

TEST_CASE("a PostgreSQL database that cannot be used is a clear error", "[postgres]") {
  if (!have_postgres()) return;
  postgres_server pg;
  {
    mm::pg_database db(pg.url());
    db.sql().exec("INSERT INTO schema_migrations VALUES (999, '999_future.sql', 0)");
  }
  CHECK_THROWS_WITH(mm::pg_database(pg.url()),
                    Catch::Contains("has schema version 999, newer than this build's"));
  // Nobody listens there; the password is not in the message.
  const std::string nowhere =
      "postgresql://mm:s3cret@127.0.0.1:" + std::to_string(mm::test::free_loopback_port()) +
      "/postgres";
  try {
    mm::pg_database db(nowhere);
    FAIL("connected to nothing");
  } catch (const mm::store_error& e) {
    const std::string what = e.what();
    CHECK(what.find("cannot connect to PostgreSQL database 'postgresql://mm:***@127.0.0.1:") !=
          std::string::npos);
    CHECK(what.find("s3cret") == std::string::npos);
  }
  CHECK(mm::redacted_url("postgresql://a:b@h/d") == "postgresql://a:***@h/d");
  CHECK(mm::redacted_url("postgresql://a@h:5432/d") == "postgresql://a@h:5432/d");
  CHECK(mm::redacted_url("postgresql://h/d?x=a@b") == "postgresql://h/d?x=a@b");
  CHECK(mm::redacted_url("postgresql://h/d?password=pw&sslmode=require") ==
        "postgresql://h/d?password=***&sslmode=require");
  CHECK(mm::redacted_url("host=h password=pw dbname=d") == "host=h password=*** dbname=d");
}
