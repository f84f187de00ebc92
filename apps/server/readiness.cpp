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

readiness_report readiness_probe::report() {
  {
    std::lock_guard<std::mutex> last(last_mutex_);
    if (made_at_ && std::chrono::steady_clock::now() - *made_at_ < reuse_for_) return last_;
  }
  std::unique_lock<std::mutex> computing(computing_, std::try_to_lock);
  if (!computing.owns_lock()) {  // another caller runs the checks: do not wait for it
    std::lock_guard<std::mutex> last(last_mutex_);
    if (made_at_) return last_;
    return {{{"readiness", std::string("the first report is being made")}}};
  }
  readiness_report out;
  for (const auto& c : checks_) {
    std::optional<std::string> problem;
    try {
      problem = c.run();
    } catch (const std::exception& e) {
      problem = e.what();
    }
    out.checks.push_back({c.name, std::move(problem)});
  }
  std::lock_guard<std::mutex> last(last_mutex_);
  last_ = out;
  made_at_ = std::chrono::steady_clock::now();
  return out;
}

}  // namespace mm::server
