#include "live_config.hpp"

#include <chrono>
#include <map>
#include <set>

#include "config_values.hpp"
#include "mm/engine/error.hpp"
#include "mm/engine/log.hpp"
#include "store_url.hpp"
#include "unix_time.hpp"

namespace mm::server {

namespace {

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

}  // namespace

json config_diff(const json& from, const json& to, std::size_t limit) {
  json out = json::array();
  diff_into("", from, to, out, limit);
  return out;
}

live_config::live_config(const server_config& c, config_scope scope)
    : scope_(std::move(scope)),
      store_(open_configured_store(c)),
      applied_document_(scope_.file_document) {
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
  const json& file = scope_.file_document;
  for (int attempt = 0; attempt < 5; ++attempt) {
    const auto latest = store_->latest_config(scope_.name);
    if (latest) {
      // The newest version the file gave: is the file still the same?
      for (const auto& v : store_->config_history(scope_.name, max_config_versions_listed))
        if (v.author == file_author) {
          if (json::parse(v.document) == file) return;
          break;
        }
    }
    config_version v;
    v.scope = scope_.name;
    v.version = latest ? latest->version + 1 : 1;
    v.document = file.dump();
    v.author = file_author;
    v.created_unix_ms = unix_now_ms();
    v.comment = latest ? "the config file's " + scope_.file_keys + " changed" : "the config file";
    if (store_->append_config(v)) return;  // else another node came first: look again
  }
}

json live_config::adopt_latest() {
  const auto latest = store_->latest_config(scope_.name);
  if (!latest || latest->version <= applied_version()) return json::object();
  json document;
  try {
    document = scope_.read(json::parse(latest->document));
  } catch (const std::exception& e) {
    log(log_level::error, scope_.component,
        scope_.name + " configuration version " + std::to_string(latest->version) +
            " cannot run on this node (its other settings differ?): " + e.what());
    std::lock_guard lock(state_mutex_);
    applied_ = latest->version;  // not tried again
    return json::object();
  }
  json done = json::object();
  try {
    done = scope_.apply(latest->version, applied_document(), document);
  } catch (const std::exception& e) {
    log(log_level::error, scope_.component,
        scope_.name + " configuration version " + std::to_string(latest->version) +
            " was refused here: " + e.what());
  }
  {
    std::lock_guard lock(state_mutex_);
    applied_ = latest->version;
    applied_document_ = std::move(document);
  }
  say(scope_.component, scope_.name + " configuration version " + std::to_string(latest->version) +
                            " (by " + latest->author + ") in force: " + done.dump());
  return done;
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
          log(log_level::warning, scope_.component,
              "cannot read the " + scope_.name + " configuration's versions: " + e.what());
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

json live_config::applied_document() const {
  std::lock_guard lock(state_mutex_);
  return applied_document_;
}

json live_config::current() {
  std::lock_guard lock(store_mutex_);
  const auto latest = store_->latest_config(scope_.name);
  json out = {{"scope", scope_.name}, {"applied_version", applied_version()}};
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
  const auto versions = store_->config_history(scope_.name, limit + 1);
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
  return {{"scope", scope_.name}, {"versions", list}};
}

json live_config::check(const json& document) {
  const json next = scope_.read(document);
  const json now = applied_document();
  json out = {{"valid", true}, {"diff", config_diff(now, next)}};
  std::lock_guard lock(store_mutex_);
  out.update(scope_.assess(now, next, *store_));
  return out;
}

json live_config::apply(const json& document, const std::string& author, const std::string& comment,
                        bool force, std::optional<std::int64_t> base_version) {
  const json next = scope_.read(document);
  std::lock_guard lock(store_mutex_);
  adopt_latest();  // compared with what is in force
  const auto latest = store_->latest_config(scope_.name);
  const std::int64_t latest_version = latest ? latest->version : 0;
  if (base_version && *base_version != latest_version)
    throw mm::error(errc::conflict, "base_version: version " + std::to_string(latest_version) +
                                        " is in force, not " + std::to_string(*base_version));
  const json now = applied_document();
  json out = {{"diff", config_diff(now, next)}};
  out.update(scope_.assess(now, next, *store_));
  if (out.contains("stranded") && out["stranded"]["tickets"].get<std::uint64_t>() > 0 && !force)
    throw stranding_refused{out["stranded"]};
  if (out["diff"].empty()) {
    out["version"] = latest_version;
    out["unchanged"] = true;
    return out;
  }
  config_version v;
  v.scope = scope_.name;
  v.version = latest_version + 1;
  v.document = next.dump();
  v.author = author;
  v.created_unix_ms = unix_now_ms();
  v.comment = comment;
  if (!store_->append_config(v))
    throw mm::error(errc::conflict, "version " + std::to_string(v.version) +
                                        " was added by another change first: read it and try "
                                        "again");
  out.update(adopt_latest());
  out["version"] = v.version;
  out["unchanged"] = false;
  return out;
}

json live_config::rollback(std::int64_t version, const std::string& author,
                           const std::string& comment, bool force) {
  std::optional<json> document;
  {
    std::lock_guard lock(store_mutex_);
    for (const auto& v : store_->config_history(scope_.name, max_config_versions_listed))
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
