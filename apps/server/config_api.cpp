#include "config_api.hpp"

#include "cluster_node.hpp"
#include "config_scopes.hpp"
#include "dry_run.hpp"
#include "live_config.hpp"
#include "mm/engine/error.hpp"

namespace mm::server {

namespace {

// The scope a route's path names ("sessions" or "profile").
live_config& live_of(http_context& ctx, const http_request& req) {
  live_config* live = req.matches.at(1) == "profile" ? ctx.live_profile : ctx.live_sessions;
  if (!live) throw http_error(503, "this server keeps no configuration versions");
  return *live;
}

const json& field_of(const json& body, const char* name) {
  if (!body.contains(name)) throw bad_request(std::string(name) + ": required");
  return body[name];
}

std::string comment_of(const json& body) {
  if (!body.contains("comment")) return {};
  if (!body["comment"].is_string() || body["comment"].get<std::string>().size() > 500)
    throw bad_request("comment: a text of at most 500 bytes");
  return body["comment"].get<std::string>();
}

bool force_of(const json& body) {
  if (!body.contains("force")) return false;
  if (!body["force"].is_boolean()) throw bad_request("force: true or false");
  return body["force"].get<bool>();
}

// Errors of a change as their statuses: a conflict 409 (another change came
// first), what would strand tickets 409 with the counts.
template <class F>
void changing(http_response& res, F&& f) {
  try {
    send_json(res, f());
  } catch (const stranding_refused& r) {
    send_json(res,
              {{"error", "the change would strand " + r.stranded["tickets"].dump() +
                             " waiting tickets: send force: true to apply it anyway"},
               {"stranded", r.stranded}},
              409);
  } catch (const mm::error& e) {
    if (e.code() == errc::conflict) throw http_error(409, e.what());
    if (e.code() == errc::not_found) throw http_error(404, e.what());
    throw;
  }
}

// GET .../sessions|profile: the version in force.
void current_config(http_context& ctx, const http_request& req, http_response& res) {
  send_json(res, live_of(ctx, req).current());
}

void config_versions(http_context& ctx, const http_request& req, http_response& res) {
  const auto limit = param(req, "limit", 20, max_config_versions_listed);
  send_json(res, live_of(ctx, req).history(limit));
}

void check_config(http_context& ctx, const http_request& req, http_response& res) {
  const json body = parse_body(req.body);
  send_json(res, live_of(ctx, req).check(field_of(body, "document")));
}

void apply_config(http_context& ctx, const http_request& req, http_response& res) {
  const json body = parse_body(req.body);
  std::optional<std::int64_t> base;
  if (body.contains("base_version")) {
    if (!body["base_version"].is_number_integer())
      throw bad_request("base_version: the version the change was made from, an integer");
    base = body["base_version"].get<std::int64_t>();
  }
  const auto& document = field_of(body, "document");
  const std::string author = caller_credential(ctx.access, req);
  changing(res, [&] {
    return live_of(ctx, req).apply(document, author, comment_of(body), force_of(body), base);
  });
}

void rollback_config(http_context& ctx, const http_request& req, http_response& res) {
  const json body = parse_body(req.body);
  const auto& version = field_of(body, "version");
  if (!version.is_number_integer() || version.get<std::int64_t>() < 1)
    throw bad_request("version: a version number, 1 or more");
  const std::string author = caller_credential(ctx.access, req);
  changing(res, [&] {
    return live_of(ctx, req).rollback(version.get<std::int64_t>(), author, comment_of(body),
                                      force_of(body));
  });
}

// The candidate queues replayed on the recorded ticket stream (dry_run.hpp).
void dry_run_sessions(http_context& ctx, const http_request& req, http_response& res) {
  const json body = parse_body(req.body);
  dry_run_request r;
  if (body.contains("window_s")) {
    const auto& w = body["window_s"];
    if (!w.is_number_integer() || w.get<std::int64_t>() < 60 || w.get<std::int64_t>() > 86'400)
      throw bad_request("window_s: seconds of the recording to replay, 60 to 86400");
    r.window = std::chrono::seconds(w.get<std::int64_t>());
  }
  if (!ctx.live_sessions) throw http_error(503, "this server keeps no configuration versions");
  live_config& live = *ctx.live_sessions;
  r.current = ctx.config.sessions;
  r.current.queues = read_sessions_document(ctx.config.sessions, live.applied_document());
  r.current_version = live.applied_version();
  r.candidate = ctx.config.sessions;
  r.candidate.queues = read_sessions_document(ctx.config.sessions, field_of(body, "document"));
  if (!ctx.dry_run) throw http_error(503, "this server cannot run a dry run");
  try {
    send_json(res, ctx.dry_run->run(r));
  } catch (const mm::error& e) {
    if (e.code() == errc::not_found) throw http_error(404, e.what());
    if (e.code() == errc::limit_reached) throw http_error(429, e.what());
    if (e.code() == errc::invalid_argument)
      throw http_error(409, std::string("the recording cannot be replayed: ") + e.what());
    throw;
  }
}

// Any node answers these: the versions are in the shared store.
const route_row config_routes[] = {
    {"GET", "/api/admin/config/sessions|profile", role::view, current_config},
    {"GET", "/api/admin/config/sessions|profile/versions", role::view, config_versions},
    {"POST", "/api/admin/config/sessions|profile/check", role::admin, check_config},
    {"POST", "/api/admin/config/sessions|profile", role::admin, apply_config},
    {"POST", "/api/admin/config/sessions|profile/rollback", role::admin, rollback_config},
};

// The node that runs the session queues answers this one: it writes their
// recording.
const route_row dry_run_routes[] = {
    {"POST", "/api/admin/config/sessions/dry-run", role::admin, dry_run_sessions},
};

}  // namespace

void add_config_routes(api_routes& api, http_context& ctx) {
  api.add_rows(config_routes);
  api.served_by(session_routes_resource(ctx.config.sessions.partitions));
  api.add_rows(dry_run_routes);
  api.served_by("");
}

}  // namespace mm::server
