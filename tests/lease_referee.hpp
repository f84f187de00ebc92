// The lease tests' referee and stepped agents (test_cluster_leases.cpp,
// test_cluster_cutoff.cpp): who serves what as the ownership hooks report
// it, checked for two servers of one resource at one instant.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "mm/cluster/lease_agent.hpp"

namespace mm::test {

using namespace std::chrono_literals;

// The async shards' resources "mm-0".. and the session partitions' leases.
inline std::vector<std::string> shard_names(std::size_t n, std::size_t partitions = 1) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back("mm-" + std::to_string(i));
  for (std::size_t p = 0; p < partitions; ++p)
    out.push_back(partitions == 1 ? std::string("sessions") : "sessions-" + std::to_string(p));
  return out;
}

// Who serves what, as the hooks report it, with each node's deadline: a
// node serves a resource from its start until its stop or its deadline,
// whichever comes first. Two servers of one resource at one instant fail.
class referee {
 public:
  using clock = std::chrono::steady_clock;

  mm::cluster::ownership_hooks hooks_for(std::string node,
                                         std::shared_ptr<mm::cluster::serving_deadline> d) {
    return {[this, node, d](const std::string& r, const std::string&, std::uint64_t epoch) {
              std::lock_guard<std::mutex> lock(mutex_);
              const auto now = clock::now();
              for (const auto& [other, since] : serving_[r])
                if (other != node && deadlines_[other]->open(now)) {
                  overlaps_.push_back(r + ": " + node + " started while " + other + " served");
                }
              serving_[r][node] = now;
              epochs_[r].push_back(epoch);
              deadlines_[node] = d;
              return true;
            },
            [this, node](const std::string& r, bool) {
              std::lock_guard<std::mutex> lock(mutex_);
              serving_[r].erase(node);
            }};
  }
  // A node that died (its agent gone): it serves until its deadline, then nothing.
  std::vector<std::string> overlaps() {
    std::lock_guard<std::mutex> lock(mutex_);
    return overlaps_;
  }
  std::set<std::string> servers_of(const std::string& r) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::set<std::string> out;
    for (const auto& [node, since] : serving_[r])
      if (deadlines_[node]->open()) out.insert(node);
    return out;
  }
  // Epochs only grow: a take never reuses one.
  bool epochs_grow() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [r, e] : epochs_)
      for (std::size_t i = 1; i < e.size(); ++i)
        if (e[i] <= e[i - 1]) return false;
    return true;
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::map<std::string, clock::time_point>> serving_;
  std::map<std::string, std::shared_ptr<mm::cluster::serving_deadline>> deadlines_;
  std::map<std::string, std::vector<std::uint64_t>> epochs_;
  std::vector<std::string> overlaps_;
};

// An agent stepped by the test: a node dies when the test stops stepping it
// (what SIGKILL or SIGSTOP does: no goodbye, the heartbeat stops), and the
// database notices through the heartbeat alone.
struct stepped_agent {
  std::shared_ptr<mm::cluster::serving_deadline> deadline =
      std::make_shared<mm::cluster::serving_deadline>();
  std::unique_ptr<mm::cluster::lease_agent> agent;
  bool stepping = true;

  stepped_agent(const std::string& url, const std::string& name, referee& ref,
                std::vector<std::string> pinned = {}) {
    mm::cluster::agent_config c;
    c.database_url = url;
    c.me = {name, "http://" + name, "", std::move(pinned)};
    c.resources = shard_names(6);
    c.takeover_after = 1000ms;
    agent = std::make_unique<mm::cluster::lease_agent>(c, ref.hooks_for(name, deadline), deadline);
  }
};

// Steps every live agent every 50 ms for `d` (or until `done`).
template <class Done>
bool step_for(std::vector<stepped_agent*> agents, std::chrono::milliseconds d, Done done) {
  const auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) {
    for (auto* a : agents)
      if (a->stepping) a->agent->step();
    if (done()) return true;
    std::this_thread::sleep_for(50ms);
  }
  return done();
}

// True when every resource is served by exactly one node, per the referee.
inline bool all_served_once(referee& ref) {
  for (const auto& r : shard_names(6))
    if (ref.servers_of(r).size() != 1) return false;
  return true;
}

inline std::size_t serving_count(referee& ref, const std::string& node) {
  std::size_t n = 0;
  for (const auto& r : shard_names(6)) n += ref.servers_of(r).count(node);
  return n;
}

}  // namespace mm::test
