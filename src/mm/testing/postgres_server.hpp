// A throwaway PostgreSQL server for the tests and benchmarks: a cluster made
// by initdb in a temporary directory, started by pg_ctl on a free loopback
// port with one trusted user, stopped and deleted with the object. No
// system service and no password are involved, and nothing outlives the test.
//
// PostgreSQL refuses to run as root. Run as root (as CI is), the server runs
// as the `postgres` system user that Debian's package creates, and the
// directory is handed to that user.
//
// In a network namespace of the test's (fault_network.hpp) it listens on
// every address of that namespace, and can be paused (SIGSTOP to every
// process of the server) as a database that stopped answering.
#pragma once

#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
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

  // Makes and starts the cluster, in network namespace `netns` when given.
  // Throws std::runtime_error naming the step and quoting its output when
  // one fails.
  explicit postgres_server(std::string netns = {}) : bin_(binaries()), netns_(std::move(netns)) {
    if (!netns_.empty()) in_netns_ = "ip netns exec " + netns_ + " ";
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
    // In a namespace the clients come from the test's addresses, not loopback.
    if (!netns_.empty())
      std::ofstream(data() + "/pg_hba.conf", std::ios::app) << "host all all 0.0.0.0/0 trust\n";
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
    resume_quietly();  // a paused server takes no signal to stop
    run("pg_ctl stop", bin_ + "/pg_ctl -D " + data() + " -m immediate -w stop");
    started_ = false;
  }
  void start() {
    if (started_) return;
    run("pg_ctl start", bin_ + "/pg_ctl -D " + data() + " -l " + dir_ +
                            "/server.log -w -t 60 -o '-p " + std::to_string(port_) + " -k " + dir_ +
                            " -c listen_addresses=" + (netns_.empty() ? "127.0.0.1" : "'*'") +
                            " -c fsync=off'" + " start");
    started_ = true;
  }

  // Stops the server; the temporary directory goes with `tmp_`, after.
  ~postgres_server() {
    if (started_) resume_quietly();
    if (started_)
      std::system(
          (as_user_ + bin_ + "/pg_ctl -D " + data() + " -m immediate -w stop > /dev/null 2>&1")
              .c_str());
  }
  postgres_server(const postgres_server&) = delete;
  postgres_server& operator=(const postgres_server&) = delete;

  // SIGSTOP to the server and every process of it, as a database that stops
  // answering without closing anything; resume() lets them go on.
  void pause() { signal_all(SIGSTOP); }
  void resume() { signal_all(SIGCONT); }

  std::uint16_t port() const { return port_; }
  // A connection URL for libpq: the trusted user, database `postgres`, at
  // `host` (in a namespace: one of its addresses).
  std::string url(const std::string& host = "127.0.0.1") const {
    return "postgresql://" + std::string(user) + "@" + host + ":" + std::to_string(port_) +
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
    const int status =
        std::system((in_netns_ + as_user_ + command + " > " + out + " 2>&1").c_str());
    if (status != 0)
      throw std::runtime_error(std::string("PostgreSQL's ") + step + " failed: " + read_file(out) +
                               read_file(dir_ + "/server.log"));
  }

  // `sig` to the postmaster (the first line of postmaster.pid) and to each
  // process whose parent it is.
  void signal_all(int sig) const {
    pid_t main = 0;
    std::ifstream(data() + "/postmaster.pid") >> main;
    if (main <= 0) throw std::runtime_error("PostgreSQL's postmaster.pid names no process");
    ::kill(main, sig);
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
      const std::string name = e.path().filename().string();
      if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
      // "pid (comm) state ppid ...": the fields after the last ')'.
      const std::string stat = read_file(e.path() / "stat");
      const auto close = stat.rfind(')');
      if (close == std::string::npos) continue;
      std::istringstream rest(stat.substr(close + 1));
      std::string state;
      pid_t parent = 0;
      if (rest >> state >> parent && parent == main) ::kill(std::stoi(name), sig);
    }
  }

  void resume_quietly() const {
    try {
      signal_all(SIGCONT);
    } catch (const std::exception&) {
      // No postmaster.pid: nothing runs to resume.
    }
  }

  static std::string read_file(const std::string& path) {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }

  temp_dir tmp_;  // declared first: removed last, once the server has stopped
  std::string dir_ = std::filesystem::path(tmp_.file("data")).parent_path().string();
  std::string bin_;
  std::string netns_;
  std::string in_netns_;  // "ip netns exec NAME " in a namespace
  std::string as_user_;
  std::uint16_t port_ = 0;
  bool started_ = false;
};

}  // namespace mm::test
