// A throwaway PostgreSQL server for the tests and benchmarks: a cluster made
// by initdb in a temporary directory, started by pg_ctl on a free loopback
// port with one trusted user, stopped and deleted with the object. No
// system service and no password are involved, and nothing outlives the test.
//
// PostgreSQL refuses to run as root. Run as root (as CI is), the server runs
// as the `postgres` system user that Debian's package creates, and the
// directory is handed to that user.
#pragma once

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "mm/testing/child_process.hpp"
#include "mm/testing/temp_dir.hpp"

namespace mm::test {

class postgres_server {
 public:
  // The directory of initdb and pg_ctl (Debian puts each major version in
  // /usr/lib/postgresql/N/bin; the newest is taken), or "" when PostgreSQL's
  // server is not installed.
  static std::string binaries() {
    std::vector<std::filesystem::path> found;
    std::error_code ec;
    for (const auto& v : std::filesystem::directory_iterator("/usr/lib/postgresql", ec))
      if (std::filesystem::exists(v.path() / "bin" / "initdb") &&
          std::filesystem::exists(v.path() / "bin" / "pg_ctl"))
        found.push_back(v.path() / "bin");
    if (found.empty()) return {};
    std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
      return std::stoi(a.parent_path().filename().string()) <
             std::stoi(b.parent_path().filename().string());
    });
    return found.back().string();
  }

  // Makes and starts the cluster. Throws std::runtime_error naming the step
  // and quoting its output when one fails.
  postgres_server() : bin_(binaries()) {
    if (bin_.empty()) throw std::runtime_error("PostgreSQL's server is not installed");
    if (geteuid() == 0) {
      const passwd* pw = getpwnam("postgres");
      if (!pw || chown(dir_.c_str(), pw->pw_uid, pw->pw_gid) != 0)
        throw std::runtime_error(
            "running as root, and there is no 'postgres' user to run PostgreSQL as");
      as_user_ = "runuser -u postgres -- ";
    }
    run("initdb", bin_ + "/initdb -D " + data() + " -U " + user +
                      " -A trust --no-sync --encoding=UTF8 --locale=C");
    // A free port may be taken between the choice and the start: try again.
    for (int attempt = 0;; ++attempt) {
      port_ = free_loopback_port();
      try {
        start();
        break;
      } catch (const std::runtime_error&) {
        if (attempt == 2) throw;
      }
    }
  }

  // Stops the server at once (its connections cut, as in a crash), for a
  // test of a database that goes away; start() brings it back on its port.
  void stop() {
    if (!started_) return;
    run("pg_ctl stop", bin_ + "/pg_ctl -D " + data() + " -m immediate -w stop");
    started_ = false;
  }
  void start() {
    if (started_) return;
    run("pg_ctl start", bin_ + "/pg_ctl -D " + data() + " -l " + dir_ +
                            "/server.log -w -t 60 -o '-p " + std::to_string(port_) + " -k " + dir_ +
                            " -c listen_addresses=127.0.0.1 -c fsync=off'" + " start");
    started_ = true;
  }

  // Stops the server; the temporary directory goes with `tmp_`, after.
  ~postgres_server() {
    if (started_)
      std::system(
          (as_user_ + bin_ + "/pg_ctl -D " + data() + " -m immediate -w stop > /dev/null 2>&1")
              .c_str());
  }
  postgres_server(const postgres_server&) = delete;
  postgres_server& operator=(const postgres_server&) = delete;

  std::uint16_t port() const { return port_; }
  // A connection URL for libpq: the trusted user, database `postgres`.
  std::string url() const {
    return "postgresql://" + std::string(user) + "@127.0.0.1:" + std::to_string(port_) +
           "/postgres";
  }
  // What the server wrote to its log so far (for a failing test's message).
  std::string log() const { return read_file(dir_ + "/server.log"); }

  static constexpr const char* user = "mm";

 private:
  std::string data() const { return dir_ + "/data"; }

  // Runs `command` (as the postgres user when root); throws with its output
  // when it fails.
  void run(const char* step, const std::string& command) const {
    const std::string out = dir_ + "/step.out";
    const int status = std::system((as_user_ + command + " > " + out + " 2>&1").c_str());
    if (status != 0)
      throw std::runtime_error(std::string("PostgreSQL's ") + step + " failed: " + read_file(out) +
                               read_file(dir_ + "/server.log"));
  }

  static std::string read_file(const std::string& path) {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }

  temp_dir tmp_;  // declared first: removed last, once the server has stopped
  std::string dir_ = std::filesystem::path(tmp_.file("data")).parent_path().string();
  std::string bin_;
  std::string as_user_;
  std::uint16_t port_ = 0;
  bool started_ = false;
};

}  // namespace mm::test
