#include "session_config.hpp"

#include <set>

#include "config_values.hpp"
#include "json_codec.hpp"
#include "mm/session/lobbies.hpp"

namespace mm::server {

using namespace std::chrono_literals;

std::vector<session::datacenter> demo_datacenters() {
  struct place {
    const char* name;
    double lat, lon;
    const char* region;
  };
  static const place places[] = {
      {"frankfurt", 50.1, 8.7, "eu"},       {"london", 51.5, -0.1, "eu"},
      {"paris", 48.9, 2.4, "eu"},           {"amsterdam", 52.4, 4.9, "eu"},
      {"stockholm", 59.3, 18.1, "eu"},      {"madrid", 40.4, -3.7, "eu"},
      {"milan", 45.5, 9.2, "eu"},           {"warsaw", 52.2, 21.0, "eu"},
      {"new_york", 40.7, -74.0, "na"},      {"virginia", 39.0, -77.5, "na"},
      {"chicago", 41.9, -87.6, "na"},       {"dallas", 32.8, -96.8, "na"},
      {"san_jose", 37.4, -122.1, "na"},     {"seattle", 47.6, -122.3, "na"},
      {"los_angeles", 34.1, -118.2, "na"},  {"toronto", 43.7, -79.4, "na"},
      {"mexico_city", 19.4, -99.1, "na"},   {"sao_paulo", -23.5, -46.6, "sa"},
      {"buenos_aires", -34.6, -58.4, "sa"}, {"santiago", -33.4, -70.7, "sa"},
      {"tokyo", 35.7, 139.7, "asia"},       {"seoul", 37.6, 127.0, "asia"},
      {"shanghai", 31.2, 121.5, "asia"},    {"hong_kong", 22.3, 114.2, "asia"},
      {"singapore", 1.35, 103.8, "asia"},   {"mumbai", 19.1, 72.9, "asia"},
      {"dubai", 25.2, 55.3, "me"},          {"johannesburg", -26.2, 28.0, "africa"},
      {"sydney", -33.9, 151.2, "oceania"},  {"auckland", -36.8, 174.8, "oceania"}};
  std::vector<session::datacenter> out;
  for (const auto& p : places) out.push_back({p.name, {p.lat, p.lon}, p.region});
  return out;
}

session::queue_config demo_queue() {
  session::queue_config c;
  c.name = "coop";
  c.min_players = c.max_players = 4;
  c.teams = 0;
  c.team_size = 0;
  c.max_party_size = 4;
  c.latency = session::latency_stages{};
  session::rule skill;
  skill.name = "skill";
  skill.max_difference = 200;
  skill.expand = {100, 10s, 800};
  c.rules = {skill};
  return c;
}

namespace {

std::string at_index(const std::string& key, std::size_t i) {
  return key + "[" + std::to_string(i) + "]";
}

const json& object_at(const std::string& key, const json& v) {
  if (!v.is_object()) bad(key, "expected an object, got " + describe(v));
  return v;
}

session::rule_kind as_rule_kind(const std::string& key, const json& v) {
  const auto k = session::rule_kind_named(as_text(key, v));
  if (!k) bad(key, "expected difference, equality, intersection, latency or team_balance");
  return *k;
}

session::rule read_rule(const std::string& at, const json& v) {
  session::rule r;
  bool named = false;
  for (const auto& [k, x] : object_at(at, v).items()) {
    const std::string f = at + "." + k;
    if (k == "name") {
      r.name = as_text(f, x);
      named = true;
    } else if (k == "kind") {
      r.kind = as_rule_kind(f, x);
    } else if (k == "attribute") {
      r.attribute = as_text(f, x);
    } else if (k == "weight") {
      r.weight = as_number(f, x);
    } else if (k == "max_difference") {
      r.max_difference = as_number(f, x);
    } else if (k == "reference") {
      const std::string ref = as_text(f, x);
      if (ref == "seed")
        r.reference = session::reference_value::seed;
      else if (ref == "group_mean")
        r.reference = session::reference_value::group_mean;
      else
        bad(f, "expected seed or group_mean");
    } else if (k == "expand") {
      for (const auto& [ek, ex] : object_at(f, x).items()) {
        const std::string ef = f + "." + ek;
        if (ek == "step")
          r.expand.step = as_number(ef, ex);
        else if (ek == "every")
          r.expand.every = as_duration(ef, ex);
        else if (ek == "limit")
          r.expand.limit = as_number(ef, ex);
        else
          bad(ef, "unknown field (step, every, limit)");
      }
    } else if (k == "min_overlap") {
      r.min_overlap = as_uint<std::size_t>(f, x);
    } else if (k == "optional_after") {
      r.optional_after = as_duration(f, x);
    } else {
      bad(f,
          "unknown field (name, kind, attribute, weight, max_difference, reference, expand, "
          "min_overlap, optional_after)");
    }
  }
  if (!named) r.name = session::to_string(r.kind);
  return r;
}

session::latency_stages read_latency(const std::string& at, const json& v) {
  session::latency_stages p;
  for (const auto& [k, x] : object_at(at, v).items()) {
    const std::string f = at + "." + k;
    if (k == "ideal_ms")
      p.ideal_ms = as_number(f, x);
    else if (k == "expand_ms")
      p.expand_ms = as_number(f, x);
    else if (k == "expand_after")
      p.expand_after = as_duration(f, x);
    else if (k == "warm_body_after")
      p.warm_body_after = as_duration(f, x);
    else if (k == "fail_after")
      p.fail_after = as_duration(f, x);
    else
      bad(f, "unknown field (ideal_ms, expand_ms, expand_after, warm_body_after, fail_after)");
  }
  return p;
}

session::queue_config read_queue(const std::string& at, const json& v) {
  session::queue_config q;
  bool named = false;
  for (const auto& [k, x] : object_at(at, v).items()) {
    const std::string f = at + "." + k;
    if (k == "name") {
      q.name = as_text(f, x);
      named = true;
    } else if (k == "min_players") {
      q.min_players = as_uint<std::uint32_t>(f, x);
    } else if (k == "max_players") {
      q.max_players = as_uint<std::uint32_t>(f, x);
    } else if (k == "teams") {
      q.teams = as_uint<std::uint32_t>(f, x);
    } else if (k == "team_size") {
      q.team_size = as_uint<std::uint32_t>(f, x);
    } else if (k == "max_party_size") {
      q.max_party_size = as_uint<std::uint32_t>(f, x);
    } else if (k == "split_parties") {
      q.split_parties = as_bool(f, x);
    } else if (k == "bots") {
      q.bots = as_bool(f, x);
    } else if (k == "tick") {
      q.tick = as_duration(f, x);
    } else if (k == "give_up_after") {
      q.give_up_after = as_duration(f, x);
    } else if (k == "candidates") {
      q.candidates = as_uint<std::uint32_t>(f, x);
    } else if (k == "backtrack_steps") {
      q.backtrack_steps = as_uint<std::uint32_t>(f, x);
    } else if (k == "shard_by") {
      q.shard_by = as_text(f, x);
    } else if (k == "reservation_timeout") {
      q.reservation_timeout = as_duration(f, x);
    } else if (k == "max_backfills") {
      q.max_backfills = as_uint<std::uint32_t>(f, x);
    } else if (k == "latency") {
      if (!x.is_null()) q.latency = read_latency(f, x);
    } else if (k == "rules") {
      if (!x.is_array()) bad(f, "expected a list of rules, got " + describe(x));
      if (x.size() > 32) bad(f, "at most 32 rules");
      for (std::size_t i = 0; i < x.size(); ++i) q.rules.push_back(read_rule(at_index(f, i), x[i]));
    } else {
      bad(f,
          "unknown field (name, min_players, max_players, teams, team_size, max_party_size, "
          "split_parties, bots, tick, give_up_after, candidates, backtrack_steps, shard_by, "
          "reservation_timeout, max_backfills, latency, rules)");
    }
  }
  if (!named) bad(at + ".name", "every queue needs a name");
  return q;
}

json expansion_json(const session::expansion& e) {
  return {{"step", e.step}, {"every", seconds_text(e.every)}, {"limit", e.limit}};
}

}  // namespace

void read_datacenters(const std::string& key, const json& v, session_settings& into) {
  if (!v.is_array()) bad(key, "expected a list of datacenters, got " + describe(v));
  if (v.size() > 512) bad(key, "at most 512 datacenters");
  std::vector<session::datacenter> out;
  std::vector<std::optional<configured_latency_map>> maps(v.size());
  bool any_map = false;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string at = at_index(key, i);
    session::datacenter d;
    bool has_lat = false, has_lon = false;
    for (const auto& [k, x] : object_at(at, v[i]).items()) {
      const std::string f = at + "." + k;
      if (k == "name") {
        d.name = as_text(f, x);
      } else if (k == "latitude") {
        d.location.latitude = as_number(f, x);
        if (std::abs(d.location.latitude) > 90) bad(f, "must be within -90 and 90");
        has_lat = true;
      } else if (k == "longitude") {
        d.location.longitude = as_number(f, x);
        if (std::abs(d.location.longitude) > 180) bad(f, "must be within -180 and 180");
        has_lon = true;
      } else if (k == "region") {
        d.region = as_text(f, x);
      } else if (k == "latency_map") {
        const std::string file = as_text(f, x);
        try {
          maps[i] = configured_latency_map{file, session::latency_map::read_file(file)};
        } catch (const mm::error& e) {
          bad(f, e.what());
        }
        any_map = true;
      } else {
        bad(f, "unknown field (name, latitude, longitude, region, latency_map)");
      }
    }
    if (d.name.empty()) bad(at + ".name", "every datacenter needs a name");
    if (!has_lat || !has_lon) bad(at, "needs latitude and longitude");
    if (d.region.empty()) d.region = d.name;
    out.push_back(std::move(d));
  }
  into.datacenters = std::move(out);
  into.latency_maps.clear();
  if (any_map) into.latency_maps = std::move(maps);
}

json datacenters_json(const session_settings& s) {
  json out = json::array();
  for (std::size_t i = 0; i < s.datacenters.size(); ++i) {
    const auto& d = s.datacenters[i];
    json j = {{"name", d.name},
              {"latitude", d.location.latitude},
              {"longitude", d.location.longitude},
              {"region", d.region}};
    if (i < s.latency_maps.size() && s.latency_maps[i]) j["latency_map"] = s.latency_maps[i]->file;
    out.push_back(std::move(j));
  }
  return out;
}

session::latency_model latency_model_of(const session_settings& s) {
  std::vector<std::optional<session::latency_map>> maps;
  for (const auto& m : s.latency_maps)
    maps.push_back(m ? std::optional<session::latency_map>(m->map) : std::nullopt);
  return session::latency_model(s.datacenters, s.detour_factor, std::move(maps));
}

std::vector<session::queue_config> read_queues(const std::string& key, const json& v) {
  if (!v.is_array()) bad(key, "expected a list of queues, got " + describe(v));
  if (v.size() > 256) bad(key, "at most 256 queues");
  std::vector<session::queue_config> out;
  for (std::size_t i = 0; i < v.size(); ++i) out.push_back(read_queue(at_index(key, i), v[i]));
  return out;
}

json queues_json(const std::vector<session::queue_config>& queues) {
  json out = json::array();
  for (const auto& q : queues) {
    json rules = json::array();
    for (const auto& r : q.rules) {
      json j = {
          {"name", r.name},
          {"kind", session::to_string(r.kind)},
          {"attribute", r.attribute},
          {"weight", r.weight},
          {"max_difference", r.max_difference},
          {"reference", r.reference == session::reference_value::seed ? "seed" : "group_mean"},
          {"expand", expansion_json(r.expand)},
          {"min_overlap", r.min_overlap}};
      if (r.optional_after) j["optional_after"] = seconds_text(*r.optional_after);
      rules.push_back(std::move(j));
    }
    json j = {{"name", q.name},
              {"min_players", q.min_players},
              {"max_players", q.max_players},
              {"teams", q.teams},
              {"team_size", q.team_size},
              {"max_party_size", q.max_party_size},
              {"split_parties", q.split_parties},
              {"bots", q.bots},
              {"tick", seconds_text(q.tick)},
              {"give_up_after", seconds_text(q.give_up_after)},
              {"candidates", q.candidates},
              {"backtrack_steps", q.backtrack_steps},
              {"shard_by", q.shard_by},
              {"reservation_timeout", seconds_text(q.reservation_timeout)},
              {"max_backfills", q.max_backfills},
              {"rules", std::move(rules)}};
    if (q.latency)
      j["latency"] = {{"ideal_ms", q.latency->ideal_ms},
                      {"expand_ms", q.latency->expand_ms},
                      {"expand_after", seconds_text(q.latency->expand_after)},
                      {"warm_body_after", seconds_text(q.latency->warm_body_after)},
                      {"fail_after", seconds_text(q.latency->fail_after)}};
    out.push_back(std::move(j));
  }
  return out;
}

void check(const session_settings& s) {
  std::vector<std::string> problems;
  if (s.max_lobby_players < session::lobby_config{}.default_max_players)
    problems.push_back("sessions.max_lobby_players: at least " +
                       std::to_string(session::lobby_config{}.default_max_players) +
                       " (the seats of a lobby a find creates)");
  std::set<std::string> dc_names, queue_names;
  for (std::size_t i = 0; i < s.datacenters.size(); ++i)
    if (!dc_names.insert(s.datacenters[i].name).second)
      problems.push_back("sessions.datacenters[" + std::to_string(i) + "].name: '" +
                         s.datacenters[i].name + "' twice");
  if (!(s.detour_factor >= 1 && s.detour_factor <= 10))
    problems.push_back("sessions.detour_factor: must be between 1 and 10");
  for (std::size_t i = 0; i < s.queues.size(); ++i) {
    const auto& q = s.queues[i];
    const std::string at = "sessions.queues[" + std::to_string(i) + "].";
    if (!session::valid_queue_name(q.name))
      problems.push_back(at + "name: 1 to 64 of a-z, 0-9, _ and -");
    if (!queue_names.insert(q.name).second) problems.push_back(at + "name: '" + q.name + "' twice");
    for (auto& p : session::check(q, at)) problems.push_back(std::move(p));
    if (q.latency && s.datacenters.empty())
      problems.push_back(at + "latency: the staged latency policy needs sessions.datacenters");
  }
  if (!s.queue_template.empty() && !queue_names.count(s.queue_template))
    problems.push_back("sessions.queue_template: no queue '" + s.queue_template + "'");
  if (s.partitions > 64) problems.push_back("sessions.partitions: 1 to 64");
  if (s.max_queues < s.queues.size())
    problems.push_back("sessions.max_queues: less than the " + std::to_string(s.queues.size()) +
                       " queues configured");
  if (problems.empty()) return;
  std::string all;
  for (const auto& p : problems) all += (all.empty() ? "" : "\n") + p;
  throw config_error(all);
}

}  // namespace mm::server
