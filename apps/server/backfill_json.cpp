#include "backfill_json.hpp"

#include "mm/session/public_id.hpp"
#include "session_json.hpp"

namespace mm::server {

using namespace mm::actors;

backfill_registration read_backfill_body(const json& body, bool update) {
  if (update)
    only_fields(body, {"teams", "datacenter", "priority", "server"}, "the running match");
  else
    only_fields(body, {"queue", "match_id", "teams", "datacenter", "priority", "server"},
                "the running match");
  backfill_registration r;
  if (!update) {
    r.queue = read_text(required(body, "queue", "the running match"), "queue", 64);
    r.match_id = read_url_id(required(body, "match_id", "the running match"), "match_id",
                             max_match_id_bytes);
  }
  const json& teams = required(body, "teams", "the running match");
  if (!teams.is_array() || teams.empty() || teams.size() > max_backfill_teams)
    throw bad_request("teams must be a list of 1 to " + std::to_string(max_backfill_teams) +
                      " lists of players, got " + describe(teams));
  std::size_t players = 0;
  for (std::size_t t = 0; t < teams.size(); ++t) {
    const std::string where = "teams[" + std::to_string(t) + "]";
    if (!teams[t].is_array()) throw bad_request(where + " must be a list of players");
    players += teams[t].size();
    if (players > max_backfill_players)
      throw bad_request("teams: at most " + std::to_string(max_backfill_players) + " players");
    std::vector<session_player> team;
    for (std::size_t i = 0; i < teams[t].size(); ++i)
      team.push_back(read_player(teams[t][i], where + "[" + std::to_string(i) + "]"));
    r.teams.push_back(std::move(team));
  }
  if (body.contains("datacenter")) r.datacenter = read_text(body["datacenter"], "datacenter", 128);
  if (body.contains("server")) r.server = read_text(body["server"], "server", max_server_bytes);
  if (body.contains("priority")) {
    const json& p = body["priority"];
    if (!p.is_number_integer() || p.get<std::int64_t>() < -1000 || p.get<std::int64_t>() > 1000)
      throw bad_request("priority must be an integer from -1000 to 1000, got " + describe(p));
    r.priority = static_cast<std::int32_t>(p.get<std::int64_t>());
  }
  return r;
}

std::vector<player_id> read_seat_players(const json& body) {
  only_fields(body, {"players"}, "the seats");
  std::vector<player_id> out;
  if (!body.contains("players")) return out;
  const json& list = body["players"];
  if (list.is_array() && list.empty())  // an empty list would mean all of them
    throw bad_request(
        "players must name at least one player; leave it out for all of the "
        "reservation's");
  if (!list.is_array() || list.size() > max_backfill_players)
    throw bad_request("players must be a list of at most " + std::to_string(max_backfill_players) +
                      " player ids, got " + describe(list));
  for (std::size_t i = 0; i < list.size(); ++i)
    out.push_back(read_id(list[i], "players[" + std::to_string(i) + "]"));
  return out;
}

json backfill_json(const backfill_state& b) {
  const auto& r = b.registration;
  json teams = json::array();
  std::uint32_t open = 0;
  for (std::size_t t = 0; t < b.open.size(); ++t) {
    json players = json::array();
    for (const auto& p : r.teams.at(t)) players.push_back(p.id);
    for (std::size_t i = 0; i < b.joined.players.size(); ++i)
      if (b.joined.team_of[i] == t) players.push_back(b.joined.players[i]);
    teams.push_back({{"players", players},
                     {"players_in", b.players_in[t]},
                     {"reserved", b.reserved[t]},
                     {"open", b.open[t]}});
    open += b.open[t];
  }
  json reservations = json::array();
  for (const auto& h : b.reservations) {
    json tickets = json::array();
    for (const auto t : h.tickets) tickets.push_back(session::format_public_id(t));
    reservations.push_back({{"id", session::format_public_id(h.id)},
                            {"tickets", tickets},
                            {"players", h.players},
                            {"teams", h.team_of},
                            {"expires_in_ms", std::max<std::int64_t>(0, h.expires_ms - b.now_ms)}});
  }
  return {{"match_id", r.match_id},
          {"queue", r.queue},
          {"datacenter", r.datacenter.empty() ? json(nullptr) : json(r.datacenter)},
          {"server", r.server},
          {"priority", r.priority},
          {"backfilling_for_ms", std::max<std::int64_t>(0, b.now_ms - b.registered_ms)},
          {"open_seats", open},
          {"teams", teams},
          {"reservations", reservations}};
}

}  // namespace mm::server
