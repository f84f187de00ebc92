#include "resp_commands.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <cctype>

#include "resp_protocol.hpp"

namespace mm::server {

namespace {

using body_kind = resp_command_spec::body_kind;
using resp::error_reply;
using resp::upper;

// A body of at most this many bytes is parsed on the network thread, as the
// HTTP server's http.inline_body_bytes; a larger one on a command thread.
constexpr std::size_t inline_body_bytes = 16 * 1024;
// What a client may send before AUTH, when tokens are required.
constexpr std::size_t unauthenticated_bulk_bytes = 4096;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string wrong_arguments(const std::string& name, const std::string& usage) {
  return error_reply("ERR", "wrong number of arguments for '" + lower(name) + "' command (" + name +
                                (usage.empty() ? "" : " " + usage) + ")");
}

std::string ok() {
  std::string out;
  resp::simple(out, "OK");
  return out;
}

std::string encode_answer(const http_response& res, int) {
  return resp_answer(res);
}

// The answer of a route run for another door: sent as RESP through `reply`.
class resp_sink : public http_reply::sink {
 public:
  resp_sink(resp_reply r, int protocol, resp_commands::encoder encode)
      : reply_(std::move(r)), protocol_(protocol), encode_(std::move(encode)) {}
  void deliver(http_response answer) override { reply_(encode_(answer, protocol_)); }

 private:
  resp_reply reply_;
  int protocol_;
  resp_commands::encoder encode_;
};

}  // namespace

const char* resp_error_code(int status) {
  switch (status) {
    case 307:
      return "REDIRECT";
    case 401:
      return "NOAUTH";
    case 403:
      return "NOPERM";
    case 404:
      return "NOTFOUND";
    case 409:
      return "CONFLICT";
    case 429:
      return "BUSY";
    case 503:
      return "TRYAGAIN";
    default:
      return "ERR";
  }
}

std::string resp_answer(const http_response& res) {
  std::string out;
  if (res.status >= 200 && res.status < 300) {
    resp::bulk(out, res.body);
    return out;
  }
  std::string message = res.body;
  const json j = json::parse(res.body, nullptr, false);
  if (j.is_object() && j.contains("error") && j["error"].is_string()) message = j["error"];
  if (res.status == 307)
    for (const auto& [name, value] : res.headers)
      if (name == "Location") message = value + " " + message;
  resp::error(out, resp_error_code(res.status), message);
  return out;
}

const std::vector<resp_command_spec>& resp_command_table() {
  using B = body_kind;
  static const std::vector<resp_command_spec> table = {
      {"MM.FIND",
       "POST",
       "/api/query",
       B::required,
       {},
       "query-json",
       "find an opponent: one query {attacker, mmr, attributes, retries, excluded}, or "
       "{\"queries\": [...]}"},
      {"MM.TESTQUERY",
       "POST",
       "/api/test-query",
       B::required,
       {},
       "query-json",
       "a query that changes nothing, with every matchmaker's reasons"},
      {"MM.PLAYERS.UPSERT",
       "POST",
       "/api/players",
       B::required,
       {},
       "{\"players\": [...]}",
       "write players to the player table (new MMRs, attributes)"},
      {"MM.PLAYER",
       "GET",
       "/api/players/*",
       B::none,
       {},
       "player-id",
       "a player as stored and as each matchmaker holds it"},
      {"MM.CACHE.ADD",
       "POST",
       "/api/cache/add",
       B::required,
       {},
       "{\"id\": player-id}",
       "put a stored player into the matchmakers' cache now"},
      {"MM.CACHE.REMOVE",
       "POST",
       "/api/cache/remove",
       B::required,
       {},
       "{\"id\": player-id}",
       "take a player out of the matchmakers' cache"},
      {"MM.MATCHMAKERS", "GET", "/api/matchmakers", B::none, {}, "", "every matchmaker's figures"},
      {"MM.MATCHMAKER",
       "GET",
       "/api/matchmakers/*",
       B::none,
       {},
       "name",
       "one matchmaker's figures and buckets"},
      {"MM.TICKET.CREATE",
       "POST",
       "/api/tickets",
       B::required,
       {},
       "ticket-json",
       "a ticket for one queue or several (\"queues\"), a player or a party"},
      {"MM.TICKET.GET",
       "GET",
       "/api/tickets/*",
       B::none,
       {"wait"},
       "ticket [WAIT seconds]",
       "a ticket's state; WAIT: until it changes, at most that long"},
      {"MM.TICKET.CANCEL",
       "DELETE",
       "/api/tickets/*",
       B::none,
       {},
       "ticket",
       "cancel a waiting ticket"},
      {"MM.TICKET.EXPLAIN",
       "GET",
       "/api/tickets/*/explain",
       B::none,
       {"limit"},
       "ticket [LIMIT candidates]",
       "why a ticket waits, in each of its queues"},
      {"MM.QUEUES", "GET", "/api/queues", B::none, {}, "", "every session queue's figures"},
      {"MM.QUEUE",
       "GET",
       "/api/queues/*",
       B::none,
       {"offset", "limit"},
       "name [OFFSET n] [LIMIT n]",
       "one queue's figures and waiting tickets"},
      {"MM.BACKFILL.REGISTER",
       "POST",
       "/api/backfills",
       B::required,
       {},
       "match-json",
       "register a running match with open seats"},
      {"MM.BACKFILL.LIST",
       "GET",
       "/api/backfills",
       B::none,
       {"queue", "offset", "limit"},
       "[QUEUE name] [OFFSET n] [LIMIT n]",
       "the running matches"},
      {"MM.BACKFILL.GET", "GET", "/api/backfills/*", B::none, {}, "match", "a running match"},
      {"MM.BACKFILL.UPDATE",
       "PUT",
       "/api/backfills/*",
       B::required,
       {},
       "match match-json",
       "change a running match (its players, open seats)"},
      {"MM.BACKFILL.CONFIRM",
       "POST",
       "/api/backfills/*/reservations/*/confirm",
       B::optional,
       {},
       "match reservation [players-json]",
       "the reserved players joined"},
      {"MM.BACKFILL.RELEASE",
       "POST",
       "/api/backfills/*/reservations/*/release",
       B::optional,
       {},
       "match reservation [players-json]",
       "give reserved seats back"},
      {"MM.BACKFILL.STOP",
       "DELETE",
       "/api/backfills/*",
       B::none,
       {},
       "match",
       "the running match ended"},
      {"MM.BACKFILL.EXPLAIN",
       "GET",
       "/api/backfills/*/explain",
       B::none,
       {"limit"},
       "match [LIMIT candidates]",
       "why a running match's seats stay open"},
      {"MM.LOBBY.FIND",
       "POST",
       "/api/lobbies/find",
       B::required,
       {},
       "query-json",
       "a seat in a running lobby"},
      {"MM.LOBBY.CREATE",
       "POST",
       "/api/lobbies",
       B::required,
       {},
       "lobby-json",
       "register a lobby"},
      {"MM.LOBBY.UPDATE",
       "PUT",
       "/api/lobbies/*",
       B::required,
       {},
       "id lobby-json",
       "a lobby's player count"},
      {"MM.LOBBY.CLOSE", "DELETE", "/api/lobbies/*", B::none, {}, "id", "close a lobby"},
      {"MM.LOBBIES", "GET", "/api/lobbies", B::none, {"limit"}, "[LIMIT n]", "the lobbies"},
      {"MM.CLUSTER", "GET", "/api/cluster", B::none, {}, "", "this node's view of the cluster"},
      {"MM.CONFIG", "GET", "/api/config", B::none, {}, "", "the configuration in force"},
  };
  return table;
}

resp_commands::resp_commands(http_context& ctx, std::shared_ptr<const api_routes> routes,
                             const resp_settings& settings)
    : ctx_(ctx),
      routes_(std::move(routes)),
      settings_(settings),
      events_route_(routes_->find_route("GET", "/api/events")),
      pool_(std::make_unique<boost::asio::thread_pool>(
          std::max<std::uint32_t>(1, settings.threads))) {
  for (const auto& spec : resp_command_table()) {
    const std::size_t captures =
        static_cast<std::size_t>(std::count(spec.pattern.begin(), spec.pattern.end(), '*'));
    bound_.push_back({&spec, routes_->find_route(spec.method, spec.pattern), captures});
  }
}

resp_commands::~resp_commands() {
  pool_->join();
}

resp_handlers resp_commands::handlers() {
  resp_handlers h;
  h.command = [this](resp_client& client, std::vector<std::string>& args, const resp_reply& reply) {
    command(client, args, reply);
  };
  // Until it authenticates, a client sends no body (when tokens are required).
  h.opened = [this](resp_client& client) {
    if (!ctx_.config.tokens.empty()) client.max_bulk_bytes = unauthenticated_bulk_bytes;
  };
  return h;
}

http_request resp_commands::request_of(const resp_client& client, const std::string& method,
                                       std::string path) const {
  http_request req;
  req.method = method;
  req.path = std::move(path);
  req.remote_address = client.address;
  req.id = "resp-" + std::to_string(client.id);
  if (!client.token.empty()) req.headers.emplace_back("Authorization", "Bearer " + client.token);
  return req;
}

bool resp_commands::authenticate(resp_client& client, const std::string& token,
                                 const resp_reply& reply) {
  if (!ctx_.config.tokens.empty() && !ctx_.access.identities.by_token(token)) {
    ++ctx_.counters.unauthorized;
    reply(error_reply("WRONGPASS", "invalid token"));
    return false;
  }
  client.token = ctx_.config.tokens.empty() ? std::string() : token;
  client.authenticated = true;
  client.max_bulk_bytes = settings_.max_bulk_bytes;
  return true;
}

void resp_commands::command(resp_client& client, std::vector<std::string>& args,
                            const resp_reply& reply) {
  const std::string name = upper(args[0]);
  const bool open = ctx_.config.tokens.empty();
  if (!open && !client.authenticated && name != "AUTH" && name != "HELLO" && name != "PING" &&
      name != "QUIT") {
    ++ctx_.counters.unauthorized;
    return reply(error_reply("NOAUTH", "Authentication required: AUTH <token>"));
  }
  if (client.pushes && client.protocol < 3 && name != "MM.UNSUBSCRIBE" && name != "PING" &&
      name != "QUIT")
    return reply(error_reply(
        "ERR", "only MM.UNSUBSCRIBE, PING and QUIT are allowed while subscribed (RESP2)"));
  if (connection_command(client, name, args, reply)) return;
  if (name == "MM.XREAD") return xread(client, args, reply);
  if (name == "MM.SUBSCRIBE") return subscribe(client, args, reply);
  if (name == "MM.UNSUBSCRIBE") return unsubscribe(client, reply);
  for (const bound& b : bound_)
    if (b.spec->name == name) return run_route(client, b, args, reply);
  reply(error_reply("ERR", "unknown command '" + clipped(args[0]) +
                               "' (COMMAND DOCS lists this server's commands)"));
}

bool resp_commands::connection_command(resp_client& client, const std::string& name,
                                       std::vector<std::string>& args, const resp_reply& reply) {
  const std::size_t n = args.size();
  if (name == "PING") {
    if (n > 2) return reply(wrong_arguments(name, "[message]")), true;
    std::string out;
    if (n == 2)
      resp::bulk(out, args[1]);
    else
      resp::simple(out, "PONG");
    return reply(std::move(out)), true;
  }
  if (name == "ECHO") {
    if (n != 2) return reply(wrong_arguments(name, "message")), true;
    std::string out;
    resp::bulk(out, args[1]);
    return reply(std::move(out)), true;
  }
  if (name == "AUTH") {
    // AUTH token, or AUTH username token (the username is not checked: a
    // token names its identity).
    if (n != 2 && n != 3) return reply(wrong_arguments(name, "[username] token")), true;
    if (authenticate(client, args[n - 1], reply)) reply(ok());
    return true;
  }
  if (name == "QUIT") {
    client.quit = true;
    return reply(ok()), true;
  }
  if (name == "SELECT") {  // some clients select database 0 on connect
    if (n == 2 && args[1] == "0") return reply(ok()), true;
    return reply(error_reply("ERR", "this server has database 0 only")), true;
  }
  if (name == "HELLO") {
    int protocol = client.protocol;
    std::size_t i = 1;
    if (n > 1) {
      if (args[1] != "2" && args[1] != "3")
        return reply(error_reply("NOPROTO", "unsupported protocol version")), true;
      protocol = args[1][0] - '0';
      i = 2;
    }
    for (; i < n; ++i) {
      const std::string option = upper(args[i]);
      if (option == "AUTH" && i + 2 < n) {
        if (!authenticate(client, args[i + 2], reply)) return true;
        i += 2;
      } else if (option == "SETNAME" && i + 1 < n) {
        client.name = args[++i];
      } else {
        return reply(error_reply("ERR", "syntax error in HELLO option '" + clipped(args[i]) + "'")),
               true;
      }
    }
    if (!ctx_.config.tokens.empty() && !client.authenticated)
      return reply(error_reply("NOAUTH", "HELLO must be called with AUTH <username> <token>")),
             true;
    client.protocol = protocol;
    std::string out;
    resp::map(out, 7, protocol);
    resp::bulk(out, "server");
    resp::bulk(out, "matchmakerd");
    resp::bulk(out, "version");
    resp::bulk(out, "1.0.0");
    resp::bulk(out, "proto");
    resp::integer(out, protocol);
    resp::bulk(out, "id");
    resp::integer(out, static_cast<long long>(client.id));
    resp::bulk(out, "mode");
    resp::bulk(out, "standalone");
    resp::bulk(out, "role");
    resp::bulk(out, "master");
    resp::bulk(out, "modules");
    resp::array(out, 0);
    return reply(std::move(out)), true;
  }
  if (name == "CLIENT") {
    const std::string sub = n > 1 ? upper(args[1]) : std::string();
    if (sub == "SETNAME" && n == 3) {
      if (args[2].find_first_of(" \n\r") != std::string::npos || args[2].size() > 128)
        return reply(error_reply("ERR", "a client name is at most 128 bytes, without spaces")),
               true;
      client.name = args[2];
      return reply(ok()), true;
    }
    if (sub == "GETNAME") {
      std::string out;
      if (client.name.empty())
        resp::null(out, client.protocol);
      else
        resp::bulk(out, client.name);
      return reply(std::move(out)), true;
    }
    if (sub == "ID") {
      std::string out;
      resp::integer(out, static_cast<long long>(client.id));
      return reply(std::move(out)), true;
    }
    if (sub == "SETINFO") return reply(ok()), true;  // libraries name themselves on connect
    return reply(error_reply("ERR", "CLIENT takes SETNAME, GETNAME, ID or SETINFO")), true;
  }
  if (name == "COMMAND") {
    const std::string sub = n > 1 ? upper(args[1]) : std::string();
    const auto& table = resp_command_table();
    std::string out;
    if (sub == "COUNT") {
      resp::integer(out, static_cast<long long>(table.size()));
    } else if (sub == "DOCS") {
      std::vector<const resp_command_spec*> asked;
      for (const auto& spec : table) {
        bool wanted = n == 2;
        for (std::size_t i = 2; i < n; ++i) wanted |= upper(args[i]) == spec.name;
        if (wanted) asked.push_back(&spec);
      }
      resp::map(out, asked.size(), client.protocol);
      for (const auto* spec : asked) {
        resp::bulk(out, lower(spec->name));
        resp::map(out, 5, client.protocol);
        resp::bulk(out, "summary");
        resp::bulk(out, spec->summary);
        resp::bulk(out, "since");
        resp::bulk(out, "1.0.0");
        resp::bulk(out, "group");
        resp::bulk(out, "matchmaker");
        resp::bulk(out, "usage");
        resp::bulk(out, spec->name + (spec->usage.empty() ? "" : " " + spec->usage));
        resp::bulk(out, "http");
        resp::bulk(out, spec->method + " " + spec->pattern);
      }
    } else if (sub.empty() || sub == "LIST") {
      resp::array(out, table.size());
      for (const auto& spec : table) resp::bulk(out, lower(spec.name));
    } else {
      out = error_reply("ERR", "COMMAND takes DOCS, COUNT or LIST");
    }
    return reply(std::move(out)), true;
  }
  if (name == "MM.CALL") {
    // Any route of the API by its method and path: MM.CALL GET /api/cluster.
    if (n != 3 && n != 4) return reply(wrong_arguments(name, "method path [body-json]")), true;
    // The target as HTTP reads it: path and query percent-decoded.
    http_request target;
    parse_target(args[2], target);
    const std::string& path = target.path;
    const std::string method = upper(args[1]);
    const auto route = routes_->route_for(method, path);
    if (!route)
      return reply(error_reply("NOTFOUND",
                               "no such endpoint: " + clipped(method) + " " + clipped(path))),
             true;
    http_request req = request_of(client, method, path);
    req.params = std::move(target.params);
    if (n == 4) req.body = std::move(args[3]);
    run(std::move(req), *route, reply, client.protocol, encode_answer);
    return true;
  }
  return false;
}

void resp_commands::run_route(resp_client& client, const bound& b, std::vector<std::string>& args,
                              const resp_reply& reply) {
  const resp_command_spec& spec = *b.spec;
  std::size_t at = 1;
  const std::size_t n = args.size();
  if (n - 1 < b.captures) return reply(wrong_arguments(spec.name, spec.usage));
  std::string path;
  path.reserve(spec.pattern.size() + 32);
  for (const char ch : spec.pattern) {
    if (ch == '*')
      path += args[at++];
    else
      path += ch;
  }
  const std::size_t left = n - at;
  const bool has_body =
      spec.body == body_kind::required || (spec.body == body_kind::optional && left % 2 == 1);
  if ((has_body && left == 0) || (left - (has_body ? 1 : 0)) % 2 != 0)
    return reply(wrong_arguments(spec.name, spec.usage));
  http_request req = request_of(client, spec.method, std::move(path));
  if (has_body) req.body = std::move(args[at++]);
  for (; at + 1 < n; at += 2) {
    const std::string option = lower(args[at]);
    if (std::find(spec.options.begin(), spec.options.end(), option) == spec.options.end())
      return reply(error_reply("ERR", "unknown option '" + clipped(args[at]) + "' for " +
                                          spec.name + " (" + spec.name + " " + spec.usage + ")"));
    req.params.emplace(option, std::move(args[at + 1]));
  }
  run(std::move(req), b.route, reply, client.protocol, encode_answer);
}

void resp_commands::run(http_request req, std::size_t route, const resp_reply& reply, int protocol,
                        const encoder& encode) {
  if (auto refused = routes_->admit_at(route, req)) return reply(encode(*refused, protocol));
  const http_reply answer(std::make_shared<resp_sink>(reply, protocol, encode));
  const bool deferred = static_cast<bool>(routes_->at(route).start);
  if (deferred && req.body.size() <= inline_body_bytes) {
    routes_->start(req, answer);
    return;
  }
  boost::asio::post(*pool_, [this, req = std::move(req), answer, deferred]() mutable {
    const request_scope in_request(req.id);
    if (deferred)
      routes_->start(req, answer);
    else
      answer(routes_->handle(req));
  });
}

}  // namespace mm::server
