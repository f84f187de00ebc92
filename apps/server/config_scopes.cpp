#include "config_scopes.hpp"

#include <chrono>
#include <map>

#include "config_keys.hpp"
#include "config_values.hpp"
#include "mm/actors/session_journal.hpp"
#include "mm/actors/session_queue_actor.hpp"
#include "mm/engine/error.hpp"
#include "mm/session/session_queue.hpp"
#include "session_config.hpp"
#include "unix_time.hpp"

namespace mm::server {

namespace {

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

json count_stranded(const session_settings& base, const std::vector<session::queue_config>& now,
                    const std::vector<session::queue_config>& next, player_store& store,
                    const std::string& service_name) {
  // Only the waiting tickets' queues are counted: their ids are not needed.
  const auto journal = actors::load_session_journal(store, service_name, nullptr, unix_now_ms(),
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

config_scope sessions_config_scope(const server_config& c, std::string service_name,
                                   apply_queues_fn apply) {
  const session_settings& base = c.sessions;
  config_scope s;
  s.name = "sessions";
  s.component = "sessions";
  s.file_keys = "sessions.queues";
  s.file_document = sessions_document(base.queues);
  s.read = [&base](const json& d) { return sessions_document(read_sessions_document(base, d)); };
  s.assess = [&base, service_name](const json& now, const json& next, player_store& store) {
    return json{
        {"stranded", count_stranded(base, read_sessions_document(base, now),
                                    read_sessions_document(base, next), store, service_name)}};
  };
  s.apply = [&base, apply](std::int64_t version, const json&, const json& next) {
    return json{{"queues_changed", apply(version, read_sessions_document(base, next))}};
  };
  return s;
}

json profile_document(const generic_profile_config& p) {
  return {{"attributes", attributes_json(p.attributes)},
          {"mmr_window", p.mmr_window},
          {"mmr_window_per_retry", p.mmr_window_per_retry},
          {"mmr_window_max", p.mmr_window_max}};
}

generic_profile_config read_profile_document(const generic_profile_config& base,
                                             const json& document) {
  if (!document.is_object()) bad("profile", "the document is an object, as the config file's key");
  generic_profile_config p = base;
  for (const auto& [k, v] : document.items()) {
    const std::string key = "profile." + k.substr(0, 64);
    if (k == "attributes")
      p.attributes = as_attributes(key, v);
    else if (k == "mmr_window")
      p.mmr_window = static_cast<float>(as_number(key, v));
    else if (k == "mmr_window_per_retry")
      p.mmr_window_per_retry = static_cast<float>(as_number(key, v));
    else if (k == "mmr_window_max")
      p.mmr_window_max = static_cast<float>(as_number(key, v));
    else
      bad(key, "cannot change while the server runs");
  }
  bool same_names = p.attributes.size() == base.attributes.size();
  for (std::size_t i = 0; same_names && i < p.attributes.size(); ++i)
    same_names = p.attributes[i].name == base.attributes[i].name;
  if (!same_names)
    bad("profile.attributes",
        "the attributes' names and order cannot change while the server runs (the player "
        "table's columns and the API's names follow them): restart with the new file");
  generic_profile checked(p);  // throws config_error naming the attribute
  return p;
}

std::vector<std::string> rebuild_keys(const generic_profile_config& a,
                                      const generic_profile_config& b) {
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < a.attributes.size() && i < b.attributes.size(); ++i) {
    const auto& x = a.attributes[i];
    const auto& y = b.attributes[i];
    if (x.bucketing != y.bucketing) keys.push_back("attributes." + x.name + ".bucketing");
    if (x.tier_width != y.tier_width) keys.push_back("attributes." + x.name + ".tier_width");
  }
  return keys;
}

config_scope profile_config_scope(const server_config& c, apply_profile_fn apply) {
  const generic_profile_config& base = c.profile;
  config_scope s;
  s.name = "profile";
  s.component = "matchmaker";
  s.file_keys = "profile";
  s.file_document = profile_document(base);
  s.read = [&base](const json& d) { return profile_document(read_profile_document(base, d)); };
  s.assess = [&base](const json& now, const json& next, player_store&) {
    const auto keys =
        rebuild_keys(read_profile_document(base, now), read_profile_document(base, next));
    return json{{"rebuild", !keys.empty()}, {"rebuild_keys", keys}};
  };
  s.apply = [&base, apply](std::int64_t, const json& before, const json& next) {
    const auto p = read_profile_document(base, next);
    const bool rebuild = !rebuild_keys(read_profile_document(base, before), p).empty();
    return json{{"matchmakers_changed", apply(p, rebuild)}, {"rebuild", rebuild}};
  };
  return s;
}

}  // namespace mm::server
