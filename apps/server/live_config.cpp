#include "live_config.hpp"

#include <chrono>
#include <map>
#include <set>

#include "config_values.hpp"
#include "mm/actors/session_journal.hpp"
#include "mm/actors/session_queue_actor.hpp"
#include "mm/engine/error.hpp"
#include "mm/engine/log.hpp"
#include "mm/session/session_queue.hpp"
#include "session_config.hpp"
#include "store_url.hpp"

namespace mm::server {

namespace {

std::int64_t unix_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool named_list(const json& a) {
  if (!a.is_array()) return false;
  std::set<std::string> names;
  for (const auto& x : a)
    if (!x.is_object() || !x.contains("name") || !x["name"].is_string() ||
        !names.insert(x["name"].get<std::string>()).second)
      return false;
  return true;
}

void diff_into(const std::string& key, const json& a, const json& b, json& out, std::size_t limit) {
  if (out.size() >= limit || a == b) return;
  const auto at = [&](const std::string& k) { return key.empty() ? k : key + "." + k; };
  if (a.is_object() && b.is_object()) {
    std::set<std::string> keys;
    for (const auto& [k, v] : a.items()) keys.insert(k);
    for (const auto& [k, v] : b.items()) keys.insert(k);
    for (const auto& k : keys)
      diff_into(at(k), a.contains(k) ? a[k] : json(), b.contains(k) ? b[k] : json(), out, limit);
    return;
  }
  if (named_list(a) && named_list(b)) {
    std::map<std::string, json> from, to;
    std::vector<std::string> order;
    for (const auto& x : a) {
      from[x["name"]] = x;
      order.push_back(x["name"]);
    }
    for (const auto& x : b) {
      if (!from.count(x["name"])) order.push_back(x["name"]);
      to[x["name"]] = x;
    }
    for (const auto& n : order)
      diff_into(at(n), from.count(n) ? from[n] : json(), to.count(n) ? to[n] : json(), out, limit);
    return;
  }
  out.push_back({{"key", key}, {"from", a}, {"to", b}});
}

// The config a queue of this full name runs under in `queues` (a configured
// queue, a shard of a split one, or one made from the template), as the
// service's registry finds it; none: the queue would be closed.
std::optional<session::queue_config> config_for(const std::vector<session::queue_config>& queues,
                                                const std::string& template_name,
                                                const std::string& name) {
  const auto dot = name.find('.');
  const std::string base = name.substr(0, dot);
  for (const auto& q : queues) {
    if (q.name != (dot == std::string::npos ? name : base)) continue;
    if (dot == std::string::npos && !q.shard_by.empty()) return std::nullopt;
    if (dot != std::string::npos && q.shard_by.empty()) return std::nullopt;
    session::queue_config c = q;
    c.name = name;
    c.shard_by.clear();
    return c;
  }
  if (dot != std::string::npos || template_name.empty()) return std::nullopt;
  for (const auto& q : queues)
    if (q.name == template_name) {
      session::queue_config c = q;
      c.name = name;
      c.shard_by.clear();
      return c;
    }
  return std::nullopt;
}

}  // namespace

json sessions_document(const std::vector<session::queue_config>& queues) {
  return {{"queues", queues_json(queues)}};
}

std::vector<session::queue_config> read_sessions_document(const session_settings& base,
                                                          const json& document) {
  if (!document.is_object() || !document.contains("queues"))
    bad("sessions.queues", "the document is {\"queues\": [...]}, as the config file's key");
  for (const auto& [k, v] : document.items())
    if (k != "queues") bad("sessions." + k.substr(0, 64), "cannot change while the server runs");
  session_settings s = base;
  s.queues = read_queues("sessions.queues", document["queues"]);
  check(s);
  return s.queues;
}

json config_diff(const json& from, const json& to, std::size_t limit) {
  json out = json::array();
  diff_into("", from, to, out, limit);
  return out;
}

json count_stranded(const session_settings& base, const std::vector<session::queue_config>& now,
                    const std::vector<session::queue_config>& next, player_store& store,
                    const std::string& service_name) {
  const auto journal = actors::load_session_journal(store, service_name, unix_now_ms(),
                                                    base.outcome_retention, base.max_outcomes);
  const auto latency = latency_model_of(base);
  std::map<std::string, std::optional<session::session_queue>> engines;   // by queue, changed only
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> counts;  // no_longer_fit, closed
  std::uint64_t tickets = 0;
  for (const auto& t : journal.waiting) {
    bool stranded = false;
    for (const auto& name : t.queues) {
      const auto before = config_for(now, base.queue_template, name);
      const auto after = config_for(next, base.queue_template, name);
      if (before == after) continue;
      if (!after) {
        ++counts[name].second;
        stranded = true;
        continue;
      }
      auto& engine = engines[name];
      if (!engine) engine.emplace(*after, latency, 1);
      try {
        engine->check(actors::to_queue_request(t), session::time_ms(t.created_ms));
      } catch (const mm::error&) {
        ++counts[name].first;
        stranded = true;
      }
    }
    tickets += stranded ? 1 : 0;
  }
  json queues = json::object();
  for (const auto& [name, n] : counts)
    queues[name] = {{"no_longer_fit", n.first}, {"closed", n.second}};
  return {{"tickets", tickets}, {"queues", queues}};
}

live_config::live_config(const server_config& c, std::string service_name, apply_fn apply)
    : config_(c),
      service_name_(std::move(service_name)),
      apply_(std::move(apply)),
      store_(open_configured_store(c)),
      applied_queues_(c.sessions.queues) {
  std::lock_guard lock(store_mutex_);
  seed_from_file();
  adopt_latest();
}

live_config::~live_config() {
  {
    std::lock_guard lock(state_mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (follower_.joinable()) follower_.join();
}

void live_config::seed_from_file() {
  const json file = sessions_document(config_.sessions.queues);
  for (int attempt = 0; attempt < 5; ++attempt) {
    const auto latest = store_->latest_config(sessions_scope);
    if (latest) {
      // The newest version the file gave: is the file still the same?
      for (const auto& v : store_->config_history(sessions_scope, max_config_versions_listed))
        if (v.author == "file") {
          if (json::parse(v.document) == file) return;
          break;
        }
    }
    config_version v;
    v.scope = sessions_scope;
    v.version = latest ? latest->version + 1 : 1;
    v.document = file.dump();
    v.author = "file";
    v.created_unix_ms = unix_now_ms();
    v.comment = latest ? "the config file's sessions.queues changed" : "the config file";
    if (store_->append_config(v)) return;  // else another node came first: look again
  }
}

std::uint32_t live_config::adopt_latest() {
  const auto latest = store_->latest_config(sessions_scope);
  if (!latest || latest->version <= applied_version()) return 0;
  std::vector<session::queue_config> queues;
  try {
    queues = read_sessions_document(config_.sessions, json::parse(latest->document));
  } catch (const std::exception& e) {
    log(log_level::error, "sessions",
        "configuration version " + std::to_string(latest->version) +
            " cannot run on this node (its other settings differ?): " + e.what());
    std::lock_guard lock(state_mutex_);
    applied_ = latest->version;  // not tried again
    return 0;
  }
  std::uint32_t changed = 0;
  try {
    changed = apply_(latest->version, queues);
  } catch (const std::exception& e) {
    log(log_level::error, "sessions",
        "configuration version " + std::to_string(latest->version) +
            " was refused by the session queues: " + e.what());
  }
  {
    std::lock_guard lock(state_mutex_);
    applied_ = latest->version;
    applied_queues_ = std::move(queues);
  }
  say("sessions", "sessions configuration version " + std::to_string(latest->version) + " (by " +
                      latest->author + ") in force; " + std::to_string(changed) +
                      " running queue(s) changed");
  return changed;
}

void live_config::follow(std::chrono::milliseconds poll_every) {
  follower_ = std::thread([this, poll_every] {
    bool failing = false;
    std::unique_lock lock(state_mutex_);
    while (!wake_.wait_for(lock, poll_every, [this] { return stopping_; })) {
      lock.unlock();
      try {
        std::lock_guard store_lock(store_mutex_);
        adopt_latest();
        failing = false;
      } catch (const std::exception& e) {
        if (!failing)
          log(log_level::warning, "sessions",
              std::string("cannot read the configuration's versions: ") + e.what());
        failing = true;
      }
      lock.lock();
    }
  });
}

std::int64_t live_config::applied_version() const {
  std::lock_guard lock(state_mutex_);
  return applied_;
}

std::vector<session::queue_config> live_config::queues_in_force() {
  std::lock_guard lock(state_mutex_);
  return applied_queues_;
}

json live_config::current() {
  std::lock_guard lock(store_mutex_);
  const auto latest = store_->latest_config(sessions_scope);
  json out = {{"scope", sessions_scope}, {"applied_version", applied_version()}};
  if (!latest) return out;
  out["version"] = latest->version;
  out["author"] = latest->author;
  out["created_unix_ms"] = latest->created_unix_ms;
  out["comment"] = latest->comment;
  out["document"] = json::parse(latest->document);
  return out;
}

json live_config::history(std::size_t limit) {
  std::lock_guard lock(store_mutex_);
  const auto versions = store_->config_history(sessions_scope, limit + 1);
  json list = json::array();
  for (std::size_t i = 0; i < versions.size() && i < limit; ++i) {
    const auto& v = versions[i];
    const json doc = json::parse(v.document);
    const json before = i + 1 < versions.size() ? json::parse(versions[i + 1].document) : json();
    list.push_back({{"version", v.version},
                    {"author", v.author},
                    {"created_unix_ms", v.created_unix_ms},
                    {"comment", v.comment},
                    {"diff", config_diff(before, doc)}});
  }
  return {{"scope", sessions_scope}, {"versions", list}};
}

json live_config::check(const json& document) {
  const auto next = read_sessions_document(config_.sessions, document);
  const auto now = queues_in_force();
  std::lock_guard lock(store_mutex_);
  return {{"valid", true},
          {"diff", config_diff(sessions_document(now), sessions_document(next))},
          {"stranded", count_stranded(config_.sessions, now, next, *store_, service_name_)}};
}

json live_config::apply(const json& document, const std::string& author, const std::string& comment,
                        bool force, std::optional<std::int64_t> base_version) {
  const auto next = read_sessions_document(config_.sessions, document);
  std::lock_guard lock(store_mutex_);
  adopt_latest();  // compared with what is in force
  const auto latest = store_->latest_config(sessions_scope);
  const std::int64_t latest_version = latest ? latest->version : 0;
  if (base_version && *base_version != latest_version)
    throw mm::error(errc::conflict, "base_version: version " + std::to_string(latest_version) +
                                        " is in force, not " + std::to_string(*base_version));
  const auto now = queues_in_force();
  const json doc = sessions_document(next);
  json diff = config_diff(sessions_document(now), doc);
  json stranded = count_stranded(config_.sessions, now, next, *store_, service_name_);
  if (stranded["tickets"].get<std::uint64_t>() > 0 && !force) throw stranding_refused{stranded};
  if (diff.empty())
    return {{"version", latest_version},
            {"unchanged", true},
            {"diff", diff},
            {"stranded", stranded},
            {"queues_changed", 0}};
  config_version v;
  v.scope = sessions_scope;
  v.version = latest_version + 1;
  v.document = doc.dump();
  v.author = author;
  v.created_unix_ms = unix_now_ms();
  v.comment = comment;
  if (!store_->append_config(v))
    throw mm::error(errc::conflict, "version " + std::to_string(v.version) +
                                        " was added by another change first: read it and try "
                                        "again");
  const std::uint32_t changed = adopt_latest();
  return {{"version", v.version},
          {"unchanged", false},
          {"diff", diff},
          {"stranded", stranded},
          {"queues_changed", changed}};
}

json live_config::rollback(std::int64_t version, const std::string& author,
                           const std::string& comment, bool force) {
  std::optional<json> document;
  {
    std::lock_guard lock(store_mutex_);
    for (const auto& v : store_->config_history(sessions_scope, max_config_versions_listed))
      if (v.version == version) document = json::parse(v.document);
  }
  if (!document)
    throw mm::error(errc::not_found, "version: no version " + std::to_string(version) +
                                         " among the last " +
                                         std::to_string(max_config_versions_listed));
  return apply(*document, author,
               comment.empty() ? "rollback to version " + std::to_string(version) : comment, force,
               std::nullopt);
}

}  // namespace mm::server
