// The plumbing every mmctl command shares: its errors (usage or server),
// the HTTP client of matchmakerd's API, and the parsing of --flag value
// arguments. mmctl.cpp holds the async commands, mmctl_sessions.cpp the
// session ones.
#pragma once

#include <httplib.h>

#include <cctype>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "client/event_client.hpp"

namespace mmctl {

using json = nlohmann::json;

struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct server_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class api {
 public:
  api(const std::string& url, std::string token) : client_(url), token_(std::move(token)) {
    client_.set_connection_timeout(std::chrono::seconds(5));
    client_.set_read_timeout(std::chrono::seconds(60));
    client_.set_keep_alive(true);
    client_.set_tcp_nodelay(true);
  }

  json get(const std::string& path) { return check(client_.Get(path, headers()), "GET " + path); }
  json post(const std::string& path, const json& body) {
    return check(client_.Post(path, headers(), body.dump(), "application/json"), "POST " + path);
  }
  json put(const std::string& path, const json& body) {
    return check(client_.Put(path, headers(), body.dump(), "application/json"), "PUT " + path);
  }
  json del(const std::string& path) {
    return check(client_.Delete(path, headers()), "DELETE " + path);
  }

 private:
  httplib::Headers headers() const {
    httplib::Headers h;
    if (!token_.empty()) h.emplace("Authorization", "Bearer " + token_);
    return h;
  }
  static json check(const httplib::Result& r, const std::string& what) {
    if (!r)
      throw server_error(what + ": " + httplib::to_string(r.error()) +
                         " (is matchmakerd running?)");
    json body = json::parse(r->body, nullptr, false);
    if (r->status >= 400) {
      const std::string msg =
          body.is_object() && body.contains("error") ? body["error"].get<std::string>() : r->body;
      throw server_error(what + ": HTTP " + std::to_string(r->status) + ": " + msg);
    }
    if (body.is_discarded()) throw server_error(what + ": the answer is not JSON");
    return body;
  }
  httplib::Client client_;
  std::string token_;
};

inline std::uint64_t number_arg(const std::string& flag, const std::string& v) {
  if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos)
    throw usage_error(flag + " expects a non-negative integer, got '" + v + "'");
  return std::stoull(v);
}

// Flags after the command: --name value (repeatable ones collect).
struct flags {
  std::vector<std::string> positional;
  std::vector<std::pair<std::string, std::string>> named;
  std::string one(const std::string& name, const std::string& fallback = "") const {
    for (const auto& [k, v] : named)
      if (k == name) return v;
    return fallback;
  }
  bool has(const std::string& name) const {
    for (const auto& [k, v] : named)
      if (k == name) return true;
    return false;
  }
};

inline flags parse_flags(const std::vector<std::string>& args, std::size_t from) {
  flags f;
  for (std::size_t i = from; i < args.size(); ++i) {
    if (args[i] == "--force") {  // the one flag without a value
      f.named.emplace_back("force", "true");
    } else if (args[i].rfind("--", 0) == 0) {
      if (i + 1 >= args.size()) throw usage_error(args[i] + " needs a value");
      f.named.emplace_back(args[i].substr(2), args[i + 1]);
      ++i;
    } else {
      f.positional.push_back(args[i]);
    }
  }
  return f;
}

inline void print(const json& j) {
  std::cout << j.dump(2) << '\n';
}

inline double number_of(const std::string& flag, const std::string& v) {
  try {
    std::size_t used = 0;
    const double x = std::stod(v, &used);
    if (used == v.size()) return x;
  } catch (const std::exception&) {
  }
  throw usage_error(flag + " expects a number, got '" + v + "'");
}

// A path segment as the URL needs it: every byte but [A-Za-z0-9-._~]
// percent-encoded (a match id may hold spaces or '?').
inline std::string path_segment(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (const unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

// The session commands (mmctl_sessions.cpp): their usage lines, and the
// command itself, for `ticket`, `queues`, `lobby` and `backfill`.
extern const char* const session_usage;
// mmctl_config.cpp: the configuration's versions.
extern const char* const config_usage;
bool is_config_command(const std::string& cmd);
int config_command(api& a, const flags& f);
bool is_session_command(const std::string& cmd);
int session_command(api& a, const std::string& cmd, const flags& f,
                    mm::client::event_connect events);

}  // namespace mmctl
