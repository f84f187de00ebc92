#include "http_api.hpp"

#include <memory>
#include <optional>

#include "access.hpp"
#include "api_routes.hpp"
#include "async_api.hpp"
#include "cluster_node.hpp"
#include "config_api.hpp"
#include "config_scopes.hpp"
#include "dashboard_files.hpp"
#include "event_api.hpp"
#include "json_codec.hpp"
#include "live_config.hpp"
#include "session_api.hpp"

namespace mm::server {

std::optional<http_response> served_elsewhere(const http_context& ctx, const http_request& req,
                                              const std::string& resource) {
  const cluster_node* node = ctx.cluster.load();
  if (!node || node->serves(resource)) return std::nullopt;
  if (const auto url = node->owner_url(resource)) {
    http_response res =
        error_response(307, "'" + resource + "' is served by another node of the cluster: " + *url);
    res.set_header("Location", *url + path_and_query(req));
    return res;
  }
  http_response res = error_response(503, "'" + resource +
                                              "' is not served by any node now (it is being "
                                              "taken over): retry in a moment");
  res.set_header("Retry-After", std::to_string(takeover_retry_after_s));
  return res;
}

namespace {

json config_json(const http_context& ctx, role r) {
  const auto& c = ctx.config;
  return {{"matchmakers", ctx.bridge.names()},
          // The version in force (config_scopes.hpp).
          {"profile",
           ctx.live_profile ? ctx.live_profile->applied_document() : profile_document(c.profile)},
          {"fake_opponents", c.opts.enable_fake_opponents},
          {"matching_candidate_amount", c.opts.matching_candidate_amount},
          {"matching_max_search", c.opts.matching_max_search},
          {"max_body_bytes", c.http.max_body_bytes},
          {"max_batch", c.http_max_batch},
          {"auth", {{"tokens_configured", !c.tokens.empty()}, {"role", to_string(r)}}}};
}

// GET /metrics: the served matchmakers, the HTTP counters, the session
// queues and lobbies, the events, the recordings and the cluster.
void metrics(http_context& ctx, const http_request&, http_response& res) {
  auto client = ctx.bridge.stats();
  std::string text =
      render_metrics(served_figures(ctx),
                     client ? std::optional<client_stats>(*client) : std::nullopt, ctx.counters);
  const auto queues =
      ctx.sessions.wait_for<std::vector<actors::session_queue_report>>(actors::info_atom::value);
  const auto lobbies = ctx.sessions.wait_for<actors::lobbies_report>(actors::lobby_atom::value,
                                                                     actors::info_atom::value);
  text += render_session_metrics(
      queues ? *queues : std::vector<actors::session_queue_report>{},
      lobbies ? std::optional<actors::lobbies_report>(*lobbies) : std::nullopt);
  if (ctx.events) text += render_event_metrics(*ctx.events);
  if (ctx.recording) text += render_recording_metrics(*ctx.recording);
  if (ctx.queries_recording) text += render_query_recording_metrics(*ctx.queries_recording);
  if (const cluster_node* node = ctx.cluster.load())
    text += render_cluster_metrics(node->metrics());
  res.set_content(text, "text/plain; version=0.0.4");
}

void get_config(http_context& ctx, const http_request& req, http_response& res) {
  send_json(res, config_json(ctx, caller_role(ctx.access, req)));
}

void reload_tokens(http_context& ctx, const http_request&, http_response& res) {
  if (!ctx.reload_tokens) throw http_error(503, "this server cannot reload its tokens");
  send_json(res, ctx.reload_tokens());
}

void get_cluster(http_context& ctx, const http_request&, http_response& res) {
  const cluster_node* node = ctx.cluster.load();
  send_json(res, node ? node->report() : json{{"cluster", false}});
}

// The node's own routes (route_row): method, path, role, function.
const route_row node_routes[] = {
    {"GET", "/metrics", role::view, metrics},
    {"GET", "/api/config", role::view, get_config},
    {"POST", "/api/admin/tokens/reload", role::admin, reload_tokens},
    {"GET", "/api/cluster", role::view, get_cluster},
};

}  // namespace

http_handlers api_handlers(http_context& ctx) {
  return api_handlers(ctx, api_table(ctx));
}

std::shared_ptr<const api_routes> api_table(http_context& ctx) {
  auto routes = std::make_shared<api_routes>(ctx);
  api_routes& api = *routes;

  for (const auto& f : dashboard_files())
    api.file(f.path == "/index.html" ? "/" : f.path, [&f](const http_request&, http_response& res) {
      res.set_content(f.body, f.content_type);
    });

  // The health probes (readiness.hpp): no token, they tell nothing but
  // readiness. /healthz is answered on the network thread: an answer shows
  // that it turns.
  api.probe("/healthz", true, [](auto&, auto& res) { send_json(res, {{"alive", true}}); });
  api.probe("/readyz", false, [&ctx](auto&, auto& res) {
    if (!ctx.readiness) {
      send_json(res, readiness_report{}.to_json());
      return;
    }
    const readiness_report r = ctx.readiness->report();
    send_json(res, r.to_json(), r.ready() ? 200 : 503);
  });

  // The contract needs no token: it is the same for every server.
  api.file("/api/openapi.json", [](const http_request&, http_response& res) {
    res.set_content(std::string(openapi_document()), "application/json");
  });
  api.add_rows(node_routes);
  add_async_routes(api, ctx);

  // On a node of a cluster these are answered by the node that holds the
  // session queues' lease; the others redirect. With partitions, by request.
  api.served_by(session_routes_resource(ctx.config.sessions.partitions));
  add_session_routes(api, ctx);
  add_event_routes(api, ctx);
  api.served_by("");
  // Any node: the versions are in the shared store, and every node follows.
  add_config_routes(api, ctx);

  // A route without its operation in docs/openapi.json (or the reverse) is a
  // defect of the build: the server refuses to start, naming each.
  if (const auto gaps = contract_gaps(routes->table(), openapi_document()); !gaps.empty()) {
    std::string all;
    for (const auto& g : gaps) all += "\n  " + g;
    throw std::logic_error("the routes and the API document differ:" + all);
  }
  return routes;
}

http_handlers api_handlers(http_context& ctx, std::shared_ptr<const api_routes> routes) {
  http_handlers h;
  h.admit = [routes](http_request& req) { return routes->admit(req); };
  h.start = [routes](http_request& req, const http_reply& reply) {
    return routes->start(req, reply);
  };
  h.handle = [routes](http_request& req) { return routes->handle(req); };
  h.upgrade = [&ctx](http_request& req) { return event_upgrade(ctx, req); };
  h.error = error_response;
  h.answered = [&ctx](int status) {
    if (status >= 500)
      ++ctx.counters.server_error;
    else if (status >= 400)
      ++ctx.counters.client_error;
    else
      ++ctx.counters.ok;
  };
  return h;
}

}  // namespace mm::server
