// GET /healthz and GET /readyz (docs/operations.md, "Health probes").
//
// Alive: the process and its network thread answer (/healthz is answered on
// that thread, so a reply proves it turns). Ready: this node serves what it
// should, each a named check that is "ok" or says why not:
//   - store: the database answers a read on the API's own connection;
//   - cluster (a node of a cluster): it has joined, its heartbeat is renewed
//     in time (its serving deadline is open: not fenced);
//   - shards: every async shard served here has restored its snapshot or
//     applied its first scan;
//   - sessions (where the session queues are served): the service runs and
//     its journal's last write to the store succeeded.
// A report is computed at most once a second and shared by every probe in
// between, so a flood of unauthenticated probes costs the store nothing more.
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "json_codec.hpp"

namespace mm::server {

struct readiness_check {
  std::string name;
  std::optional<std::string> problem;  // none: ok
};

struct readiness_report {
  std::vector<readiness_check> checks;
  bool ready() const;
  // {"ready": bool, "checks": {name: "ok" or why}, "not_ready": [names]},
  // and when not ready "error": "not ready: " and the names.
  json to_json() const;
};

class readiness_probe {
 public:
  // Each check: none when ok, else why not; may block (a store read, an
  // actor's answer) and may throw (the message becomes the problem).
  using check = std::function<std::optional<std::string>()>;
  explicit readiness_probe(std::chrono::milliseconds reuse_for = std::chrono::seconds(1))
      : reuse_for_(reuse_for) {}

  void add(std::string name, check c) { checks_.push_back({std::move(name), std::move(c)}); }
  // The checks in the order added, or the report of less than `reuse_for`
  // ago. Thread-safe, and never waits on another caller: while one computes
  // (a check may block on a database that does not answer), the others get
  // the last report at once (not ready, naming "readiness", before the
  // first), so probes cannot pile up on the HTTP handler threads.
  readiness_report report();

 private:
  struct named {
    std::string name;
    check run;
  };
  std::chrono::milliseconds reuse_for_;
  std::vector<named> checks_;
  std::mutex computing_;  // held by the one caller that runs the checks
  std::mutex last_mutex_;
  std::optional<std::chrono::steady_clock::time_point> made_at_;
  readiness_report last_;
};

}  // namespace mm::server
