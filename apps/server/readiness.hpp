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
// The checks run on a thread of the probe's, never on the caller's: a probe
// answers within `answer_within` whatever a check waits on (a database
// behind a silent link), and then says which check has not answered.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
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
  explicit readiness_probe(std::chrono::milliseconds reuse_for = std::chrono::seconds(1),
                           std::chrono::milliseconds answer_within = std::chrono::milliseconds(800))
      : reuse_for_(reuse_for), answer_within_(answer_within) {}
  // Waits for a run of the checks in flight (stop()).
  ~readiness_probe();
  readiness_probe(const readiness_probe&) = delete;
  readiness_probe& operator=(const readiness_probe&) = delete;

  // Before the first report; not while one runs.
  void add(std::string name, check c) { checks_.push_back({std::move(name), std::move(c)}); }
  // The checks in the order added, or the report of less than `reuse_for`
  // ago. Thread-safe. One run of the checks at a time, on the probe's
  // thread; a caller waits for it `answer_within` at most. Past that the
  // report is not ready, and the check still running says it has not
  // answered (the others as the last report had them), so probes can
  // neither block nor pile up on the HTTP handler threads.
  readiness_report report();
  // Waits for a run in flight; later reports run no check (not ready).
  void stop();

 private:
  struct named {
    std::string name;
    check run;
  };
  void run_checks();

  std::chrono::milliseconds reuse_for_;
  std::chrono::milliseconds answer_within_;
  std::vector<named> checks_;
  std::mutex m_;
  std::condition_variable finished_;
  bool running_ = false;
  bool stopped_ = false;
  std::string running_check_;  // the check the run is in now
  std::uint64_t finished_runs_ = 0;
  std::thread worker_;
  std::optional<std::chrono::steady_clock::time_point> made_at_;
  readiness_report last_;
};

}  // namespace mm::server
