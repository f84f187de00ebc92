// Whether the PostgreSQL tests can run here: they start a server of their own
// (mm/testing/postgres_server.hpp), so PostgreSQL's server must be installed.
// Where it is not, a test says so and passes without checking anything.
#pragma once

#include <catch2/catch.hpp>

#include "mm/testing/postgres_server.hpp"

namespace mm::test {

inline bool have_postgres() {
  if (!postgres_server::binaries().empty()) return true;
  WARN("skipped: PostgreSQL's server is not installed (apt-get install postgresql)");
  return false;
}

}  // namespace mm::test
