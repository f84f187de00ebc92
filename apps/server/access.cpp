#include "access.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <unordered_map>

#include "mm/actors/identity.hpp"
#include "mm/engine/stable_hash.hpp"
#include "mm/session/public_id.hpp"

namespace mm::server {

namespace {
// The name in a "host[:port]" or "[v6]:port" authority, lower-cased.
std::string name_of(std::string_view authority) {
  std::string_view name = authority;
  if (!name.empty() && name.front() == '[') {
    name = name.substr(0, name.find(']') + 1);
  } else if (const auto colon = name.rfind(':'); colon != std::string_view::npos) {
    name = name.substr(0, colon);
  }
  std::string out(name);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

std::string clipped(const std::string& s) {
  return s.size() <= 64 ? s : s.substr(0, 64) + "...";
}

namespace {

// The bearer token's identity (compared in constant time per token).
std::optional<actors::caller_identity> token_identity(const access_rules& rules,
                                                      const http_request& req) {
  const std::string h = req.header("Authorization");
  const std::string prefix = "Bearer ";
  if (h.rfind(prefix, 0) != 0) return std::nullopt;
  return rules.identities.by_token(std::string_view(h).substr(prefix.size()));
}

}  // namespace

role caller_role(const access_rules& rules, const http_request& req) {
  if (rules.config.tokens.empty()) return role::admin;
  const auto who = token_identity(rules, req);
  return who ? who->granted : role::none;
}

std::string caller_credential(const access_rules& rules, const http_request& req) {
  if (rules.config.tokens.empty()) return actors::open_identity;
  auto who = token_identity(rules, req);
  return who ? std::move(who->name) : std::string(actors::anonymous_identity);
}

void adopt_token_names(const server_config& config, actors::session_journal_contents& restored) {
  std::unordered_map<std::string, std::string> names;  // earlier owner -> name
  for (const auto& t : config.tokens)
    names["token:" + session::format_public_id(mix64(fnv1a64(t.token)))] = t.name;
  const auto adopt = [&](std::string& credential) {
    if (const auto it = names.find(credential); it != names.end()) credential = it->second;
  };
  for (auto& t : restored.waiting) adopt(t.ticket.credential);
  for (auto& o : restored.retained) adopt(o.credential);
  for (auto& o : restored.events) adopt(o.credential);
  for (auto& b : restored.backfills) adopt(b.registration.credential);
}

// A browser must not be turned against this API by another site. A page on
// another site can make a browser send requests here (CSRF); a name of the
// attacker's that resolves to this machine makes the browser treat our answers
// as theirs (DNS rebinding). So:
//  - Host must be a name of this server (http.host, a loopback name, or
//    http.allowed_hosts) when no token protects the API, or when
//    http.allowed_hosts is set;
//  - an Origin, when a browser sends one, must be this very server (the same
//    host and port as Host) or one of http.allowed_hosts;
//  - a browser's Sec-Fetch-Site: cross-site is refused.
// Clients that are not browsers (games, mmctl, curl) send no Origin.
std::optional<std::string> foreign_request(const server_config& config, const http_request& req) {
  const auto& allowed = config.http_allowed_hosts;
  const auto listed = [&](const std::string& name) {
    return std::find(allowed.begin(), allowed.end(), name) != allowed.end();
  };
  const std::string host = req.header("Host");
  if (config.tokens.empty() || !allowed.empty()) {
    const std::string name = name_of(host);
    const std::string bare =
        name.size() > 2 && name.front() == '[' ? name.substr(1, name.size() - 2) : name;
    if (!(is_loopback(bare) || name == config.http_host || listed(name)))
      return "Host '" + clipped(host) +
             "' is not a name of this server (http.host, loopback, or "
             "http.allowed_hosts)";
  }
  if (req.has_header("Origin")) {
    const std::string origin = req.header("Origin");
    std::string_view rest = origin;
    bool web = false;
    for (std::string_view scheme : {"http://", "https://"})
      if (rest.substr(0, scheme.size()) == scheme) {
        rest.remove_prefix(scheme.size());
        web = true;
      }
    if (!web || (rest != host && !listed(name_of(rest))))
      return "requests from the web page at '" + clipped(origin) + "' are refused (another site)";
  }
  if (req.header("Sec-Fetch-Site") == "cross-site")
    return "a browser's cross-site request is refused";
  return std::nullopt;
}

}  // namespace mm::server
