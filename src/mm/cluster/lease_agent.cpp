#include "mm/cluster/lease_agent.hpp"

#include <algorithm>
#include <set>
#include <thread>

#include "mm/cluster/ownership.hpp"
#include "mm/engine/log.hpp"

namespace mm::cluster {

namespace {

using steady = std::chrono::steady_clock;

double seconds_since(steady::time_point t) {
  return std::chrono::duration<double>(steady::now() - t).count();
}

// `live`, and the nodes of `view` that may be about to join again: not live,
// expired less than `within` ago (declared dead or not: the first take after
// an outage declares every expired node dead), and with no live incarnation
// of their name.
std::vector<planned_node> with_returning(const cluster_view& view, std::vector<planned_node> live,
                                         std::chrono::milliseconds within) {
  std::set<std::string> names;
  for (const auto& n : live) names.insert(n.name);
  for (const auto& n : view.nodes)
    if (!n.live && -n.expires_in_ms < within.count() && names.insert(n.info.name).second)
      live.push_back({n.id, n.info.name, n.info.pinned});
  return live;
}

}  // namespace

lease_agent::lease_agent(agent_config config, ownership_hooks hooks,
                         std::shared_ptr<serving_deadline> deadline)
    : config_(std::move(config)), hooks_(std::move(hooks)), deadline_(std::move(deadline)) {
  // Tried again for `takeover_after` and three attempts at least: one call
  // is bounded by a third of the lease, and a database slow to answer a new
  // connection for a moment (a loaded machine: seen under AddressSanitizer
  // with two tests at once) is no reason for a node not to start.
  const auto began = steady::now();
  for (int attempt = 1;; ++attempt) {
    try {
      connect();
      join();
      return;
    } catch (const std::exception& e) {
      table_.reset();
      if (attempt >= 3 && steady::now() - began >= config_.takeover_after) throw;
      log(log_level::warning, "cluster", std::string(e.what()) + "; joining again");
      std::this_thread::sleep_for(config_.check_every());
    }
  }
}

lease_agent::~lease_agent() {
  stop_watchdog();
}

void lease_agent::connect() {
  // A statement that takes longer than a third of the lease is given up: the
  // agent must get back to its heartbeat.
  table_ = std::make_unique<pg_lease_table>(config_.database_url, config_.lease() / 3);
  table_->add_resources(config_.resources);
}

void lease_agent::join() {
  const auto sent = steady::now();
  const std::string id = table_->join(config_.me, config_.lease());
  deadline_->extend_to(sent + config_.lease() * 9 / 10);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    last_renewal_sent_ = sent;
    joined_at_ = sent;
    // "Free for three rounds" counts this incarnation's rounds: a resource
    // seen free in a round before an outage was not free all along.
    free_since_.clear();
    node_id_ = id;
    ++counters_.joins;
  }
  table_->notify();  // the others plan again with this node in
  log(log_level::info, "cluster", "joined as node '" + id + "'");
}

bool lease_agent::renew_on(pg_lease_table& table, const std::string& id) {
  const auto sent = steady::now();
  if (table.renew(id, config_.lease())) {
    // The database's expiry is at least `lease` after `sent`; a tenth less
    // covers clocks that run at slightly different rates. (Two renewals in
    // flight at once, the round's and the watchdog's, may land in either
    // order: the later store of an earlier one only brings the deadline
    // closer, the safe way.)
    deadline_->extend_to(sent + config_.lease() * 9 / 10);
    // Only a renewal that succeeded counts: one that failed (a connection
    // a database restart had cut) must not put the next attempt off.
    std::lock_guard<std::mutex> lock(mutex_);
    last_renewal_sent_ = std::max(last_renewal_sent_, sent);
    return true;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  ++counters_.renew_failures;
  refused_ = id;
  return false;
}

void lease_agent::renew() {
  if (renew_on(*table_, node_id_)) return;
  lose_everything("its heartbeat expired before it was renewed (paused, or cut off)");
  join();
}

void lease_agent::watch_hooks() {
  std::unique_ptr<pg_lease_table> table;  // its own: the round's is busy in the hook
  std::unique_lock<std::mutex> lock(mutex_);
  while (!watchdog_stop_) {
    // Every half interval: a hook running while the node serves, an interval
    // or more after the last renewal, gets a renewal. Never a refused
    // incarnation's; never past the deadline (the node is in trouble: the
    // round's own attempts are the only ones the database gets).
    watchdog_wake_.wait_for(lock, config_.check_every() / 2, [&] { return watchdog_stop_; });
    if (watchdog_stop_ || !in_hook_ || node_id_ == refused_ || !deadline_->open() ||
        steady::now() - last_renewal_sent_ < config_.check_every())
      continue;
    const std::string id = node_id_;
    lock.unlock();
    // A connection kept from an earlier hook may have been cut since (a
    // database restart): it fails at once, and a fresh one is tried next.
    for (bool fresh = !table;; fresh = true) {
      const auto began = steady::now();
      try {
        if (!table)
          table = std::make_unique<pg_lease_table>(config_.database_url, config_.lease() / 3);
        renew_on(*table, id);  // a refusal: the round joins anew after the hook
        break;
      } catch (const std::exception& e) {
        table.reset();  // a new connection at the next need
        {
          std::lock_guard<std::mutex> counting(mutex_);
          ++counters_.database_errors;
        }
        log(log_level::warning, "cluster", e.what());
        if (fresh || !failed_fast(began)) break;  // tried again at the next wake
      }
    }
    lock.lock();
  }
}

void lease_agent::stop_watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    watchdog_stop_ = true;
  }
  watchdog_wake_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
}

// Marks a hook call for the watchdog, for its whole length.
class lease_agent::hook_running {
 public:
  explicit hook_running(lease_agent& a) : a_(a) {
    std::lock_guard<std::mutex> lock(a_.mutex_);
    a_.in_hook_ = true;
  }
  ~hook_running() {
    std::lock_guard<std::mutex> lock(a_.mutex_);
    a_.in_hook_ = false;
  }
  hook_running(const hook_running&) = delete;
  hook_running& operator=(const hook_running&) = delete;

 private:
  lease_agent& a_;
};

bool lease_agent::start_hook(const std::string& resource, std::uint64_t epoch) {
  hook_running running(*this);
  return hooks_.start(resource, node_id_, epoch);
}

void lease_agent::stop_hook(const std::string& resource, bool handing_over) {
  hook_running running(*this);
  hooks_.stop(resource, handing_over);
}

bool lease_agent::keep_alive() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (refused_ == node_id_) return false;  // the watchdog's renewal was refused
    if (steady::now() - last_renewal_sent_ < config_.check_every()) return true;
  }
  const std::string id = node_id_;
  renew();
  return node_id_ == id;
}

void lease_agent::lose_everything(const std::string& why) {
  deadline_->close();
  if (owned_.empty()) return;
  // Who holds what now, read before anything stops: what this node tells
  // those it turns away (redirects, event followers) names the new owners.
  try {
    if (!table_) connect();
    cluster_view now = table_->view();
    std::lock_guard<std::mutex> lock(mutex_);
    last_view_ = std::move(now);
    last_view_at_ = steady::now();
  } catch (const std::exception&) {
    table_.reset();  // the old view stays; the next round reads it again
  }
  log(log_level::warning, "cluster",
      "node '" + node_id_ + "' stops serving " + std::to_string(owned_.size()) +
          " resources: " + why);
  const auto held = owned_;
  for (const auto& [resource, epoch] : held) {
    stop_hook(resource, false);
    std::lock_guard<std::mutex> lock(mutex_);
    owned_.erase(resource);
    ++counters_.lost;
  }
}

void lease_agent::step() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++counters_.rounds;
  }
  // A connection kept from the last round may have been cut since (a
  // database restart): a round that failed on it at once (not by a timeout:
  // a database that does not answer is not tried again sooner) is tried
  // once more on a fresh one, not a whole interval later.
  const bool kept_connection = table_ != nullptr;
  const auto began = steady::now();
  if (!try_round() && kept_connection && failed_fast(began)) try_round();
  // Not renewed in time (the database unreachable): stop serving before
  // another node may take over.
  if (!owned_.empty() && !deadline_->open())
    lose_everything("its heartbeat could not be renewed in time");
}

bool lease_agent::failed_fast(steady::time_point began) const {
  return steady::now() - began < config_.lease() / 10;
}

bool lease_agent::try_round() {
  try {
    if (!table_) connect();
    if (node_id_.empty())
      join();
    else
      renew();
    balance(table_->view());
    return true;
  } catch (const std::exception& e) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++counters_.database_errors;
    }
    table_.reset();  // a new connection next time
    log(log_level::warning, "cluster", e.what());
    return false;
  }
}

void lease_agent::balance(const cluster_view& view) {
  std::vector<planned_node> live;
  std::set<std::string> live_ids;
  for (const auto& n : view.nodes)
    if (n.live) {
      live.push_back({n.id, n.info.name, n.info.pinned});
      live_ids.insert(n.id);
    }
  const auto plan = plan_ownership(config_.resources, live);
  {
    // Shown from now on, and read by those this round turns away (redirects,
    // event followers): the view and the plan made from it, together.
    std::lock_guard<std::mutex> lock(mutex_);
    last_view_ = view;
    last_view_at_ = steady::now();
    plan_ = plan;
  }
  // What this node takes. A fresh incarnation (joined less than two rounds
  // ago) plans as if the nodes that expired within T and have no live
  // incarnation of their name were there too. After an outage of the
  // database, or a link of every node to it, the nodes join again within
  // moments of each other; planned over the live nodes alone, the first to
  // join took every resource and handed most over as the others came, so
  // most shards started twice (seen in the fault tests' logs). What such a
  // node is planned is taken anyway once it has been free for three rounds
  // (below), or once this node's grace is over. Names are hashed, not
  // incarnations: the plan is the same when the node comes back.
  const bool fresh = steady::now() - joined_at_ < config_.check_every() * 2;
  const auto take_plan =
      fresh ? plan_ownership(config_.resources, with_returning(view, live, config_.takeover_after))
            : plan;
  std::map<std::string, const cluster_lease_row*> lease_of;
  for (const auto& l : view.leases) lease_of[l.resource] = &l;
  const std::set<std::string> ours(config_.resources.begin(), config_.resources.end());

  // What this node runs but the database gives to another owner or epoch:
  // lost (this node was declared dead and joined anew in between).
  for (const auto& [resource, epoch] : std::map<std::string, std::uint64_t>(owned_)) {
    const auto it = lease_of.find(resource);
    if (it != lease_of.end() && it->second->owner == node_id_ && it->second->epoch == epoch)
      continue;
    stop_hook(resource, false);
    std::lock_guard<std::mutex> lock(mutex_);
    owned_.erase(resource);
    ++counters_.lost;
  }
  // What the database gives to this node at an epoch it does not run (it
  // stopped when a renewal was late, and the lease outlived that): served
  // again, under the same epoch, which nobody else can have had.
  for (const auto& l : view.leases)
    if (l.owner == node_id_ && !owned_.count(l.resource) && ours.count(l.resource) &&
        deadline_->open()) {
      if (!keep_alive()) return;
      if (!start_hook(l.resource, l.epoch)) {
        start_failed_[l.resource] = steady::now();
        table_->release(l.resource, node_id_, l.epoch);
        continue;
      }
      std::lock_guard<std::mutex> lock(mutex_);
      owned_[l.resource] = l.epoch;
    }
  // Handed over: what this node runs and the plan gives to another live node.
  // Stopped first (its last state written), then freed: never two owners.
  for (const auto& [resource, epoch] : std::map<std::string, std::uint64_t>(owned_)) {
    const auto target = plan.find(resource);
    if (target == plan.end() || target->second == node_id_) continue;
    if (!keep_alive()) return;
    stop_hook(resource, true);
    {
      // Out of the report before the release: once freed, the next owner
      // may serve it and say so, and this node must no longer claim it.
      std::lock_guard<std::mutex> lock(mutex_);
      owned_.erase(resource);
      ++counters_.releases;
    }
    table_->release(resource, node_id_, epoch);
  }
  // Taken: what the plan gives to this node and is free (or its owner dead),
  // and what has been free for three rounds whoever the plan gives it to (its
  // planned owner is not taking it; the plan moves it later).
  const auto now = steady::now();
  for (const auto& l : view.leases) {
    if (!ours.count(l.resource) || owned_.count(l.resource)) continue;
    const bool free = l.owner.empty() || !live_ids.count(l.owner);
    if (!free) {
      free_since_.erase(l.resource);
      continue;
    }
    const auto first_seen = free_since_.emplace(l.resource, now).first->second;
    const auto target = take_plan.find(l.resource);
    const bool planned_here = target != take_plan.end() && target->second == node_id_;
    if (!planned_here && now - first_seen < config_.check_every() * 3) continue;
    if (const auto failed = start_failed_.find(l.resource);
        failed != start_failed_.end() && now - failed->second < config_.check_every())
      continue;
    if (!keep_alive()) return;
    if (!deadline_->open()) continue;
    const lease_take t = table_->take(l.resource, node_id_);
    if (!t.taken) continue;
    double since_expiry = 0;
    for (const auto& n : view.nodes)
      if (n.id == t.previous_owner && n.expires_in_ms < 0)
        since_expiry = static_cast<double>(-n.expires_in_ms) / 1000.0;
    const auto started = steady::now();
    free_since_.erase(l.resource);
    if (!start_hook(l.resource, t.epoch)) {
      start_failed_[l.resource] = steady::now();
      table_->release(l.resource, node_id_, t.epoch);
      continue;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    owned_[l.resource] = t.epoch;
    ++counters_.takes;
    if (!t.previous_owner.empty()) {
      const double took = since_expiry + seconds_since(started) +
                          std::chrono::duration<double>(started - now).count();
      ++counters_.takeovers;
      counters_.takeover_seconds_total += took;
      counters_.last_takeover_seconds = took;
      log(log_level::info, "cluster",
          "took over '" + l.resource + "' from dead node '" + t.previous_owner + "' at epoch " +
              std::to_string(t.epoch));
    }
  }
}

void lease_agent::run(const std::atomic<bool>& stop) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    watchdog_stop_ = false;
  }
  watchdog_ = std::thread([this] { watch_hooks(); });
  while (!stop.load()) {
    step();
    if (stop.load()) break;
    bool waited = false;
    if (table_) try {
        table_->wait_for_notification(config_.check_every());
        waited = true;
      } catch (const std::exception&) {
        table_.reset();
      }
    if (!waited) std::this_thread::sleep_for(config_.check_every());
  }
  leave();
}

void lease_agent::leave() {
  const auto held = owned_;
  for (const auto& [resource, epoch] : held) {
    stop_hook(resource, deadline_->open());
    std::lock_guard<std::mutex> lock(mutex_);
    owned_.erase(resource);
  }
  // Renewed through every hand-over; then the deadline closes for good.
  stop_watchdog();
  deadline_->close();
  try {
    if (!table_) connect();
    table_->leave(node_id_);
    log(log_level::info, "cluster", "node '" + node_id_ + "' left; its leases are free");
  } catch (const std::exception& e) {
    log(log_level::warning, "cluster",
        std::string("could not leave (the others take over once "
                    "this node's heartbeat expires): ") +
            e.what());
  }
}

bool seen_renewing(const agent_report& r, const cluster_node_row& n) {
  const std::int64_t bound = r.renew_every_ms + r.renew_every_ms / 4;
  const std::int64_t renewed_ago = r.lease_ms - n.expires_in_ms;  // at the view's read
  return n.live && n.connected && renewed_ago <= bound && r.view_age_ms <= bound;
}

agent_report lease_agent::report() const {
  std::lock_guard<std::mutex> lock(mutex_);
  agent_report r;
  r.node_id = node_id_;
  r.view = last_view_;
  r.view_age_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - last_view_at_).count();
  r.renew_every_ms = config_.check_every().count();
  r.lease_ms = config_.lease().count();
  for (const auto& [resource, epoch] : owned_) r.owned.push_back({resource, epoch});
  r.plan = plan_;
  r.counters = counters_;
  r.serving = deadline_->open();
  r.serving_for_ms = r.serving ? std::chrono::duration_cast<std::chrono::milliseconds>(
                                     deadline_->until() - steady::now())
                                     .count()
                               : 0;
  return r;
}

bool lease_agent::holds(const std::string& resource) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return owned_.count(resource) != 0;
}

std::string lease_agent::node_id() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return node_id_;
}

}  // namespace mm::cluster
