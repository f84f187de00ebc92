#include "async_api.hpp"

#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>
#include <set>

#include "batch_results.hpp"
#include "cluster_node.hpp"
#include "json_codec.hpp"
#include "mm/actors/permissions.hpp"
#include "mm/storage/player_table.hpp"
#include "query_text.hpp"

namespace mm::server {

namespace {

using actors::needed;
using actors::operation;

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
  std::vector<query_body> queries =
      read_batch(body, "queries", "query", max_batch_queries,
                 [&profile](const json& q) { return read_query(q, profile, false); });
  // The answers come on CAF's threads, in any order.
  auto all = batch_results::make(queries.size(), reply);
  caf::actor_system* sys = &ctx.queries.system();
  std::vector<match_request<generic_query>> requests;
  std::vector<actors::query_bridge<generic_profile>::callback> dones;
  requests.reserve(queries.size());
  dones.reserve(queries.size());
  for (std::size_t i = 0; i < queries.size(); ++i) {
    requests.push_back(std::move(queries[i].request));
    dones.push_back([all, i, &profile, sys](auto answer) {
      // Nothing may escape into the bridge's actor: it serves every query.
      json item;
      try {
        int status = 200;
        item = answer_json(answer, profile, *sys, status);
        if (status != 200) item["status"] = status;
      } catch (const std::exception& e) {
        item = {{"status", 500}, {"error", std::string("internal error: ") + e.what()}};
      }
      all->settle(i, std::move(item));
    });
  }
  ctx.queries.find_many(std::move(requests), std::move(dones));
}

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

// GET /api/matchmakers: those this node serves, and on a node of a cluster
// the shards other nodes serve, with their owner.
void list_matchmakers(http_context& ctx, const http_request&, http_response& res) {
  json list = json::array();
  for (const auto& f : served_figures(ctx))
    list.push_back(f.info ? info_json(f.name, *f.info, false)
                          : json{{"name", f.name}, {"error", "did not answer"}});
  json elsewhere = json::array();
  if (const cluster_node* node = ctx.cluster.load())
    for (std::size_t i = 0; i < ctx.bridge.size(); ++i)
      if (!served_here(ctx, i)) {
        const auto url = node->owner_url(ctx.bridge.names()[i]);
        elsewhere.push_back(
            {{"name", ctx.bridge.names()[i]}, {"served_by", url ? json(*url) : json(nullptr)}});
      }
  send_json(res, {{"matchmakers", list}, {"elsewhere", elsewhere}});
}

void get_matchmaker(http_context& ctx, const http_request& req, http_response& res) {
  const std::size_t i = served_matchmaker(ctx, req, req.matches[1]);
  send_json(res, info_json(ctx.bridge.names()[i], answered(ctx, i, ctx.bridge.info(i)), true));
}

void get_bucket(http_context& ctx, const http_request& req, http_response& res) {
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
  for (const auto& m : players) list.push_back(model_json(m, ctx.config.profile));
  send_json(res, {{"matchmaker", ctx.bridge.names()[i]},
                  {"bucket", bucket_json(info.engine.buckets[b])},
                  {"offset", offset},
                  {"limit", limit},
                  {"players", list}});
}

// GET /api/top: the highest MMRs of every served cache, each player once.
void top_players(http_context& ctx, const http_request& req, http_response& res) {
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
    json j = model_json(m, ctx.config.profile);
    j["matchmaker"] = ctx.bridge.names()[i];
    list.push_back(std::move(j));
  }
  send_json(res, {{"players", list}});
}

// GET /api/players/{id}: its stored row and what each served cache holds.
void get_player(http_context& ctx, const http_request& req, http_response& res) {
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
}

// GET /api/players: the player table by pages of ids.
void list_players(http_context& ctx, const http_request& req, http_response& res) {
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
                  {"next_after",
                   rows.size() == limit && !rows.empty() ? json(rows.back().id) : json(nullptr)}});
}

// POST /api/query, through the query bridge: no thread waits for the answer.
// The callback runs on a CAF thread and may outlive `ctx` (a reply the server
// gave up on at stop): it holds only the reply, the config's profile and the
// actor system, which outlive every actor.
void find_opponent(http_context& ctx, const http_request& req, const http_reply& reply) {
  const generic_profile_config& profile = ctx.config.profile;
  // The plain single query without a tree (query_text.hpp).
  std::optional<query_body> plain = read_plain_query(req.body, profile);
  if (!plain) {
    const json body = parse_body(req.body);
    if (body.is_object() && body.contains("queries"))
      return answer_query_batch(ctx, profile, body, reply);
    plain = read_query(body, profile, false);
  }
  caf::actor_system* sys = &ctx.queries.system();
  ctx.queries.find(std::move(plain->request), [reply, &profile, sys](auto answer) {
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
}

void explain_query(http_context& ctx, const http_request& req, http_response& res) {
  send_json(res, test_query(ctx, read_query(parse_body(req.body), ctx.config.profile, true)));
}

// POST /api/matchmakers/{name}/rebalance|reset.
void maintain_one(http_context& ctx, const http_request& req, http_response& res) {
  send_json(res, maintenance(ctx, served_matchmaker(ctx, req, req.matches[1]), req.matches[2]));
}

// POST /api/rebalance|reset: every matchmaker this node serves.
void maintain_all(http_context& ctx, const http_request& req, http_response& res) {
  json list = json::array();
  for (std::size_t i = 0; i < ctx.bridge.size(); ++i)
    if (served_here(ctx, i)) list.push_back(maintenance(ctx, i, req.matches[1]));
  send_json(res, {{"matchmakers", list}});
}

void add_to_cache(http_context& ctx, const http_request& req, http_response& res) {
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
}

void remove_from_cache(http_context& ctx, const http_request& req, http_response& res) {
  const player_id id = read_id_body(parse_body(req.body));
  serve_player_here(ctx, req, id);
  auto changed = ctx.bridge.remove(id);
  if (!changed) cache_change_failed(ctx, req, id, changed.error());
  send_json(res, {{"id", id}, {"changed", *changed}});
}

// POST /api/players: rows read one by one (a bad one is rejected by index,
// the others written), then written in one transaction.
void upsert_players(http_context& ctx, const http_request& req, http_response& res) {
  const json body = parse_body(req.body);
  if (!body.is_object() || body.size() != 1 || !body.contains("players") ||
      !body["players"].is_array())
    throw bad_request("the body must be {\"players\": [...]}");
  const json& list = body["players"];
  if (list.size() > ctx.config.http_max_batch)
    throw bad_request("at most " + std::to_string(ctx.config.http_max_batch) +
                      " players per request (http.max_batch), got " + std::to_string(list.size()));
  std::vector<player_row> rows;
  std::vector<std::size_t> positions;
  json rejected = json::array();
  for (std::size_t k = 0; k < list.size(); ++k) {
    try {
      rows.push_back(read_row(list[k], ctx.config.profile, "players[" + std::to_string(k) + "]"));
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
}

// The table: method, path, role, function (route_row).
const route_row async_routes[] = {
    {"GET", "/api/matchmakers", role::view, list_matchmakers},
    {"GET", "/api/matchmakers/*", role::view, get_matchmaker},
    {"GET", "/api/matchmakers/*/buckets/*", role::view, get_bucket},
    {"GET", "/api/top", role::view, top_players},
    {"GET", "/api/players/*", role::view, get_player},
    {"GET", "/api/players", role::view, list_players},
    {"POST", "/api/query", needed(operation::find), nullptr, find_opponent},
    {"POST", "/api/test-query", needed(operation::find), explain_query},
    {"POST", "/api/matchmakers/*/rebalance|reset", role::admin, maintain_one},
    {"POST", "/api/rebalance|reset", role::admin, maintain_all},
    {"POST", "/api/cache/add", role::admin, add_to_cache},
    {"POST", "/api/cache/remove", role::admin, remove_from_cache},
    {"POST", "/api/players", role::admin, upsert_players},
};

}  // namespace

void add_async_routes(api_routes& api, http_context&) {
  api.add_rows(async_routes);
}

std::vector<matchmaker_figures> served_figures(http_context& ctx) {
  std::vector<matchmaker_figures> out;
  for (std::size_t i = 0; i < ctx.bridge.size(); ++i) {
    if (!served_here(ctx, i)) continue;
    matchmaker_figures f{ctx.bridge.names()[i], std::nullopt};
    if (auto x = ctx.bridge.info(i)) f.info = std::move(*x);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace mm::server
