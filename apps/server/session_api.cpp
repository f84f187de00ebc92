#include "session_api.hpp"

#include "backfill_json.hpp"
#include "batch_results.hpp"
#include "explain_json.hpp"
#include "mm/actors/errors.hpp"
#include "mm/actors/permissions.hpp"
#include "mm/actors/session_switch.hpp"
#include "mm/session/partitions.hpp"
#include "mm/session/public_id.hpp"
#include "session_json.hpp"

namespace mm::server {

namespace {

using namespace mm::actors;

// The sentence of a session error: the project's own, else CAF's rendering.
std::string error_text(caf::actor_system& sys, const caf::error& e) {
  if (error_code_of(e) && e.context().match_elements<std::string>())
    return e.context().get_as<std::string>(0);
  return sys.render(e);
}

// The status for a session error, from its code: the caller's fault is 4xx,
// a service that cannot serve (restarting, stopping, its database) 503.
int error_status(const caf::error& e) {
  const auto code = error_code_of(e);
  if (!code) return 503;  // CAF's own: a timeout, a receiver that is down
  switch (*code) {
    case errc::invalid_argument:
    case errc::invalid_config:
      return 400;
    case errc::not_found:
      return 404;
    case errc::conflict:
    case errc::no_available_lobby:
      return 409;
    case errc::limit_reached:
      return 429;
    case errc::forbidden:
      return 403;
    default:
      return 503;
  }
}

// A callback that answers the request with `to_json` of the answer (at
// `status`), or with the error. It runs on a CAF thread, or on the network
// thread for a ticket poll the service's books answer (session_bridge.hpp),
// and must not throw.
template <class T, class ToJson>
session_bridge::callback<T> answer(const http_reply& reply, caf::actor_system& sys, ToJson to_json,
                                   int status = 200) {
  return [reply, sys = &sys, to_json, status](caf::expected<T> x) {
    http_response res;
    try {
      if (!x) {
        const int code = error_status(x.error());
        send_error(res, code, error_text(*sys, x.error()));
        // A queue restarting, or queues moving between nodes: soon served again.
        if (code == 503) res.set_header("Retry-After", std::to_string(takeover_retry_after_s));
      } else
        send_json(res, to_json(*x), status);
    } catch (const std::exception& e) {
      send_error(res, 500, std::string("internal error: ") + e.what());
    }
    reply(std::move(res));
  };
}

// A list over the partitions this node runs: with partitions, a node that
// runs none of them now lists nothing (the others list theirs) rather than
// answering that it does not serve the sessions.
template <class T, class ToJson>
session_bridge::callback<T> answer_list(const http_context& ctx, const http_reply& reply,
                                        ToJson to_json) {
  auto done = answer<T>(reply, ctx.sessions.system(), to_json);
  if (ctx.config.sessions.partitions <= 1) return done;
  return [done, to_json, reply](caf::expected<T> x) {
    if (!x && error_code_of(x.error()) == errc::not_owned_here) {
      http_response res;
      send_json(res, to_json(T{}));
      return reply(std::move(res));
    }
    done(std::move(x));
  };
}

// With the queues in partitions on a node of a cluster, a request goes to
// the node that serves its partition, as the session routes go to the
// holder of their one lease without partitions: true when it was answered
// here (307 to that node, or 503 while the partition is taken over).
bool sent_elsewhere(const http_context& ctx, const http_request& req, const http_reply& reply,
                    std::uint32_t partition) {
  const std::uint32_t count = ctx.config.sessions.partitions;
  if (count <= 1) return false;
  auto res = served_elsewhere(ctx, req, session::partition_resource(partition, count));
  if (!res) return false;
  reply(std::move(*res));
  return true;
}

std::uint32_t partition_of_queue(const http_context& ctx, std::string_view queue) {
  const auto* parts = ctx.sessions.partitions();
  return parts ? parts->of_queue(queue) : 0;
}

std::uint32_t partition_of_id(const http_context& ctx, std::uint64_t id) {
  const auto* parts = ctx.sessions.partitions();
  return parts ? parts->of_id(id) : 0;
}

// A running match named by its id alone, with partitions: the partition
// whose service holds the id's claim in the store (player_store::
// claim_match); none when no partition holds it (then the partitions here
// answer, 404). Without partitions: none, the one service answers.
std::optional<std::uint32_t> partition_of_match(http_context& ctx, const std::string& id) {
  const std::uint32_t count = ctx.config.sessions.partitions;
  if (count <= 1) return std::nullopt;
  const std::string stream = session_service_name(ctx.config);
  std::optional<std::string> holder;
  {
    std::lock_guard lock(ctx.read_db_mutex);
    holder = ctx.read_db.match_holder(stream, id);
  }
  return holder ? session::service_partition(*holder, stream, count) : std::nullopt;
}

// True when a request for the running match `id` was answered here: with
// partitions, 307 to the node whose partition holds it, 503 while that one
// is taken over, or 404 when no partition holds it.
bool match_sent_elsewhere(http_context& ctx, const http_request& req, const http_reply& reply,
                          const std::string& id) {
  if (ctx.config.sessions.partitions <= 1) return false;
  if (const auto p = partition_of_match(ctx, id)) return sent_elsewhere(ctx, req, reply, *p);
  http_response res;
  send_error(res, 404, "match_id: no running match '" + clipped(id) + "'");
  reply(std::move(res));
  return true;
}

// The ticket id of the path, or nothing when it is not one the server could
// have issued (16 hex digits): answered 404 like an id it never issued.
std::optional<std::uint64_t> ticket_in_path(const http_request& req) {
  return session::parse_public_id(std::string(req.matches[1]));
}

void no_such_ticket(const http_reply& reply, const std::string& text) {
  http_response res;
  send_error(res, 404, "ticket: no ticket '" + clipped(text) + "'");
  reply(std::move(res));
}

// Whose running matches and lobbies a caller may read and change: an
// admin's, every one's (""); another's, its own credential's.
std::string acting_as(const http_context& ctx, const http_request& req) {
  return caller_role(ctx.access, req) == role::admin ? std::string()
                                                     : caller_credential(ctx.access, req);
}

// The candidates an explanation judges: ?limit=, 1 to 10000, 1000 by default.
std::uint32_t explain_limit(const http_request& req) {
  const auto limit = param(req, "limit", 1000, actors::max_explain_candidates);
  if (limit == 0) throw bad_request("parameter 'limit' must be at least 1");
  return static_cast<std::uint32_t>(limit);
}

// Each route is one named function: read and check the request, ask the
// session bridge, answer through the reply. The owner is the caller's
// identity (caller_credential), as at every door.

// Backfill (docs/session.md, "Backfill"): a game server registers its
// running match, changes it, confirms or releases the seats of its
// placements, and stops it. The match belongs to the credential that
// registered it (another's is a 404); an admin reads and changes every one.
void register_backfill(http_context& ctx, const http_request& req, const http_reply& reply) {
  backfill_registration r = read_backfill_body(parse_body(req.body), false);
  r.credential = caller_credential(ctx.access, req);
  if (sent_elsewhere(ctx, req, reply, partition_of_queue(ctx, r.queue))) return;
  ctx.sessions.ask<backfill_state>(
      answer<backfill_state>(reply, ctx.sessions.system(), backfill_json, 201),
      backfill_atom::value, create_atom::value, r);
}

void list_backfills(http_context& ctx, const http_request& req, const http_reply& reply) {
  const std::string queue = req.has_param("queue") ? req.param("queue") : std::string();
  const auto offset = param(req, "offset", 0, 1'000'000);
  const auto limit = param(req, "limit", 100, 1000);
  ctx.sessions.ask<std::vector<backfill_state>>(
      answer_list<std::vector<backfill_state>>(
          ctx, reply,
          [offset, limit](const std::vector<backfill_state>& all) {
            json list = json::array();
            for (auto i = offset; i < all.size() && i < offset + limit; ++i)
              list.push_back(backfill_json(all[i]));
            return json{
                {"total", all.size()}, {"offset", offset}, {"limit", limit}, {"backfills", list}};
          }),
      backfill_atom::value, inspect_atom::value, queue, acting_as(ctx, req));
}

void get_backfill(http_context& ctx, const http_request& req, const http_reply& reply) {
  if (match_sent_elsewhere(ctx, req, reply, req.matches[1])) return;
  ctx.sessions.ask<backfill_state>(
      answer<backfill_state>(reply, ctx.sessions.system(), backfill_json), backfill_atom::value,
      status_atom::value, std::string(req.matches[1]), acting_as(ctx, req));
}

void update_backfill(http_context& ctx, const http_request& req, const http_reply& reply) {
  backfill_registration r = read_backfill_body(parse_body(req.body), true);
  r.match_id = req.matches[1];
  r.credential = acting_as(ctx, req);
  if (match_sent_elsewhere(ctx, req, reply, r.match_id)) return;
  ctx.sessions.ask<backfill_state>(
      answer<backfill_state>(reply, ctx.sessions.system(), backfill_json), backfill_atom::value,
      update_atom::value, r);
}

void stop_backfill(http_context& ctx, const http_request& req, const http_reply& reply) {
  const std::string id = req.matches[1];
  if (match_sent_elsewhere(ctx, req, reply, id)) return;
  ctx.sessions.ask<bool>(answer<bool>(reply, ctx.sessions.system(),
                                      [id](bool stopped) {
                                        return json{{"match_id", id}, {"stopped", stopped}};
                                      }),
                         backfill_atom::value, close_atom::value, id, acting_as(ctx, req));
}

void explain_backfill(http_context& ctx, const http_request& req, const http_reply& reply) {
  const std::string id = req.matches[1];
  if (match_sent_elsewhere(ctx, req, reply, id)) return;
  ctx.sessions.ask<session::explanation>(
      answer<session::explanation>(reply, ctx.sessions.system(),
                                   [id](const session::explanation& e) {
                                     json out = explanation_json(e);
                                     out["match_id"] = id;
                                     out["open_seats"] = e.players;
                                     return out;
                                   }),
      backfill_atom::value, explain_atom::value, id, explain_limit(req), acting_as(ctx, req));
}

// A placement's seats: its players came (confirm) or not (release).
void change_seats(http_context& ctx, const http_request& req, const http_reply& reply,
                  bool joined) {
  seat_change c;
  c.match_id = req.matches[1];
  const auto id = session::parse_public_id(std::string(req.matches[2]));
  if (!id) {
    http_response res;
    send_error(res, 404, "reservation: no reservation '" + clipped(req.matches[2]) + "'");
    return reply(std::move(res));
  }
  c.reservation = *id;
  if (sent_elsewhere(ctx, req, reply, partition_of_id(ctx, *id))) return;
  c.players = read_seat_players(parse_body(req.body.empty() ? "{}" : req.body));
  c.credential = acting_as(ctx, req);
  auto done = answer<backfill_state>(reply, ctx.sessions.system(), backfill_json);
  if (joined)
    ctx.sessions.ask<backfill_state>(std::move(done), backfill_atom::value, confirm_atom::value, c);
  else
    ctx.sessions.ask<backfill_state>(std::move(done), backfill_atom::value, release_atom::value, c);
}

void confirm_seats(http_context& ctx, const http_request& req, const http_reply& reply) {
  change_seats(ctx, req, reply, true);
}

void release_seats(http_context& ctx, const http_request& req, const http_reply& reply) {
  change_seats(ctx, req, reply, false);
}

// A new ticket's answer: its id, its queue (and its queues when several).
json ticket_created(std::uint64_t id, const json& queues) {
  json out = {
      {"ticket", session::format_public_id(id)}, {"queue", queues[0]}, {"state", "waiting"}};
  if (queues.size() > 1) out["queues"] = queues;
  return out;
}

json queues_of(const ticket_body& t) {
  json queues = json::array({t.queue});
  for (const auto& q : t.ticket.also_queues) queues.push_back(q);
  return queues;
}

// POST /api/tickets with {"tickets": [...]}: every ticket is read before any
// is sent (a bad one refuses the whole request, naming it), then each is
// created as it would be alone, sent to the service in the order listed (so
// of two tickets for one player the later is refused, 409, unless it has
// replace_existing); the results in that order once the last is in. A ticket
// whose queue another node serves is not created: its result is the 307
// (with `location`) or 503 it would have had alone. At most
// max_batch_tickets, and the body within http.max_body_bytes.
void create_tickets(http_context& ctx, const http_request& req, const json& body,
                    const http_reply& reply) {
  std::vector<ticket_body> tickets = read_batch(body, "tickets", "ticket", max_batch_tickets,
                                                [](const json& t) { return read_ticket_body(t); });
  const std::string credential = caller_credential(ctx.access, req);
  const bool partitioned = ctx.config.sessions.partitions > 1;
  auto all = batch_results::make(tickets.size(), reply);
  caf::actor_system* sys = &ctx.sessions.system();
  for (std::size_t i = 0; i < tickets.size(); ++i) {
    ticket_body& t = tickets[i];
    if (partitioned)
      if (auto elsewhere =
              served_elsewhere(ctx, req,
                               session::partition_resource(partition_of_queue(ctx, t.queue),
                                                           ctx.config.sessions.partitions))) {
        json item = json::parse(elsewhere->body, nullptr, false);
        if (!item.is_object()) item = json::object();
        item["status"] = elsewhere->status;
        for (const auto& [name, value] : elsewhere->headers)
          if (name == "Location") item["location"] = value;
        all->settle(i, std::move(item));
        continue;
      }
    t.ticket.credential = credential;
    json queues = queues_of(t);
    ctx.sessions.create(std::move(t.queue), std::move(t.ticket),
                        [all, i, queues, sys](caf::expected<std::uint64_t> x) {
                          if (x) return all->settle(i, ticket_created(*x, queues));
                          all->refuse(i, error_status(x.error()), error_text(*sys, x.error()));
                        });
  }
}

void create_ticket(http_context& ctx, const http_request& req, const http_reply& reply) {
  const json body = parse_body(req.body);
  if (body.is_object() && body.contains("tickets")) return create_tickets(ctx, req, body, reply);
  ticket_body t = read_ticket_body(body);
  t.ticket.credential = caller_credential(ctx.access, req);
  if (sent_elsewhere(ctx, req, reply, partition_of_queue(ctx, t.queue))) return;
  json queues = queues_of(t);
  ctx.sessions.create(std::move(t.queue), std::move(t.ticket),
                      answer<std::uint64_t>(
                          reply, ctx.sessions.system(),
                          [queues](std::uint64_t id) { return ticket_created(id, queues); }, 201));
}

// A ticket the caller did not create is answered as one that does not exist.
void get_ticket(http_context& ctx, const http_request& req, const http_reply& reply) {
  const auto id = ticket_in_path(req);
  if (!id) return no_such_ticket(reply, req.matches[1]);
  if (sent_elsewhere(ctx, req, reply, partition_of_id(ctx, *id))) return;
  const auto wait = param(req, "wait", 0, max_ticket_wait_seconds);
  std::optional<std::string> credential;  // an admin's: any
  if (caller_role(ctx.access, req) != role::admin) credential = caller_credential(ctx.access, req);
  ctx.sessions.status(*id, std::chrono::seconds(wait), credential,
                      answer<ticket_outcome>(reply, ctx.sessions.system(), outcome_json));
}

// Why a waiting ticket waits, in each of its queues (docs/session.md, "Why
// is my ticket waiting?"): another's ticket is answered as one that does
// not exist, and other credentials' candidates come without their ids.
void explain_ticket(http_context& ctx, const http_request& req, const http_reply& reply) {
  const auto id = ticket_in_path(req);
  if (!id) return no_such_ticket(reply, req.matches[1]);
  if (sent_elsewhere(ctx, req, reply, partition_of_id(ctx, *id))) return;
  const auto limit = explain_limit(req);
  ctx.sessions.ask<std::vector<session::explanation>>(
      answer<std::vector<session::explanation>>(
          reply, ctx.sessions.system(),
          [id = *id](const std::vector<session::explanation>& all) {
            json queues = json::array();
            for (const auto& e : all) queues.push_back(explanation_json(e));
            return json{{"ticket", session::format_public_id(id)},
                        {"state", "waiting"},
                        {"queues", queues}};
          }),
      explain_atom::value, *id, limit, acting_as(ctx, req));
}

void cancel_ticket(http_context& ctx, const http_request& req, const http_reply& reply) {
  const auto id = ticket_in_path(req);
  if (!id) return no_such_ticket(reply, req.matches[1]);
  if (sent_elsewhere(ctx, req, reply, partition_of_id(ctx, *id))) return;
  auto done = answer<bool>(reply, ctx.sessions.system(), [id = *id](bool cancelled) {
    return json{{"ticket", session::format_public_id(id)}, {"cancelled", cancelled}};
  });
  if (caller_role(ctx.access, req) == role::admin)
    ctx.sessions.ask<bool>(std::move(done), cancel_atom::value, *id);
  else
    ctx.sessions.ask<bool>(std::move(done), cancel_atom::value, *id,
                           caller_credential(ctx.access, req));
}

void list_queues(http_context& ctx, const http_request&, const http_reply& reply) {
  ctx.sessions.ask<std::vector<session_queue_report>>(
      answer_list<std::vector<session_queue_report>>(ctx, reply,
                                                     [](const auto& reports) {
                                                       json list = json::array();
                                                       for (const auto& r : reports)
                                                         list.push_back(queue_report_json(r));
                                                       return json{{"queues", list}};
                                                     }),
      info_atom::value);
}

// One queue: its report, then a page of its waiting tickets, oldest first.
// A ticket's id and players are shown to an admin and to the credential
// that created it; to others, null.
void get_queue(http_context& ctx, const http_request& req, const http_reply& reply) {
  session_bridge& bridge = ctx.sessions;
  caf::actor_system& sys = bridge.system();
  const std::string name = req.matches[1];
  if (sent_elsewhere(ctx, req, reply, partition_of_queue(ctx, name))) return;
  const auto offset = static_cast<std::uint32_t>(param(req, "offset", 0, 1'000'000'000));
  const auto limit = static_cast<std::uint32_t>(param(req, "limit", 100, 1000));
  const bool admin = caller_role(ctx.access, req) == role::admin;
  const std::string credential = caller_credential(ctx.access, req);
  bridge.ask<std::vector<waiting_ticket_view>>(
      [&bridge, &sys, reply, name, offset, limit, admin,
       credential](caf::expected<std::vector<waiting_ticket_view>> page) {
        if (!page) {
          answer<bool>(reply, sys, [](bool) { return json(); })(page.error());
          return;
        }
        json tickets = json::array();
        for (const auto& v : *page) {
          json t = waiting_view_json(v);
          if (!admin && v.credential != credential) t["ticket"] = t["players"] = nullptr;
          tickets.push_back(std::move(t));
        }
        bridge.ask<std::vector<session_queue_report>>(
            answer<std::vector<session_queue_report>>(
                reply, sys,
                [name, offset, limit, tickets](const auto& reports) {
                  json out = {{"offset", offset}, {"limit", limit}, {"waiting_tickets", tickets}};
                  for (const auto& r : reports)
                    if (r.queue == name) out["queue"] = queue_report_json(r);
                  return out;
                }),
            info_atom::value);
      },
      inspect_atom::value, name, offset, limit);
}

void list_lobbies(http_context& ctx, const http_request& req, const http_reply& reply) {
  if (sent_elsewhere(ctx, req, reply, 0)) return;  // the lobbies run in partition 0
  session_bridge& bridge = ctx.sessions;
  caf::actor_system& sys = bridge.system();
  const auto limit = param(req, "limit", 1000, 10'000);
  bridge.ask<lobbies_report>(
      [&bridge, &sys, reply, limit](caf::expected<lobbies_report> report) {
        if (!report) {
          answer<bool>(reply, sys, [](bool) { return json(); })(report.error());
          return;
        }
        bridge.ask<std::vector<lobby_registration>>(
            answer<std::vector<lobby_registration>>(reply, sys,
                                                    [r = *report, limit](const auto& all) {
                                                      json list = json::array();
                                                      for (const auto& l : all) {
                                                        if (list.size() == limit) break;
                                                        list.push_back(lobby_json(l));
                                                      }
                                                      json out = lobbies_report_json(r);
                                                      out["list"] = list;
                                                      return out;
                                                    }),
            lobby_atom::value, inspect_atom::value);
      },
      lobby_atom::value, info_atom::value);
}

void find_lobby(http_context& ctx, const http_request& req, const http_reply& reply) {
  if (sent_elsewhere(ctx, req, reply, 0)) return;  // the lobbies run in partition 0
  lobby_query q = read_lobby_query(parse_body(req.body));
  q.credential = caller_credential(ctx.access, req);
  ctx.sessions.ask<lobby_placement>(
      answer<lobby_placement>(reply, ctx.sessions.system(), placement_json), lobby_atom::value,
      find_atom::value, q);
}

void create_lobby(http_context& ctx, const http_request& req, const http_reply& reply) {
  if (sent_elsewhere(ctx, req, reply, 0)) return;  // the lobbies run in partition 0
  lobby_registration l = read_lobby_body(parse_body(req.body));
  l.credential = caller_credential(ctx.access, req);
  ctx.sessions.ask<bool>(
      answer<bool>(
          reply, ctx.sessions.system(), [l](bool) { return lobby_json(l); }, 201),
      lobby_atom::value, create_atom::value, l);
}

void update_lobby(http_context& ctx, const http_request& req, const http_reply& reply) {
  if (sent_elsewhere(ctx, req, reply, 0)) return;  // the lobbies run in partition 0
  const std::string id = req.matches[1];
  const std::uint32_t players = read_lobby_players(parse_body(req.body));
  ctx.sessions.ask<bool>(answer<bool>(
                             reply, ctx.sessions.system(),
                             [id, players](bool) {
                               return json{{"id", id}, {"players", players}};
                             },
                             200),
                         lobby_atom::value, update_atom::value, id, players, acting_as(ctx, req));
}

void close_lobby(http_context& ctx, const http_request& req, const http_reply& reply) {
  if (sent_elsewhere(ctx, req, reply, 0)) return;  // the lobbies run in partition 0
  const std::string id = req.matches[1];
  ctx.sessions.ask<bool>(
      [reply, id](caf::expected<bool> closed) {
        http_response res;
        if (closed && *closed)
          send_json(res, {{"id", id}, {"closed", true}});
        else if (closed)
          send_error(res, 404, "id: no lobby '" + id.substr(0, 128) + "'");
        else
          send_error(res, 503, "the lobbies did not answer");
        reply(std::move(res));
      },
      lobby_atom::value, close_atom::value, id, acting_as(ctx, req));
}

// The table (route_row): method, path, the role of its operation
// (permissions.hpp), function. Each answers later through the reply.
const route_row session_routes[] = {
    {"POST", "/api/backfills", needed(operation::backfill_write), nullptr, register_backfill},
    {"GET", "/api/backfills", needed(operation::backfill_read), nullptr, list_backfills},
    {"GET", "/api/backfills/*", needed(operation::backfill_read), nullptr, get_backfill},
    {"PUT", "/api/backfills/*", needed(operation::backfill_write), nullptr, update_backfill},
    {"DELETE", "/api/backfills/*", needed(operation::backfill_write), nullptr, stop_backfill},
    {"GET", "/api/backfills/*/explain", needed(operation::backfill_read), nullptr,
     explain_backfill},
    {"POST", "/api/backfills/*/reservations/*/confirm", needed(operation::backfill_write), nullptr,
     confirm_seats},
    {"POST", "/api/backfills/*/reservations/*/release", needed(operation::backfill_write), nullptr,
     release_seats},
    {"POST", "/api/tickets", needed(operation::ticket_create), nullptr, create_ticket},
    {"GET", "/api/tickets/*", needed(operation::ticket_read), nullptr, get_ticket},
    {"GET", "/api/tickets/*/explain", needed(operation::ticket_read), nullptr, explain_ticket},
    {"DELETE", "/api/tickets/*", needed(operation::ticket_cancel), nullptr, cancel_ticket},
    {"GET", "/api/queues", needed(operation::queue_read), nullptr, list_queues},
    {"GET", "/api/queues/*", needed(operation::queue_read), nullptr, get_queue},
    {"GET", "/api/lobbies", needed(operation::lobby_read), nullptr, list_lobbies},
    {"POST", "/api/lobbies/find", needed(operation::lobby_find), nullptr, find_lobby},
    {"POST", "/api/lobbies", needed(operation::lobby_write), nullptr, create_lobby},
    {"PUT", "/api/lobbies/*", needed(operation::lobby_write), nullptr, update_lobby},
    {"DELETE", "/api/lobbies/*", needed(operation::lobby_write), nullptr, close_lobby},
};

}  // namespace

void add_session_routes(api_routes& api, http_context&) {
  api.add_rows(session_routes);
}

}  // namespace mm::server
