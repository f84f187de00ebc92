#include "readiness.hpp"

#include <exception>

namespace mm::server {

bool readiness_report::ready() const {
  for (const auto& c : checks)
    if (c.problem) return false;
  return true;
}

json readiness_report::to_json() const {
  json checks_out = json::object();
  json not_ready = json::array();
  for (const auto& c : checks) {
    checks_out[c.name] = c.problem ? *c.problem : std::string("ok");
    if (c.problem) not_ready.push_back(c.name);
  }
  json out = {{"ready", not_ready.empty()}, {"checks", checks_out}, {"not_ready", not_ready}};
  if (!not_ready.empty()) {  // as every error answer: a sentence under "error"
    std::string names;
    for (const auto& n : not_ready) names += (names.empty() ? "" : ", ") + n.get<std::string>();
    out["error"] = "not ready: " + names;
  }
  return out;
}

readiness_probe::~readiness_probe() {
  stop();
}

void readiness_probe::stop() {
  std::thread done;
  {
    std::lock_guard<std::mutex> lock(m_);
    stopped_ = true;
    done = std::move(worker_);
  }
  if (done.joinable()) done.join();
}

readiness_report readiness_probe::report() {
  std::unique_lock<std::mutex> lock(m_);
  if (stopped_) return {{{"readiness", std::string("the server is stopping")}}};
  if (made_at_ && std::chrono::steady_clock::now() - *made_at_ < reuse_for_) return last_;
  if (!running_) {
    // The last run's thread has set running_ false as its last step.
    if (worker_.joinable()) worker_.join();
    running_ = true;
    worker_ = std::thread([this] { run_checks(); });
  }
  const std::uint64_t wanted = finished_runs_ + 1;  // the run in flight
  if (finished_.wait_for(lock, answer_within_, [&] { return finished_runs_ >= wanted; }))
    return last_;
  // Not answered in time: the last report's other checks, and the one that
  // has not answered.
  readiness_report late = last_;
  const std::string name = running_check_.empty() ? "readiness" : running_check_;
  const std::string problem = "no answer within " + std::to_string(answer_within_.count()) +
                              " ms (it waits on the database or an actor)";
  bool found = false;
  for (auto& c : late.checks)
    if (c.name == name) {
      c.problem = problem;
      found = true;
    }
  if (!found) late.checks.push_back({name, problem});
  return late;
}

void readiness_probe::run_checks() {
  readiness_report out;
  for (const auto& c : checks_) {
    {
      std::lock_guard<std::mutex> lock(m_);
      running_check_ = c.name;
    }
    std::optional<std::string> problem;
    try {
      problem = c.run();
    } catch (const std::exception& e) {
      problem = e.what();
    }
    out.checks.push_back({c.name, std::move(problem)});
  }
  std::lock_guard<std::mutex> lock(m_);
  last_ = std::move(out);
  made_at_ = std::chrono::steady_clock::now();
  ++finished_runs_;
  running_check_.clear();
  running_ = false;
  finished_.notify_all();
}

}  // namespace mm::server
