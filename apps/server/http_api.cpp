#include "http_api.hpp"

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string_view>

#include "access.hpp"
#include "api_routes.hpp"
#include "cluster_node.hpp"
#include "config_api.hpp"
#include "config_scopes.hpp"
#include "dashboard_files.hpp"
#include "event_api.hpp"
#include "json_codec.hpp"
#include "live_config.hpp"
#include "mm/actors/permissions.hpp"
#include "mm/storage/player_table.hpp"
#include "query_text.hpp"
#include "session_api.hpp"

namespace mm::server {

namespace {

// A matchmaker by index ("0") or name ("mm-0").
std::size_t matchmaker_index(const http_context& ctx, const std::string& key) {
  const auto& names = ctx.bridge.names();
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == key) return i;
  if (key.size() < 6 && all_digits(key)) {
    const std::size_t i = std::stoul(key);
    if (i < names.size()) return i;
  }
  throw http_error(404, "no matchmaker '" + key + "' (there are " + std::to_string(names.size()) +
                            ": " + names.front() + " ... " + names.back() + ")");
}

// Whether this node serves matchmaker i: always on a server alone; on a node
// of a cluster, while it holds the shard's lease.
bool served_here(const http_context& ctx, std::size_t i) {
  const cluster_node* node = ctx.cluster.load();
  return !node || node->serves(ctx.bridge.names()[i]);
}

// One answer of the query bridge as JSON: the reply, or an error with the
// status a single query would have been given.
json answer_json(const caf::expected<match_reply<generic_model>>& answer,
                 const generic_profile_config& profile, caf::actor_system& sys, int& status) {
  if (!answer) {
    status = 503;
    return {{"error", "no matchmaker answered: " + sys.render(answer.error())}};
  }
  if (answer->type == match_type::invalid_request) {
    status = 400;
    return {{"error", answer->error}};
  }
  status = 200;
  return reply_json(*answer, profile);
}

// POST /api/query with {"queries": [...]}: every query is read before any is
// sent (a bad one refuses the whole request, naming it), then they go to the
// bridge together, each answered as a single query; the reply is sent when the last
// answer is in, the results in the order asked. At most max_batch_queries
// (the actor API's own batch bound), and the body within http.max_body_bytes.
void answer_query_batch(http_context& ctx, const generic_profile_config& profile, const json& body,
                        const http_reply& reply) {
  only_fields(body, {"queries"}, "the batch");
  const json& list = body["queries"];
  if (!list.is_array()) throw bad_request("queries must be a list of queries");
  if (list.empty()) throw bad_request("queries must hold at least one query");
  if (list.size() > max_batch_queries)
    throw bad_request("queries: at most " + std::to_string(max_batch_queries) +
                      " queries per request, got " + std::to_string(list.size()));
  std::vector<query_body> queries;
  queries.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) try {
      queries.push_back(read_query(list[i], profile, false));
    } catch (const bad_request& e) {
      throw bad_request("queries[" + std::to_string(i) + "]: " + e.what());
    }
  // The answers come on CAF's threads, in any order.
  struct gathered {
    std::mutex mutex;
    std::vector<json> results;
    std::size_t left = 0;
  };
  auto all = std::make_shared<gathered>();
  all->results.resize(queries.size());
  all->left = queries.size();
  caf::actor_system* sys = &ctx.queries.system();
  std::vector<match_request<generic_query>> requests;
  std::vector<actors::query_bridge<generic_profile>::callback> dones;
  requests.reserve(queries.size());
  dones.reserve(queries.size());
  for (std::size_t i = 0; i < queries.size(); ++i) {
    requests.push_back(std::move(queries[i].request));
    dones.push_back([all, i, reply, &profile, sys](auto answer) {
      // Nothing may escape into the bridge's actor: it serves every query.
      json item;
      try {
        int status = 200;
        item = answer_json(answer, profile, *sys, status);
        if (status != 200) item["status"] = status;
      } catch (const std::exception& e) {
        item = {{"status", 500}, {"error", std::string("internal error: ") + e.what()}};
      }
      bool last = false;
      {
        std::lock_guard lock(all->mutex);
        all->results[i] = std::move(item);
        last = --all->left == 0;
      }
      if (!last) return;
      http_response res;
      try {
        send_json(res, {{"results", std::move(all->results)}});
      } catch (const std::exception& e) {
        send_error(res, 500, std::string("internal error: ") + e.what());
      }
      reply(std::move(res));
    });
  }
  ctx.queries.find_many(std::move(requests), std::move(dones));
}

}  // namespace

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

// Answers a request for what another node serves with a redirect to it
// (307: same method, path, query and body), or 503 while nobody does.
[[noreturn]] void redirect_to_owner(const http_context& ctx, const http_request& req,
                                    const std::string& resource) {
  const cluster_node* node = ctx.cluster.load();
  if (node)
    if (const auto url = node->owner_url(resource))
      throw http_redirect(*url + path_and_query(req),
                          "'" + resource + "' is served by another node of the cluster: " + *url);
  throw http_error(503,
                   "'" + resource +
                       "' is not served by any node now (it is being taken over): retry in a "
                       "moment",
                   takeover_retry_after_s);
}

// Matchmaker `key` when this node serves it; else a redirect to its owner.
std::size_t served_matchmaker(http_context& ctx, const http_request& req, const std::string& key) {
  const std::size_t i = matchmaker_index(ctx, key);
  if (!served_here(ctx, i)) redirect_to_owner(ctx, req, ctx.bridge.names()[i]);
  return i;
}

// The same for the matchmaker that owns a player (id mod the set's size).
void serve_player_here(http_context& ctx, const http_request& req, player_id id) {
  const std::size_t i = static_cast<std::size_t>(id % ctx.bridge.size());
  if (!served_here(ctx, i)) redirect_to_owner(ctx, req, ctx.bridge.names()[i]);
}

// Why a cache change failed. A shard this node held when the request came
// but does not run at this moment (handed over, or taken back and not yet
// started): the owner's, as for any request of another node's (307, or 503
// with Retry-After while nobody serves it). Anything else: 503.
[[noreturn]] void cache_change_failed(http_context& ctx, const http_request& req, player_id id,
                                      const caf::error& e) {
  if (error_code_of(e) == errc::not_owned_here)
    redirect_to_owner(ctx, req, ctx.bridge.names()[id % ctx.bridge.size()]);
  throw http_error(503, "the matchmaker did not answer: " + ctx.bridge.render(e));
}

template <class T>
T answered(const http_context& ctx, std::size_t i, caf::expected<T> x) {
  if (!x)
    throw http_error(503, "matchmaker '" + ctx.bridge.names()[i] +
                              "' did not answer: " + ctx.bridge.render(x.error()));
  return std::move(*x);
}

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

// The figures of the matchmakers this node serves.
std::vector<matchmaker_figures> all_figures(http_context& ctx) {
  std::vector<matchmaker_figures> out;
  for (std::size_t i = 0; i < ctx.bridge.size(); ++i) {
    if (!served_here(ctx, i)) continue;
    matchmaker_figures f{ctx.bridge.names()[i], std::nullopt};
    if (auto x = ctx.bridge.info(i)) f.info = std::move(*x);
    out.push_back(std::move(f));
  }
  return out;
}

json maintenance(http_context& ctx, std::size_t i, const std::string& what) {
  json j = {{"matchmaker", ctx.bridge.names()[i]}};
  if (what == "rebalance")
    j["rebalance"] = rebalance_json(answered(ctx, i, ctx.bridge.rebalance(i)));
  else
    j["reset"] = answered(ctx, i, ctx.bridge.clear(i));
  return j;
}

json test_query(http_context& ctx, const query_body& q) {
  json per = json::array();
  json best = nullptr;
  std::string why;
  for (std::size_t i = 0; i < ctx.bridge.size(); ++i) {
    if (!served_here(ctx, i)) continue;
    const query_explanation x = answered(ctx, i, ctx.bridge.explain(i, q.request, q.max_retries));
    if (!x.error.empty()) throw bad_request(x.error);
    json e = explanation_json(x);
    e["matchmaker"] = ctx.bridge.names()[i];
    const query_try& last = x.tries.back();
    if (last.type == match_type::success &&
        (best.is_null() || last.retries < best["retries"].get<std::uint32_t>()))
      best = {{"matchmaker", ctx.bridge.names()[i]},
              {"retries", last.retries},
              {"best_candidate_id", last.best_candidate_id},
              {"mmr_gap", last.mmr_gap},
              {"quality", last.quality}};
    per.push_back(std::move(e));
  }
  json out = {{"found", !best.is_null()}, {"best", best}, {"matchmakers", per}};
  if (best.is_null()) {
    std::uint64_t cached = 0;
    for (const auto& e : per) cached += e["players_cached"].get<std::uint64_t>();
    out["summary"] = cached == 0 ? "no matchmaker holds any player yet (the scan fills the cache)"
                                 : "no possible candidate with retries " +
                                       std::to_string(q.request.num_retries) + " to " +
                                       std::to_string(q.max_retries) +
                                       ": see each matchmaker's rejected candidates";
  } else {
    out["summary"] = "Success on " + best["matchmaker"].get<std::string>() + " at retry " +
                     std::to_string(best["retries"].get<std::uint32_t>());
  }
  return out;
}

}  // namespace

http_handlers api_handlers(http_context& ctx) {
  return api_handlers(ctx, api_table(ctx));
}

std::shared_ptr<const api_routes> api_table(http_context& ctx) {
  const auto& profile = ctx.config.profile;
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
  api.get("/metrics", role::view, [&ctx](auto&, auto& res) {
    auto client = ctx.bridge.stats();
    std::string text =
        render_metrics(all_figures(ctx),
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
  });
  api.get("/api/config", role::view, [&ctx](auto& req, auto& res) {
    send_json(res, config_json(ctx, caller_role(ctx.access, req)));
  });
  api.get("/api/matchmakers", role::view, [&ctx](auto&, auto& res) {
    json list = json::array();
    for (const auto& f : all_figures(ctx))
      list.push_back(f.info ? info_json(f.name, *f.info, false)
                            : json{{"name", f.name}, {"error", "did not answer"}});
    // On a node of a cluster, the shards other nodes serve, with their owner.
    json elsewhere = json::array();
    if (const cluster_node* node = ctx.cluster.load())
      for (std::size_t i = 0; i < ctx.bridge.size(); ++i)
        if (!served_here(ctx, i)) {
          const auto url = node->owner_url(ctx.bridge.names()[i]);
          elsewhere.push_back(
              {{"name", ctx.bridge.names()[i]}, {"served_by", url ? json(*url) : json(nullptr)}});
        }
    send_json(res, {{"matchmakers", list}, {"elsewhere", elsewhere}});
  });
  api.post("/api/admin/tokens/reload", role::admin, [&ctx](auto&, auto& res) {
    if (!ctx.reload_tokens) throw http_error(503, "this server cannot reload its tokens");
    send_json(res, ctx.reload_tokens());
  });
  api.get("/api/cluster", role::view, [&ctx](auto&, auto& res) {
    const cluster_node* node = ctx.cluster.load();
    send_json(res, node ? node->report() : json{{"cluster", false}});
  });
  api.get("/api/matchmakers/*", role::view, [&ctx](auto& req, auto& res) {
    const std::size_t i = served_matchmaker(ctx, req, req.matches[1]);
    send_json(res, info_json(ctx.bridge.names()[i], answered(ctx, i, ctx.bridge.info(i)), true));
  });
  api.get("/api/matchmakers/*/buckets/*", role::view, [&ctx, &profile](auto& req, auto& res) {
    const std::size_t i = served_matchmaker(ctx, req, req.matches[1]);
    const std::uint64_t b = path_number(req.matches[2], "the bucket index");
    const auto offset = param(req, "offset", 0, 1'000'000'000);
    const auto limit = param(req, "limit", 50, 1000);
    const instance_info info = answered(ctx, i, ctx.bridge.info(i));
    if (b >= info.engine.buckets.size())
      throw http_error(404, "matchmaker '" + ctx.bridge.names()[i] + "' has no bucket " +
                                std::to_string(b) + " (it has " +
                                std::to_string(info.engine.buckets.size()) + ")");
    const auto players = answered(
        ctx, i,
        ctx.bridge.inspect(i, static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(offset),
                           static_cast<std::uint32_t>(limit)));
    json list = json::array();
    for (const auto& m : players) list.push_back(model_json(m, profile));
    send_json(res, {{"matchmaker", ctx.bridge.names()[i]},
                    {"bucket", bucket_json(info.engine.buckets[b])},
                    {"offset", offset},
                    {"limit", limit},
                    {"players", list}});
  });
  api.get("/api/top", role::view, [&ctx, &profile](auto& req, auto& res) {
    const auto limit = static_cast<std::uint32_t>(param(req, "limit", 100, 1000));
    std::vector<std::pair<generic_model, std::size_t>> all;
    for (std::size_t i = 0; i < ctx.bridge.size(); ++i)
      if (served_here(ctx, i))
        for (const auto& m : answered(ctx, i, ctx.bridge.top(i, limit))) all.emplace_back(m, i);
    std::stable_sort(all.begin(), all.end(),
                     [](auto& a, auto& b) { return a.first.mmr > b.first.mmr; });
    json list = json::array();
    std::set<player_id> seen;
    for (const auto& [m, i] : all) {
      if (list.size() == limit) break;
      if (!seen.insert(m.id()).second) continue;
      json j = model_json(m, profile);
      j["matchmaker"] = ctx.bridge.names()[i];
      list.push_back(std::move(j));
    }
    send_json(res, {{"players", list}});
  });
  api.get("/api/players/*", role::view, [&ctx](auto& req, auto& res) {
    const player_id id = path_number(req.matches[1], "the player id");
    std::optional<player_row> row;
    {
      std::lock_guard lock(ctx.read_db_mutex);
      row = ctx.read_db.find_player(id);
    }
    json per = json::array();
    bool anywhere = false;
    for (std::size_t i = 0; i < ctx.bridge.size(); ++i) {
      if (!served_here(ctx, i)) continue;
      const player_info p = answered(ctx, i, ctx.bridge.player(i, id));
      anywhere |= p.participating;
      json j = p.participating ? player_info_json(p, answered(ctx, i, ctx.bridge.info(i)).engine)
                               : json{{"participating", false}};
      j["matchmaker"] = ctx.bridge.names()[i];
      per.push_back(std::move(j));
    }
    if (!row && !anywhere)
      throw http_error(
          404, "player " + std::to_string(id) + " is neither in the player table nor in any cache");
    send_json(res,
              {{"id", id}, {"stored", row ? row_json(*row) : json(nullptr)}, {"matchmakers", per}});
  });
  api.get("/api/players", role::view, [&ctx](auto& req, auto& res) {
    const auto after = param(req, "after", 0, max_stored_player_id);
    const auto limit = param(req, "limit", 1000, 10'000);
    std::vector<player_row> rows;
    {
      std::lock_guard lock(ctx.read_db_mutex);
      rows = ctx.read_db.players_after(after, limit);
    }
    json list = json::array();
    for (const auto& r : rows) list.push_back(row_json(r));
    send_json(res, {{"players", list},
                    {"next_after", rows.size() == limit && !rows.empty() ? json(rows.back().id)
                                                                         : json(nullptr)}});
  });

  // The game's query, through the query bridge: no thread waits for the
  // answer. The callback runs on a CAF thread and may outlive `ctx` (a reply
  // the server gave up on at stop): it holds only the reply, the config's
  // profile and the actor system, which outlive every actor.
  api.post_deferred("/api/query", actors::needed(actors::operation::find),
                    [&ctx, &profile](auto& req, const http_reply& reply) {
                      // The plain single query without a tree (query_text.hpp).
                      std::optional<query_body> plain = read_plain_query(req.body, profile);
                      if (!plain) {
                        const json body = parse_body(req.body);
                        if (body.is_object() && body.contains("queries"))
                          return answer_query_batch(ctx, profile, body, reply);
                        plain = read_query(body, profile, false);
                      }
                      caf::actor_system* sys = &ctx.queries.system();
                      ctx.queries.find(
                          std::move(plain->request), [reply, &profile, sys](auto answer) {
                            // Nothing may escape into the bridge's actor: it serves every query.
                            http_response res;
                            try {
                              int status = 200;
                              std::optional<std::string> text;
                              if (answer && answer->type != match_type::invalid_request)
                                text = reply_text(*answer, profile);
                              json j = text ? json() : answer_json(answer, profile, *sys, status);
                              if (text)
                                res.set_content(std::move(*text), "application/json");
                              else if (status == 200)
                                send_json(res, j);
                              else
                                send_error(res, status, j["error"].get<std::string>());
                            } catch (const std::exception& e) {
                              send_error(res, 500, std::string("internal error: ") + e.what());
                            }
                            reply(std::move(res));
                          });
                    });
  api.post("/api/test-query", actors::needed(actors::operation::find),
           [&ctx, &profile](auto& req, auto& res) {
             send_json(res, test_query(ctx, read_query(parse_body(req.body), profile, true)));
           });

  api.post("/api/matchmakers/*/rebalance|reset", role::admin, [&ctx](auto& req, auto& res) {
    send_json(res, maintenance(ctx, served_matchmaker(ctx, req, req.matches[1]), req.matches[2]));
  });
  api.post("/api/rebalance|reset", role::admin, [&ctx](auto& req, auto& res) {
    json list = json::array();
    for (std::size_t i = 0; i < ctx.bridge.size(); ++i)
      if (served_here(ctx, i)) list.push_back(maintenance(ctx, i, req.matches[1]));
    send_json(res, {{"matchmakers", list}});
  });
  api.post("/api/cache/add", role::admin, [&ctx](auto& req, auto& res) {
    const player_id id = read_id_body(parse_body(req.body));
    serve_player_here(ctx, req, id);
    {
      std::lock_guard lock(ctx.read_db_mutex);
      if (!ctx.read_db.find_player(id))
        throw http_error(404, "player " + std::to_string(id) + " is not in the player table");
    }
    auto changed = ctx.bridge.enroll(id);
    if (!changed) cache_change_failed(ctx, req, id, changed.error());
    send_json(res, {{"id", id}, {"changed", *changed}});
  });
  api.post("/api/cache/remove", role::admin, [&ctx](auto& req, auto& res) {
    const player_id id = read_id_body(parse_body(req.body));
    serve_player_here(ctx, req, id);
    auto changed = ctx.bridge.remove(id);
    if (!changed) cache_change_failed(ctx, req, id, changed.error());
    send_json(res, {{"id", id}, {"changed", *changed}});
  });
  api.post("/api/players", role::admin, [&ctx, &profile](auto& req, auto& res) {
    const json body = parse_body(req.body);
    if (!body.is_object() || body.size() != 1 || !body.contains("players") ||
        !body["players"].is_array())
      throw bad_request("the body must be {\"players\": [...]}");
    const json& list = body["players"];
    if (list.size() > ctx.config.http_max_batch)
      throw bad_request("at most " + std::to_string(ctx.config.http_max_batch) +
                        " players per request (http.max_batch), got " +
                        std::to_string(list.size()));
    std::vector<player_row> rows;
    std::vector<std::size_t> positions;
    json rejected = json::array();
    for (std::size_t k = 0; k < list.size(); ++k) {
      try {
        rows.push_back(read_row(list[k], profile, "players[" + std::to_string(k) + "]"));
        positions.push_back(k);
      } catch (const bad_request& e) {
        rejected.push_back({{"index", k}, {"reason", e.what()}});
      }
    }
    write_report report;
    {
      std::lock_guard lock(ctx.db_mutex);
      report = ctx.db.upsert_players(rows);
    }
    for (const auto& p : report.rejected)
      rejected.push_back({{"index", positions[p.index]}, {"id", p.id}, {"reason", p.reason}});
    send_json(res, {{"written", report.written}, {"rejected", rejected}});
  });

  // On a node of a cluster these are answered by the node that holds the
  // session queues' lease; the others redirect.
  api.served_by(sessions_resource);
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
