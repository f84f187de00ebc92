// Readers of the list-valued keys (tokens, profile attributes, cluster
// ranges), for the key table.
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "config_keys.hpp"
#include "json_codec.hpp"

namespace mm::server {

std::vector<generic_attribute> as_attributes(const std::string& key, const json& v) {
  if (!v.is_array()) bad(key, "expected a list of attributes");
  if (v.size() > generic_attribute_count)
    bad(key, "at most " + std::to_string(generic_attribute_count) + " attributes");
  std::vector<generic_attribute> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const json& a = v[i];
    const std::string at = key + "[" + std::to_string(i) + "]";
    if (!a.is_object()) bad(at, "expected an object");
    generic_attribute g;
    for (const auto& [k, x] : a.items()) {
      const std::string field = at + "." + k;
      if (k == "name")
        g.name = as_text(field, x);
      else if (k == "rule") {
        const auto r = x.is_string() ? parse_attribute_rule(x.get<std::string>()) : std::nullopt;
        if (!r)
          bad(field, "expected none, hard_equal, must_differ, prefer_equal or prefer_different");
        g.rule = *r;
      } else if (k == "weight")
        g.weight = static_cast<float>(as_number(field, x));
      else if (k == "bucketing") {
        const auto b =
            x.is_string() ? parse_attribute_bucketing(x.get<std::string>()) : std::nullopt;
        if (!b) bad(field, "expected none, distinct_hard, distinct_soft or ranged");
        g.bucketing = *b;
      } else if (k == "tier_width")
        g.tier_width = as_int(field, x, 1, 1'000'000'000);
      else
        bad(field, "unknown field (name, rule, weight, bucketing, tier_width)");
    }
    out.push_back(std::move(g));
  }
  return out;
}

role as_role(const std::string& key, const json& v, bool none_allowed) {
  const std::string r = as_text(key, v);
  for (const role x : {role::none, role::view, role::test, role::admin})
    if (r == to_string(x) && (x != role::none || none_allowed)) return x;
  bad(key, none_allowed ? "expected none, view, test or admin" : "expected view, test or admin");
}

namespace {

// An identity's name at `at`.name.
std::string as_identity_name(const std::string& at, const json& x) {
  std::string name = as_text(at + ".name", x);
  if (auto why = actors::bad_identity_name(name)) bad(at + ".name", *why);
  return name;
}

}  // namespace

std::vector<access_token> as_tokens(const std::string& key, const json& v) {
  if (!v.is_array()) bad(key, "expected a list of {\"token\": ..., \"name\": ..., \"role\": ...}");
  std::vector<access_token> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string at = key + "[" + std::to_string(i) + "]";
    const json& t = v[i];
    if (!t.is_object()) bad(at, "expected an object");
    access_token a;
    a.name = at;  // by position, unless named
    bool has_role = false;
    for (const auto& [k, x] : t.items()) {
      if (k == "token") {
        // A secret: never echoed, whatever its type.
        if (!x.is_string()) bad(at + ".token", "expected a string (the value is not shown)");
        a.token = x.get<std::string>();
      } else if (k == "name") {
        a.name = as_identity_name(at, x);
      } else if (k == "role") {
        a.granted = as_role(at + ".role", x);
        has_role = true;
      } else
        bad(at + "." + k, "unknown field (token, name, role)");
    }
    if (a.token.size() < 16) bad(at + ".token", "must be at least 16 characters");
    if (!has_role) bad(at, "has no role");
    for (const auto& o : out) {
      if (o.token == a.token) bad(at, "the same token is listed twice");
      // Two secrets of one identity (a rotation under way), never two roles.
      if (o.name == a.name && o.granted != a.granted)
        bad(at + ".name", "'" + a.name +
                              "' names another token with another role (one name, "
                              "one role)");
    }
    out.push_back(std::move(a));
  }
  return out;
}

json hidden_tokens(const std::vector<access_token>& tokens) {
  json out = json::array();
  for (const auto& t : tokens)
    out.push_back({{"token", "(hidden)"}, {"name", t.name}, {"role", to_string(t.granted)}});
  return out;
}

std::vector<actors::named_peer> as_peers(const std::string& key, const json& v) {
  if (!v.is_array())
    bad(key, "expected a list of {\"common_name\": ..., \"name\": ..., \"role\": ...}");
  std::vector<actors::named_peer> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string at = key + "[" + std::to_string(i) + "]";
    const json& p = v[i];
    if (!p.is_object()) bad(at, "expected an object");
    actors::named_peer a;
    bool has_role = false;
    for (const auto& [k, x] : p.items()) {
      if (k == "common_name")
        a.common_name = as_text(at + ".common_name", x);
      else if (k == "name")
        a.name = as_identity_name(at, x);
      else if (k == "role") {
        a.granted = as_role(at + ".role", x);
        has_role = true;
      } else
        bad(at + "." + k, "unknown field (common_name, name, role)");
    }
    if (a.common_name.empty()) bad(at + ".common_name", "must name the certificate's CN");
    if (a.name.empty()) bad(at, "has no name");
    if (!has_role) bad(at, "has no role");
    for (const auto& o : out)
      if (o.common_name == a.common_name) bad(at, "the same common_name is listed twice");
    out.push_back(std::move(a));
  }
  return out;
}

json peers_json(const std::vector<actors::named_peer>& peers) {
  json out = json::array();
  for (const auto& p : peers)
    out.push_back(
        {{"common_name", p.common_name}, {"name", p.name}, {"role", to_string(p.granted)}});
  return out;
}

// "0,2-3" -> {0, 2, 3}, in the order given.
std::vector<std::uint32_t> parse_index_list(const std::string& key, const std::string& text) {
  std::vector<std::uint32_t> out;
  auto number = [&](const std::string& part) -> std::uint32_t {
    if (part.empty() || part.size() > 3 ||
        part.find_first_not_of("0123456789") != std::string::npos)
      throw config_error("config key '" + key + "': '" + part +
                         "' is not an instance index (0 to 255)");
    return static_cast<std::uint32_t>(std::stoul(part));
  };
  std::size_t from = 0;
  while (from <= text.size() && !text.empty()) {
    auto comma = text.find(',', from);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(from, comma - from);
    const auto dash = item.find('-');
    if (dash == std::string::npos) {
      out.push_back(number(item));
    } else {
      const auto lo = number(item.substr(0, dash)), hi = number(item.substr(dash + 1));
      if (lo > hi) throw config_error("config key '" + key + "': range '" + item + "' is empty");
      for (auto i = lo; i <= hi; ++i) out.push_back(i);
    }
    from = comma + 1;
  }
  return out;
}

std::string index_list_text(const std::vector<std::uint32_t>& list) {
  std::string out;
  for (auto i : list) out += (out.empty() ? "" : ",") + std::to_string(i);
  return out;
}

}  // namespace mm::server
