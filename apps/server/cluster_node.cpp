#include "cluster_node.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <caf/scoped_actor.hpp>
#include <thread>

#include "mm/engine/log.hpp"
#include "mm/engine/options.hpp"
#include "mm/session/partitions.hpp"

#ifdef MM_HAVE_POSTGRES
#include "mm/cluster/lease_agent.hpp"
#endif

namespace mm::server {

std::string shard_resource(std::uint32_t i) {
  return "mm-" + std::to_string(i);
}

#ifdef MM_HAVE_POSTGRES

namespace {

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "node";
  return buf;
}

// The shard index of a resource "mm-i", or nothing.
std::optional<std::uint32_t> shard_of(const std::string& resource, std::uint32_t total) {
  if (resource.rfind("mm-", 0) != 0 || resource.size() > 8) return std::nullopt;
  std::uint32_t i = 0;
  for (std::size_t k = 3; k < resource.size(); ++k) {
    if (resource[k] < '0' || resource[k] > '9') return std::nullopt;
    i = i * 10 + static_cast<std::uint32_t>(resource[k] - '0');
  }
  if (resource.size() == 3 || i >= total) return std::nullopt;
  return i;
}

}  // namespace

struct cluster_node::impl {
  caf::actor_system& sys;
  std::uint32_t total;
  std::vector<supervisor> supervisors;
  session_host* sessions = nullptr;
  std::chrono::milliseconds takeover_after;
  std::shared_ptr<cluster::serving_deadline> deadline;
  std::unique_ptr<cluster::lease_agent> agent;
  std::atomic<bool> stop_flag{false};
  std::thread thread;
  bool stopped = false;

  // The session partition whose lease is `resource`, or nothing.
  std::optional<std::uint32_t> partition_of(const std::string& resource) const {
    const std::uint32_t count = sessions->partition_count();
    for (std::uint32_t p = 0; p < count; ++p)
      if (resource == session::partition_resource(p, count)) return p;
    return std::nullopt;
  }

  // A fenced connection's idle transaction ends after a tenth of the
  // takeover time: a paused writer holds the next owner back no longer.
  std::chrono::milliseconds idle_limit() const {
    return std::max(std::chrono::milliseconds(100), takeover_after / 10);
  }

  impl(caf::actor_system& s, std::uint32_t n, std::vector<supervisor> sups,
       std::chrono::milliseconds t)
      : sys(s), total(n), supervisors(std::move(sups)), takeover_after(t) {}

  // Called on the agent's thread: a blocking request to a supervisor.
  bool ask_supervisor(std::uint32_t shard, bool own, const std::string& node, std::uint64_t epoch) {
    caf::scoped_actor self{sys};
    bool ok = false;
    auto on_error = [&](caf::error& e) {
      log(log_level::error, "cluster",
          "shard " + shard_resource(shard) + " did not " + (own ? "start" : "stop") + ": " +
              sys.render(e));
    };
    if (own)
      self->request(supervisors[shard], std::chrono::seconds(10), actors::lease_atom::value, node,
                    epoch)
          .receive([&](bool b) { ok = b; }, on_error);
    else  // the last snapshot may take a while on a loaded database
      self->request(supervisors[shard], std::chrono::seconds(40), actors::lease_atom::value,
                    actors::hand_over_atom::value)
          .receive([&](bool b) { ok = b; }, on_error);
    return ok;
  }
};

cluster_node::cluster_node(caf::actor_system& sys, const server_config& c,
                           std::vector<supervisor> supervisors, session_host& sessions,
                           std::shared_ptr<cluster::serving_deadline> deadline,
                           std::uint16_t http_port, int actor_port)
    : impl_(std::make_unique<impl>(sys, c.cluster_total, std::move(supervisors),
                                   c.cluster_takeover_after)) {
  const std::string host =
      c.cluster_advertise_host.empty() ? c.http_host : c.cluster_advertise_host;
  cluster::agent_config a;
  a.database_url = c.database_url;
  a.me.name =
      c.cluster_node.empty() ? host_name() + ":" + std::to_string(http_port) : c.cluster_node;
  a.me.http_url = "http://" + host + ":" + std::to_string(http_port);
  if (actor_port > 0) a.me.actor_endpoint = host + ":" + std::to_string(actor_port);
  for (const auto i : c.cluster_owned) a.me.pinned.push_back(shard_resource(i));
  for (std::uint32_t i = 0; i < c.cluster_total; ++i) a.resources.push_back(shard_resource(i));
  const std::uint32_t partitions = sessions.partition_count();
  for (std::uint32_t p = 0; p < partitions; ++p)
    a.resources.push_back(session::partition_resource(p, partitions));
  a.takeover_after = c.cluster_takeover_after;
  auto* self = impl_.get();
  self->deadline = deadline;
  self->sessions = &sessions;
  cluster::ownership_hooks hooks;
  hooks.start = [self](const std::string& r, const std::string& node, std::uint64_t epoch) {
    if (const auto shard = shard_of(r, self->total))
      return self->ask_supervisor(*shard, true, node, epoch);
    const auto p = self->partition_of(r);
    if (!p) return false;
    try {
      self->sessions->start(*p, {r, node, epoch, self->idle_limit()});
      return true;
    } catch (const std::exception& e) {
      log(log_level::error, "cluster",
          std::string("the session queues did not start: ") + e.what());
      return false;
    }
  };
  hooks.stop = [self](const std::string& r, bool handing_over) {
    if (const auto shard = shard_of(r, self->total)) {
      if (handing_over)
        self->ask_supervisor(*shard, false, "", 0);
      else  // lost: stopped now, without its last snapshot
        caf::anon_send(self->supervisors[*shard], actors::lease_atom::value,
                       actors::lease_lost_atom::value);
    } else if (const auto p = self->partition_of(r)) {
      if (handing_over)
        self->sessions->stop(*p);
      else
        self->sessions->abandon(*p);
    }
  };
  impl_->agent = std::make_unique<cluster::lease_agent>(a, hooks, std::move(deadline));
  impl_->thread = std::thread([self] { self->agent->run(self->stop_flag); });
}

void cluster_node::stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  impl_->stop_flag = true;
  if (impl_->thread.joinable()) impl_->thread.join();
}

cluster_node::~cluster_node() {
  stop();
}

json cluster_node::report() const {
  const cluster::agent_report r = impl_->agent->report();
  std::map<std::string, std::string> name_of;
  for (const auto& n : r.view.nodes) name_of[n.id] = n.info.name;
  json nodes = json::array();
  for (const auto& n : r.view.nodes) {
    json owns = json::array();
    for (const auto& l : r.view.leases)
      if (l.owner == n.id) owns.push_back(l.resource);
    nodes.push_back({{"id", n.id},
                     {"name", n.info.name},
                     {"http_url", n.info.http_url},
                     {"actor_endpoint", n.info.actor_endpoint},
                     {"pinned", n.info.pinned},
                     {"state", n.live    ? "live"
                               : n.alive ? "expired"
                                         : "dead"},
                     {"lease_expires_in_ms", n.expires_in_ms},
                     {"connected", n.connected},
                     {"started_unix_ms", n.started_unix_ms},
                     {"owns", owns}});
  }
  json leases = json::array();
  for (const auto& l : r.view.leases) {
    const auto planned = r.plan.find(l.resource);
    leases.push_back(
        {{"resource", l.resource},
         {"owner", l.owner.empty() ? json(nullptr) : json(l.owner)},
         {"owner_name", l.owner.empty() ? json(nullptr) : json(name_of[l.owner])},
         {"epoch", l.epoch},
         {"since_unix_ms", l.since_unix_ms},
         {"takeovers", l.takeovers},
         {"planned_owner", planned == r.plan.end() ? json(nullptr) : json(planned->second)}});
  }
  json owned = json::array();
  for (const auto& o : r.owned) owned.push_back({{"resource", o.resource}, {"epoch", o.epoch}});
  // Which node runs each configured session queue: its partition's owner.
  const std::uint32_t count = impl_->sessions->partition_count();
  const auto names = impl_->sessions->queue_names();
  json partitions = json::array();
  for (std::uint32_t p = 0; p < count; ++p) {
    const std::string resource = session::partition_resource(p, count);
    json owner = nullptr, owner_name = nullptr;
    for (const auto& l : r.view.leases)
      if (l.resource == resource && !l.owner.empty()) {
        owner = l.owner;
        owner_name = name_of[l.owner];
      }
    json queues = json::array();
    for (const auto& q : names)
      if (session::partition_slice{p, count}.holds(q)) queues.push_back(q);
    partitions.push_back({{"partition", p},
                          {"resource", resource},
                          {"owner", owner},
                          {"owner_name", owner_name},
                          {"queues", queues}});
  }
  const auto& k = r.counters;
  return {{"cluster", true},
          {"node", r.node_id},
          {"takeover_after_ms", impl_->takeover_after.count()},
          {"serving", r.serving},
          {"serving_for_ms", r.serving_for_ms},
          {"database_now_unix_ms", r.view.now_unix_ms},
          {"owned", owned},
          {"nodes", nodes},
          {"leases", leases},
          {"session_partitions", partitions},
          {"counters",
           {{"rounds", k.rounds},
            {"takes", k.takes},
            {"takeovers", k.takeovers},
            {"takeover_seconds_total", k.takeover_seconds_total},
            {"last_takeover_seconds", k.last_takeover_seconds},
            {"releases", k.releases},
            {"lost", k.lost},
            {"renew_failures", k.renew_failures},
            {"joins", k.joins},
            {"database_errors", k.database_errors}}}};
}

bool cluster_node::serves(const std::string& resource) const {
  return impl_->deadline->open() && impl_->agent->holds(resource);
}

bool cluster_node::serves_sessions() const {
  const std::uint32_t count = impl_->sessions->partition_count();
  for (std::uint32_t p = 0; p < count; ++p)
    if (serves(session::partition_resource(p, count))) return true;
  return false;
}

std::uint32_t cluster_node::shards() const {
  return impl_->total;
}

std::vector<std::uint32_t> cluster_node::served_shards() const {
  std::vector<std::uint32_t> out;
  if (!impl_->deadline->open()) return out;
  for (const auto& o : impl_->agent->report().owned)
    if (const auto shard = shard_of(o.resource, impl_->total)) out.push_back(*shard);
  return out;
}

std::optional<std::string> cluster_node::owner_url(const std::string& resource) const {
  const cluster::agent_report r = impl_->agent->report();
  for (const auto& l : r.view.leases) {
    if (l.resource != resource || l.owner.empty() || l.owner == r.node_id) continue;
    for (const auto& n : r.view.nodes)
      if (n.id == l.owner && cluster::seen_renewing(r, n) && !n.info.http_url.empty())
        return n.info.http_url;
  }
  return std::nullopt;
}

std::optional<std::string> cluster_node::heir_url(const std::string& resource) const {
  if (auto url = owner_url(resource)) return url;
  const cluster::agent_report r = impl_->agent->report();
  const auto planned = r.plan.find(resource);
  if (planned == r.plan.end() || planned->second == r.node_id) return std::nullopt;
  for (const auto& n : r.view.nodes)
    if (n.id == planned->second && cluster::seen_renewing(r, n) && !n.info.http_url.empty())
      return n.info.http_url;
  return std::nullopt;
}

std::vector<std::string> cluster_node::planned_not_held() const {
  const cluster::agent_report r = impl_->agent->report();
  std::vector<std::string> out;
  for (const auto& [resource, owner] : r.plan) {
    if (owner != r.node_id) continue;
    const bool held = std::any_of(r.owned.begin(), r.owned.end(),
                                  [&](const auto& o) { return o.resource == resource; });
    if (!held) out.push_back(resource);
  }
  return out;
}

cluster_node::counts cluster_node::metrics() const {
  const cluster::agent_report r = impl_->agent->report();
  counts c;
  const auto& k = r.counters;
  c.takeovers = k.takeovers;
  c.takes = k.takes;
  c.releases = k.releases;
  c.lost = k.lost;
  c.renew_failures = k.renew_failures;
  c.database_errors = k.database_errors;
  c.joins = k.joins;
  c.takeover_seconds_total = k.takeover_seconds_total;
  c.last_takeover_seconds = k.last_takeover_seconds;
  c.owned = r.owned.size();
  for (const auto& n : r.view.nodes) c.live_nodes += n.live;
  c.serving = r.serving;
  return c;
}

#else  // no PostgreSQL in this build: no cluster

struct cluster_node::impl {};

cluster_node::cluster_node(caf::actor_system&, const server_config&, std::vector<supervisor>,
                           session_host&, std::shared_ptr<cluster::serving_deadline>, std::uint16_t,
                           int) {
  throw config_error("config key 'cluster.total': this build has no PostgreSQL (libpqxx-dev)");
}
cluster_node::~cluster_node() = default;
void cluster_node::stop() {}
json cluster_node::report() const {
  return {{"cluster", false}};
}
bool cluster_node::serves(const std::string&) const {
  return false;
}
bool cluster_node::serves_sessions() const {
  return false;
}
std::uint32_t cluster_node::shards() const {
  return 0;
}
std::vector<std::uint32_t> cluster_node::served_shards() const {
  return {};
}
std::optional<std::string> cluster_node::owner_url(const std::string&) const {
  return std::nullopt;
}
std::optional<std::string> cluster_node::heir_url(const std::string&) const {
  return std::nullopt;
}
std::vector<std::string> cluster_node::planned_not_held() const {
  return {};
}
cluster_node::counts cluster_node::metrics() const {
  return {};
}

#endif

}  // namespace mm::server
