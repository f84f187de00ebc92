// The API's routing and its shared pieces: routes by method and path
// pattern, each with the role it needs, callers checked from a request's
// head; handlers' exceptions turned into JSON errors; query and path readers.
// Used by every group of routes (route_row) and by the RESP port.
#pragma once

#include <algorithm>
#include <cctype>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "access.hpp"
#include "api_contract.hpp"
#include "http_api.hpp"
#include "json_codec.hpp"

namespace mm::server {

class http_error : public std::runtime_error {
 public:
  http_error(int code, const std::string& what, int retry_after_s = 0)
      : std::runtime_error(what), status(code), retry_after(retry_after_s) {}
  int status;
  int retry_after;  // seconds, sent as Retry-After when > 0
};

// What nobody serves now (a takeover under way): 503 with Retry-After.
inline constexpr int takeover_retry_after_s = 1;

// A request for what another node of the cluster serves: answered 307 with
// `location`, the same path and query on that node (a client repeats the
// same method and body there), and a JSON body saying why.
class http_redirect : public std::runtime_error {
 public:
  http_redirect(std::string to, const std::string& why)
      : std::runtime_error(why), location(std::move(to)) {}
  std::string location;
};

// The request's path and query, encoded again, for a Location header.
inline std::string path_and_query(const http_request& req) {
  auto encode = [](const std::string& s, bool in_path) {
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    for (const unsigned char c : s) {
      if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (in_path && c == '/'))
        out += static_cast<char>(c);
      else {
        out += '%';
        out += hex[c >> 4];
        out += hex[c & 15];
      }
    }
    return out;
  };
  std::string out = encode(req.path, true);
  char sep = '?';
  for (const auto& [k, v] : req.params) {
    out += sep + encode(k, false) + "=" + encode(v, false);
    sep = '&';
  }
  return out;
}

inline void send_json(http_response& res, const json& j, int status = 200) {
  res.status = status;
  // Player payloads are opaque bytes: bytes that are not UTF-8 become U+FFFD
  // instead of failing the whole answer.
  res.set_content(j.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

inline bool all_digits(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return c >= '0' && c <= '9'; });
}

inline http_response error_response(int status, const std::string& message) {
  http_response res;
  send_json(res, {{"error", message}}, status);
  return res;
}

inline void send_error(http_response& res, int status, const std::string& message) {
  res = error_response(status, message);
}

using handler = std::function<void(const http_request&, http_response&)>;
// A route answered later, without holding a thread: it must not block.
using deferred_handler = std::function<void(const http_request&, const http_reply&)>;

// Whether the caller may use a route that needs `needed`: another site's
// browser, a missing or unknown token (401) and a weaker role (403) are
// answered here, from the head, before the body is read.
// The role check alone, for every door: a door with no browser behind it
// (the RESP port) has no other.
inline std::optional<http_response> role_refusal(http_context& ctx, const http_request& req,
                                                 role needed) {
  const role r = caller_role(ctx.access, req);
  if (r == role::none) {
    ++ctx.counters.unauthorized;
    http_response res =
        error_response(401, "a valid token is needed: send 'Authorization: Bearer <token>'");
    res.set_header("WWW-Authenticate", "Bearer");
    return res;
  }
  if (r < needed) {
    ++ctx.counters.unauthorized;
    return error_response(403, "this needs the '" + std::string(to_string(needed)) +
                                   "' role; the token has '" + std::string(to_string(r)) + "'");
  }
  return std::nullopt;
}

inline std::optional<http_response> refusal(http_context& ctx, const http_request& req,
                                            role needed) {
  if (auto why = foreign_request(ctx.config, req)) {
    ++ctx.counters.unauthorized;
    return error_response(403, *why);
  }
  return role_refusal(ctx, req, needed);
}

// Bodies are JSON. A POST or PUT whose Content-Type says otherwise (a
// browser form's, text/plain) is refused from its head, 415; one without a
// Content-Type is read as JSON.
inline std::optional<http_response> not_json(const http_request& req) {
  if ((req.method != "POST" && req.method != "PUT") || !req.has_header("Content-Type"))
    return std::nullopt;
  const std::string said = req.header("Content-Type");
  std::string type = said.substr(0, said.find(';'));
  while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) type.pop_back();
  std::transform(type.begin(), type.end(), type.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (type == "application/json") return std::nullopt;
  return error_response(
      415, "Content-Type: the body must be application/json, not '" + clipped(said) + "'");
}

// Runs a route's handler and turns its exceptions into JSON errors.
inline http_response guarded(const handler& h, const http_request& req) {
  http_response res;
  try {
    h(req, res);
  } catch (const bad_request& e) {
    send_error(res, 400, e.what());
  } catch (const http_error& e) {
    send_error(res, e.status, e.what());
    if (e.retry_after > 0) res.set_header("Retry-After", std::to_string(e.retry_after));
  } catch (const http_redirect& e) {
    send_error(res, 307, e.what());
    res.set_header("Location", e.location);
  } catch (const error& e) {
    // The project's errors by cause (mm/engine/error.hpp); the storage library
    // has already turned SQLite's exceptions into store_error.
    const bool callers_fault =
        e.code() == errc::invalid_argument || e.code() == errc::invalid_config;
    send_error(res, callers_fault ? 400 : 503, std::string(to_string(e.code())) + ": " + e.what());
  }
  return res;
}

// A route's path: segments between '/'; a segment is a word, "*" (any one
// non-empty segment, captured) or "a|b" (one of the words, captured). A path is
// matched in one pass over its segments: no backtracking and no recursion,
// whatever its length (std::regex recursed per character, so a long path
// overflowed the network thread's stack).
class path_pattern {
 public:
  explicit path_pattern(std::string_view pattern) {
    std::string_view rest = pattern.substr(1);  // after the leading '/'
    for (;;) {
      const auto slash = rest.find('/');
      segments_.emplace_back(rest.substr(0, slash));
      if (slash == std::string_view::npos) break;
      rest.remove_prefix(slash + 1);
    }
  }

  // The whole path then the captured segments, when `path` matches.
  std::optional<std::vector<std::string>> match(std::string_view path) const {
    if (path.empty() || path.front() != '/') return std::nullopt;
    std::vector<std::string> captured{std::string(path)};
    std::string_view rest = path.substr(1);
    for (std::size_t i = 0; i < segments_.size(); ++i) {
      const auto slash = rest.find('/');
      const std::string_view segment = rest.substr(0, slash);
      const std::string& want = segments_[i];
      if (want == "*") {
        if (segment.empty()) return std::nullopt;
        captured.emplace_back(segment);
      } else if (want.find('|') != std::string::npos) {
        if (!one_of(want, segment)) return std::nullopt;
        captured.emplace_back(segment);
      } else if (segment != want) {
        return std::nullopt;
      }
      const bool last = i + 1 == segments_.size();
      if ((slash == std::string_view::npos) != last) return std::nullopt;  // too short or too long
      if (!last) rest.remove_prefix(slash + 1);
    }
    return captured;
  }

 private:
  static bool one_of(std::string_view words, std::string_view w) {
    for (;;) {
      const auto bar = words.find('|');
      if (words.substr(0, bar) == w) return true;
      if (bar == std::string_view::npos) return false;
      words.remove_prefix(bar + 1);
    }
  }

  std::vector<std::string> segments_;
};

// Every route: method, path pattern, the role it needs (none for the
// dashboard's files) and its handler. The server calls `admit` with a request's
// head: the route is found and the caller checked there, so a body is only
// read for a caller who may send it; `handle` then runs the route.
struct api_route {
  std::string method;
  std::string pattern_text;  // as registered: "/api/tickets/*"
  path_pattern pattern;
  std::optional<role> needed;
  handler run;
  deferred_handler start;  // instead of `run`, when set
  // On a node of a cluster, the lease whose holder answers the route ("sessions");
  // empty: any node.
  std::string resource;
  // A health probe (readiness.hpp): no token, still refused to another
  // site's page; on the network thread or on a handler thread.
  enum class probe_kind { none, network_thread, handler_thread };
  probe_kind probe = probe_kind::none;
};

// One row of a route table (method, path, the role it needs, function): the
// form every group of routes takes (async_api.cpp, session_api.cpp,
// event_api.cpp, config_api.cpp, http_api.cpp). The function answers at once
// on a handler thread (`now`, it may block), or later through the reply,
// holding no thread (`later`, it must not block). Every door serves the rows:
// HTTP by path, the RESP port by command names (resp_commands.cpp).
struct route_row {
  const char* method;
  const char* path;
  role needed;
  void (*now)(http_context&, const http_request&, http_response&) = nullptr;
  void (*later)(http_context&, const http_request&, const http_reply&) = nullptr;
};

// Where a request for `resource` goes when this node does not serve it: a
// 307 to the node that does, or 503 while nobody does (http_api.cpp).
std::optional<http_response> served_elsewhere(const http_context& ctx, const http_request& req,
                                              const std::string& resource);

class api_routes {
 public:
  explicit api_routes(http_context& ctx) : ctx_(ctx) {}

  // Answered later through the reply (waiting on actors), holding no thread.
  void deferred(const char* method, const std::string& pattern, role needed, deferred_handler h) {
    routes_.push_back({method, pattern, path_pattern(pattern), needed, nullptr, std::move(h),
                       resource_, api_route::probe_kind::none});
  }
  // A table of routes (route_row), each served with this table's context.
  void add_rows(std::span<const route_row> rows) {
    http_context& ctx = ctx_;
    for (const route_row& r : rows) {
      if (r.later)
        deferred(r.method, r.path, r.needed,
                 [&ctx, f = r.later](const http_request& req, const http_reply& reply) {
                   f(ctx, req, reply);
                 });
      else
        add(r.method, r.path, r.needed,
            [&ctx, f = r.now](const http_request& req, http_response& res) { f(ctx, req, res); });
    }
  }
  // The routes added from now on are answered by the holder of `resource`'s
  // lease; "" for any node.
  void served_by(std::string resource) { resource_ = std::move(resource); }
  void file(const std::string& path, handler h) {
    routes_.push_back({"GET",
                       path,
                       path_pattern(path),
                       std::nullopt,
                       std::move(h),
                       nullptr,
                       {},
                       api_route::probe_kind::none});
  }
  // A health probe, answered without a token: on the network thread when
  // `here` (the handler must then not block), else on a handler thread.
  void probe(const std::string& path, bool here, handler h) {
    routes_.push_back(
        {"GET",
         path,
         path_pattern(path),
         std::nullopt,
         std::move(h),
         nullptr,
         {},
         here ? api_route::probe_kind::network_thread : api_route::probe_kind::handler_thread});
  }

  // Every route's method, pattern and role, for the contract check.
  std::vector<served_route> table() const {
    std::vector<served_route> out;
    for (const auto& r : routes_)
      out.push_back({r.method, r.pattern_text, r.needed, r.probe != api_route::probe_kind::none});
    return out;
  }

  std::optional<http_response> admit(http_request& req) const {
    std::string allowed;
    for (std::size_t i = 0; i < routes_.size(); ++i) {
      const api_route& r = routes_[i];
      auto captured = r.pattern.match(req.path);
      if (!captured) continue;
      if (r.method != req.method) {
        allowed += (allowed.empty() ? "" : ", ") + r.method;
        continue;
      }
      if (r.probe != api_route::probe_kind::none) {
        if (auto why = foreign_request(ctx_.config, req)) {
          ++ctx_.counters.unauthorized;
          return error_response(403, *why);
        }
        if (r.probe == api_route::probe_kind::network_thread) return guarded(r.run, req);
      } else if (!r.needed) {
        // The dashboard's files need no caller check and never block: served
        // here, on the network thread.
        return guarded(r.run, req);
      } else {
        if (auto no = refusal(ctx_, req, *r.needed)) return no;
        if (auto no = not_json(req)) return no;
      }
      if (!r.resource.empty())
        if (auto elsewhere = served_elsewhere(ctx_, req, r.resource)) return elsewhere;
      req.route = static_cast<int>(i);
      req.matches = std::move(*captured);
      return std::nullopt;
    }
    if (allowed.empty())
      return error_response(404, "no such endpoint: " + req.method + " " + clipped(req.path));
    http_response res = error_response(
        405, clipped(req.path) + " takes " + allowed + ", not " + clipped(req.method));
    res.set_header("Allow", allowed);
    return res;
  }

  // The route registered as `method pattern`, for another door's table of
  // names (resp_commands.cpp); std::logic_error when there is none.
  std::size_t find_route(std::string_view method, std::string_view pattern) const {
    for (std::size_t i = 0; i < routes_.size(); ++i)
      if (routes_[i].method == method && routes_[i].pattern_text == pattern) return i;
    throw std::logic_error("no route " + std::string(method) + " " + std::string(pattern));
  }
  const api_route& at(std::size_t i) const { return routes_.at(i); }
  // The route with a role (not a file or a probe) that serves `method path`.
  std::optional<std::size_t> route_for(std::string_view method, std::string_view path) const {
    for (std::size_t i = 0; i < routes_.size(); ++i)
      if (routes_[i].needed && routes_[i].method == method && routes_[i].pattern.match(path))
        return i;
    return std::nullopt;
  }

  // A request another door made for route `i` (the RESP port): its path
  // must be the route's, then the caller's role and the node that serves it
  // are checked as `admit` checks them; no browser is behind such a door, so
  // there is no same-site check. Nothing: `handle` or `start` may run it.
  std::optional<http_response> admit_at(std::size_t i, http_request& req) const {
    const api_route& r = routes_.at(i);
    auto captured = r.pattern.match(req.path);
    if (!captured) return error_response(400, "an argument is empty or holds '/'");
    if (r.needed)
      if (auto no = role_refusal(ctx_, req, *r.needed)) return no;
    if (!r.resource.empty())
      if (auto elsewhere = served_elsewhere(ctx_, req, r.resource)) return elsewhere;
    req.route = static_cast<int>(i);
    req.matches = std::move(*captured);
    return std::nullopt;
  }

  http_response handle(const http_request& req) const {
    return guarded(routes_.at(static_cast<std::size_t>(req.route)).run, req);
  }

  // A deferred route's start; its errors before it hands the request on are
  // answered at once, as `handle` answers them.
  bool start(const http_request& req, const http_reply& reply) const {
    const api_route& r = routes_.at(static_cast<std::size_t>(req.route));
    if (!r.start) return false;
    bool handed_on = false;
    http_response failed = guarded(
        [&](const http_request& q, http_response&) {
          r.start(q, reply);
          handed_on = true;
        },
        req);
    if (!handed_on) reply(std::move(failed));
    return true;
  }

 private:
  void add(const char* method, const std::string& pattern, role needed, handler h) {
    routes_.push_back(
        {method, pattern, path_pattern(pattern), needed, std::move(h), nullptr, resource_});
  }

  http_context& ctx_;
  std::vector<api_route> routes_;
  std::string resource_;
};

inline std::uint64_t param(const http_request& req, const char* name, std::uint64_t fallback,
                           std::uint64_t max) {
  if (!req.has_param(name)) return fallback;
  const std::string v = req.param(name);
  if (v.size() > 19 || !all_digits(v))
    throw bad_request(std::string("parameter '") + name + "' must be a non-negative integer");
  const std::uint64_t x = std::stoull(v);
  if (x > max)
    throw bad_request(std::string("parameter '") + name + "' must be at most " +
                      std::to_string(max));
  return x;
}

inline std::uint64_t path_number(const std::string& s, const std::string& what) {
  if (s.size() > 20 || !all_digits(s))
    throw bad_request(what + " must be a number, got '" + s + "'");
  try {
    return std::stoull(s);
  } catch (const std::out_of_range&) {
    throw bad_request(what + " is out of range");
  }
}

}  // namespace mm::server
