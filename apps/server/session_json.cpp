#include "session_json.hpp"

#include "mm/session/public_id.hpp"

namespace mm::server {

namespace {

using namespace mm::actors;

const json& object_of(const json& v, const std::string& where, std::size_t max_fields) {
  if (!v.is_object()) throw bad_request(where + " must be an object {name: value}");
  if (v.size() > max_fields)
    throw bad_request(where + " has " + std::to_string(v.size()) + " entries, at most " +
                      std::to_string(max_fields));
  for (const auto& [name, x] : v.items())
    if (name.empty() || name.size() > max_name_bytes)
      throw bad_request(where + ": a name must be 1 to " + std::to_string(max_name_bytes) +
                        " bytes");
  return v;
}

std::vector<named_number> read_rtts(const json& v, const std::string& where) {
  std::vector<named_number> out;
  for (const auto& [dc, ms] : object_of(v, where, max_rtt_entries).items()) {
    const double x = read_number(ms, where + "." + dc);
    if (x < 0) throw bad_request(where + "." + dc + " must be a number >= 0");
    out.push_back({dc, x});
  }
  return out;
}

void read_location(const json& v, const std::string& where, bool& has, double& lat, double& lon) {
  only_fields(v, {"latitude", "longitude"}, where);
  lat = read_number(required(v, "latitude", where), where + ".latitude");
  lon = read_number(required(v, "longitude", where), where + ".longitude");
  if (lat < -90 || lat > 90 || lon < -180 || lon > 180)
    throw bad_request(where + ": latitude within +-90 and longitude within +-180");
  has = true;
}

std::vector<std::string> read_texts(const json& v, const std::string& where, std::size_t max_items,
                                    std::size_t max_bytes) {
  if (!v.is_array()) throw bad_request(where + " must be a list of strings");
  if (v.size() > max_items)
    throw bad_request(where + " has " + std::to_string(v.size()) + " items, at most " +
                      std::to_string(max_items));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size(); ++i)
    out.push_back(read_text(v[i], where + "[" + std::to_string(i) + "]", max_bytes));
  return out;
}

}  // namespace

session_player read_player(const json& v, const std::string& where) {
  only_fields(v, {"id", "mmr", "numbers", "strings", "sets", "rtt_ms", "location"}, where);
  session_player p;
  p.id = read_id(required(v, "id", where), where + ".id");
  p.mmr = read_mmr(required(v, "mmr", where), where + ".mmr");
  if (v.contains("numbers"))
    for (const auto& [name, x] :
         object_of(v["numbers"], where + ".numbers", max_named_values).items())
      p.numbers.push_back({name, read_number(x, where + ".numbers." + name)});
  if (v.contains("strings"))
    for (const auto& [name, x] :
         object_of(v["strings"], where + ".strings", max_named_values).items())
      p.strings.push_back({name, read_text(x, where + ".strings." + name, max_text_bytes)});
  if (v.contains("sets"))
    for (const auto& [name, x] : object_of(v["sets"], where + ".sets", max_named_values).items())
      p.sets.push_back(
          {name, read_texts(x, where + ".sets." + name, max_set_items, max_name_bytes)});
  if (v.contains("rtt_ms")) p.rtt_ms = read_rtts(v["rtt_ms"], where + ".rtt_ms");
  if (v.contains("location"))
    read_location(v["location"], where + ".location", p.has_location, p.latitude, p.longitude);
  return p;
}

ticket_body read_ticket_body(const json& body) {
  only_fields(body, {"queue", "queues", "players", "give_up_after_ms", "replace_existing"},
              "the ticket");
  ticket_body out;
  if (body.contains("queues")) {
    if (body.contains("queue")) throw bad_request("queues: give either queue or queues, not both");
    out.ticket.queues_listed = true;
    const json& q = body["queues"];
    if (!q.is_array() || q.empty() || q.size() > max_ticket_queues)
      throw bad_request("queues must be a list of 1 to " + std::to_string(max_ticket_queues) +
                        " queue names");
    for (std::size_t i = 0; i < q.size(); ++i) {
      std::string name = read_text(q[i], "queues[" + std::to_string(i) + "]", max_name_bytes);
      if (i == 0)
        out.queue = std::move(name);
      else
        out.ticket.also_queues.push_back(std::move(name));
    }
  } else {
    out.queue = read_text(required(body, "queue", "the ticket"), "queue", max_name_bytes);
  }
  const json& players = required(body, "players", "the ticket");
  if (!players.is_array() || players.empty())
    throw bad_request("players must be a list of at least one player");
  if (players.size() > max_ticket_players)
    throw bad_request("players: a party of " + std::to_string(players.size()) +
                      " is more than the server takes (" + std::to_string(max_ticket_players) +
                      ")");
  for (std::size_t i = 0; i < players.size(); ++i)
    out.ticket.players.push_back(read_player(players[i], "players[" + std::to_string(i) + "]"));
  if (body.contains("give_up_after_ms")) {
    const json& g = body["give_up_after_ms"];
    if (!g.is_number_unsigned() || g.get<std::uint64_t>() == 0 ||
        g.get<std::uint64_t>() > static_cast<std::uint64_t>(max_give_up_after_ms))
      throw bad_request("give_up_after_ms must be an integer from 1 to " +
                        std::to_string(max_give_up_after_ms) + ", got " + describe(g));
    out.ticket.give_up_after_ms = g.get<std::int64_t>();
  }
  if (body.contains("replace_existing"))
    out.ticket.replace_existing = read_bool(body["replace_existing"], "replace_existing");
  return out;
}

json ticket_body_json(const std::vector<std::string>& queues, const session_ticket& t) {
  json players = json::array();
  for (const auto& p : t.players) {
    json j = {{"id", p.id}, {"mmr", p.mmr}};
    if (!p.numbers.empty()) {
      j["numbers"] = json::object();
      for (const auto& n : p.numbers) j["numbers"][n.name] = n.value;
    }
    if (!p.strings.empty()) {
      j["strings"] = json::object();
      for (const auto& n : p.strings) j["strings"][n.name] = n.value;
    }
    if (!p.sets.empty()) {
      j["sets"] = json::object();
      for (const auto& n : p.sets) j["sets"][n.name] = n.items;
    }
    if (!p.rtt_ms.empty()) {
      j["rtt_ms"] = json::object();
      for (const auto& n : p.rtt_ms) j["rtt_ms"][n.name] = n.value;
    }
    if (p.has_location) j["location"] = {{"latitude", p.latitude}, {"longitude", p.longitude}};
    players.push_back(std::move(j));
  }
  json body = {{"players", players}};
  if (queues.size() == 1)
    body["queue"] = queues[0];
  else
    body["queues"] = queues;
  if (t.give_up_after_ms > 0) body["give_up_after_ms"] = t.give_up_after_ms;
  return body;
}

json outcome_json(const ticket_outcome& o) {
  json j = {{"ticket", session::format_public_id(o.ticket)},
            {"queue", o.queue},
            {"state", session::to_string(o.state)}};
  if (o.seq != 0) j["seq"] = o.seq;
  if (o.state == session::ticket_state::matched) {
    const auto& m = o.match;
    json tickets = json::array();
    for (const auto t : m.tickets) tickets.push_back(session::format_public_id(t));
    j["match"] = {{"id", session::format_public_id(m.id)},
                  {"datacenter", m.datacenter.empty() ? json(nullptr) : json(m.datacenter)},
                  {"teams", m.teams},
                  {"tickets", tickets},
                  {"mmr_spread", m.mmr_spread},
                  {"worst_rtt_ms", m.worst_rtt_ms < 0 ? json(nullptr) : json(m.worst_rtt_ms)},
                  {"bot_match", m.bot_match}};
    if (!m.running_match.empty()) {
      // Placed into a running match: the id is its seats' reservation.
      j["match"]["running_match"] = m.running_match;
      j["match"]["server"] = m.server;
      j["match"]["reserved_for_ms"] = m.reserved_until_ms - m.formed_at_ms;
    }
  }
  if (o.to_game_server) j["to_game_server"] = true;
  return j;
}

namespace {

json histogram_json(const value_histogram& h) {
  const std::uint64_t n = h.count();
  return {{"bounds", h.bounds},
          {"counts", h.counts},
          {"count", n},
          {"sum", h.sum},
          {"mean", n == 0 ? json(nullptr) : json(h.sum / static_cast<double>(n))}};
}

}  // namespace

namespace {

// {"rule:skill": 12, "datacenter": 3, ...}: sampled tickets by main reason.
json wait_reasons_json(const session_queue_report& r) {
  json out = json::object();
  for (std::size_t i = 0; i < r.wait_reasons.size() && i < r.wait_reason_counts.size(); ++i)
    out[r.wait_reasons[i]] = r.wait_reason_counts[i];
  return out;
}

}  // namespace

json queue_report_json(const session_queue_report& r) {
  return {{"queue", r.queue},
          {"waiting", r.waiting},
          {"waiting_by_stage",
           {{"ideal", r.waiting_ideal},
            {"expand", r.waiting_expand},
            {"warm_body", r.waiting_warm_body}}},
          {"created", r.created},
          {"matched", r.matched},
          {"cancelled", r.cancelled},
          {"expired", r.expired},
          {"failed", r.failed},
          {"matches", r.matches},
          {"bot_matches", r.bot_matches},
          {"backfill",
           {{"running_matches", r.backfills},
            {"open_seats", r.open_seats},
            {"tickets_placed", r.backfilled},
            {"reservations",
             {{"made", r.placements},
              {"confirmed", r.reservations_confirmed},
              {"released", r.reservations_released},
              {"expired", r.reservations_expired}}}}},
          {"wait_reasons", wait_reasons_json(r)},
          {"players_matched", r.players_matched},
          {"wait_seconds", histogram_json(r.wait_seconds)},
          {"mmr_spread", histogram_json(r.mmr_spread)},
          {"worst_rtt_ms", histogram_json(r.worst_rtt_ms)},
          {"tick_ms", histogram_json(r.tick_ms)},
          {"last_tick_ms", r.last_tick_ms}};
}

json waiting_view_json(const waiting_ticket_view& v) {
  return {{"ticket", session::format_public_id(v.ticket)},
          {"players", v.players},
          {"mmr", v.mmr},
          {"waited_ms", v.waited_ms},
          {"gives_up_in_ms", v.gives_up_in_ms},
          {"stage", v.stage.empty() ? json(nullptr) : json(v.stage)}};
}

lobby_registration read_lobby_body(const json& body) {
  only_fields(body, {"id", "mode", "datacenter", "max_players", "players"}, "the lobby");
  lobby_registration l;
  l.id = read_url_id(required(body, "id", "the lobby"), "id", 128);
  l.mode = read_text(required(body, "mode", "the lobby"), "mode", 128);
  l.datacenter = read_text(required(body, "datacenter", "the lobby"), "datacenter", 128);
  l.max_players = read_u32(required(body, "max_players", "the lobby"), "max_players");
  if (body.contains("players")) l.players = read_u32(body["players"], "players");
  return l;
}

std::uint32_t read_lobby_players(const json& body) {
  only_fields(body, {"players"}, "the update");
  return read_u32(required(body, "players", "the update"), "players");
}

lobby_query read_lobby_query(const json& body) {
  only_fields(body, {"modes", "party_size", "region", "rtt_ms", "location", "prevent_auto_create"},
              "the search");
  lobby_query q;
  q.modes = read_texts(required(body, "modes", "the search"), "modes", 32, 128);
  if (body.contains("party_size")) q.party_size = read_u32(body["party_size"], "party_size");
  if (body.contains("region")) q.region = read_text(body["region"], "region", 128);
  if (body.contains("rtt_ms")) q.rtt_ms = read_rtts(body["rtt_ms"], "rtt_ms");
  if (body.contains("location"))
    read_location(body["location"], "location", q.has_location, q.latitude, q.longitude);
  if (body.contains("prevent_auto_create"))
    q.prevent_auto_create = read_bool(body["prevent_auto_create"], "prevent_auto_create");
  return q;
}

json placement_json(const lobby_placement& p) {
  return {{"lobby", p.lobby},
          {"datacenter", p.datacenter},
          {"created", p.created},
          {"players", p.players}};
}

json lobby_json(const lobby_registration& l) {
  return {{"id", l.id},
          {"mode", l.mode},
          {"datacenter", l.datacenter},
          {"max_players", l.max_players},
          {"players", l.players},
          {"created_by_find", l.created_by_find}};
}

json lobbies_report_json(const lobbies_report& r) {
  json by_dc = json::array();
  for (const auto& d : r.by_datacenter)
    by_dc.push_back({{"datacenter", d.datacenter},
                     {"lobbies", d.lobbies},
                     {"players", d.players},
                     {"seats", d.seats}});
  return {{"lobbies", r.lobbies}, {"players", r.players},  {"seats", r.seats},
          {"found", r.found},     {"created", r.created},  {"closed_idle", r.closed_idle},
          {"full", r.full},       {"by_datacenter", by_dc}};
}

}  // namespace mm::server
