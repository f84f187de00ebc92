// mmctl's session commands: tickets, queues, lobbies and backfill, each a
// thin mapping of flags onto one HTTP route (docs/operations.md, "HTTP API").
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>

#include "mmctl_client.hpp"

namespace mmctl {

const char* const session_usage =
    "Sessions:\n"
    "  ticket create QUEUE --player ID:MMR [--player ID:MMR ...] [--rtt DC=MS ...]\n"
    "         [--location LAT,LON] [--give-up-after MS]\n"
    "                                        a ticket for the party (role test); --rtt and\n"
    "                                        --location apply to every player\n"
    "  ticket get ID [--wait SECONDS]        its state; --wait long-polls until it leaves\n"
    "  ticket explain ID [--limit N]         why it still waits: its stage, its rules, and\n"
    "                                        which rule refused each of the N nearest tickets\n"
    "  ticket cancel ID                      cancel a waiting ticket (role test)\n"
    "  ticket watch [ID] [--after SEQ] [--queues A,B] [--count N]\n"
    "                                        the ticket events as they are written (a\n"
    "                                        WebSocket), one JSON line each: the token's own\n"
    "                                        tickets (an admin's: all); with ID, that ticket's\n"
    "                                        until it leaves; --after resumes from a sequence\n"
    "  queues [QUEUE]                        every queue's counts, or one queue's with its\n"
    "                                        oldest waiting tickets\n"
    "  lobby find --mode M [--mode M ...] [--party N] [--region R] [--rtt DC=MS ...]\n"
    "         [--location LAT,LON] [--no-create yes]\n"
    "                                        a running lobby for the party (role test)\n"
    "  lobby list                            the running lobbies\n"
    "  backfill register QUEUE MATCH --team ID:MMR[,ID:MMR...] [--team ...] [--rtt DC=MS ...]\n"
    "         [--datacenter DC] [--server ADDR] [--priority N]\n"
    "                                        a running match asks for players (role test);\n"
    "                                        one --team per team, in order ('' for an empty\n"
    "                                        one); --rtt applies to every player; --datacenter\n"
    "                                        is needed when the queue has datacenters\n"
    "  backfill update MATCH --team ... [--datacenter DC] [--server ADDR] [--priority N]\n"
    "                                        the players in it now (role test)\n"
    "  backfill list [--queue Q] | backfill get MATCH\n"
    "                                        running matches with their open seats and\n"
    "                                        reservations (the token's own; an admin's: all)\n"
    "  backfill explain MATCH [--limit N]    why its open seats wait, as ticket explain\n"
    "  backfill stop MATCH                   the match ends: stop backfilling it (role test)\n"
    "  backfill confirm|release MATCH RESERVATION [--players ID,ID,...]\n"
    "                                        the reserved players joined, or will not come\n"
    "                                        (all of them without --players) (role test)\n"
    "\n";

namespace {

// --rtt DC=MS ... as {"DC": MS}.
json rtts_of(const flags& f) {
  json out = json::object();
  for (const auto& [k, v] : f.named) {
    if (k != "rtt") continue;
    const auto eq = v.find('=');
    if (eq == std::string::npos) throw usage_error("--rtt expects DC=MS, got '" + v + "'");
    out[v.substr(0, eq)] = number_of("--rtt", v.substr(eq + 1));
  }
  return out;
}

// --location LAT,LON as {"latitude", "longitude"}, or null.
json location_of(const flags& f) {
  if (!f.has("location")) return nullptr;
  const std::string v = f.one("location");
  const auto comma = v.find(',');
  if (comma == std::string::npos) throw usage_error("--location expects LAT,LON");
  return {{"latitude", number_of("--location", v.substr(0, comma))},
          {"longitude", number_of("--location", v.substr(comma + 1))}};
}

json ticket_body(const flags& f) {
  if (f.positional.size() != 2) throw usage_error("ticket create needs a QUEUE");
  json players = json::array();
  const json rtts = rtts_of(f);
  const json location = location_of(f);
  for (const auto& [k, v] : f.named) {
    if (k != "player") continue;
    const auto colon = v.find(':');
    if (colon == std::string::npos) throw usage_error("--player expects ID:MMR, got '" + v + "'");
    json p = {{"id", number_arg("--player", v.substr(0, colon))},
              {"mmr", number_of("--player", v.substr(colon + 1))}};
    if (!rtts.empty()) p["rtt_ms"] = rtts;
    if (!location.is_null()) p["location"] = location;
    players.push_back(std::move(p));
  }
  if (players.empty()) throw usage_error("ticket create needs at least one --player ID:MMR");
  json b = {{"queue", f.positional[1]}, {"players", players}};
  if (f.has("give-up-after"))
    b["give_up_after_ms"] = number_arg("--give-up-after", f.one("give-up-after"));
  return b;
}

json lobby_query(const flags& f) {
  json modes = json::array();
  for (const auto& [k, v] : f.named)
    if (k == "mode") modes.push_back(v);
  if (modes.empty()) throw usage_error("lobby find needs at least one --mode");
  json b = {{"modes", modes}};
  if (f.has("party")) b["party_size"] = number_arg("--party", f.one("party"));
  if (f.has("region")) b["region"] = f.one("region");
  if (const json r = rtts_of(f); !r.empty()) b["rtt_ms"] = r;
  if (const json l = location_of(f); !l.is_null()) b["location"] = l;
  if (f.has("no-create")) b["prevent_auto_create"] = f.one("no-create") != "no";
  return b;
}

// Prints the events of the WebSocket, one JSON line each, until the ticket
// `only` leaves (when given), `count` events were printed, or the server
// closes the connection.
int watch_events(const mm::client::event_connect& c, const std::string& only, std::uint64_t count) {
  mm::client::event_client events(c);
  std::uint64_t printed = 0;
  for (;;) {
    const auto text = events.next(std::chrono::seconds(1));
    if (!text) {
      if (const auto why = events.closed()) {
        std::fprintf(stderr, "mmctl: the server closed the events (%u: %s)\n", why->first,
                     why->second.c_str());
        return why->first == 1000 ? 0 : 1;
      }
      continue;
    }
    const json m = json::parse(*text, nullptr, false);
    if (m.is_discarded() || !m.is_object()) continue;
    const std::string type = m.value("type", "");
    if (type == "gap") std::fprintf(stderr, "mmctl: %s\n", m.dump().c_str());
    if (type != "event") continue;
    if (!only.empty() && m.value("ticket", "") != only) continue;
    std::printf("%s\n", m.dump().c_str());
    std::fflush(stdout);
    if (++printed == count) return 0;
    if (!only.empty() && m.value("state", "") != "waiting") return 0;
  }
}

std::string limit_query(const flags& f) {
  return f.has("limit") ? "?limit=" + std::to_string(number_arg("--limit", f.one("limit"))) : "";
}

// A number as people write it: 50, 1512.5.
std::string number_text(const json& v) {
  std::ostringstream out;
  out << v.get<double>();
  return out.str();
}

// An explanation in words, on stderr (the JSON stays on stdout):
//   coop: 3 players of other tickets could play with it at paris; ...
//     stage ideal (50 ms) for 6 s more; rule skill: 100, grows in 6 s
//     1520 (1 player, waited 2 s): datacenter
void print_explanation(const json& e) {
  std::cerr << e["queue"].get<std::string>() << ": " << e["summary"].get<std::string>() << '\n';
  if (e["stage"].is_object()) {
    const json& s = e["stage"];
    std::cerr << "  stage " << s["name"].get<std::string>() << " ("
              << (s["max_rtt_ms"].is_null() ? std::string("any RTT")
                                            : number_text(s["max_rtt_ms"]) + " ms")
              << ")";
    if (!s["next_in_ms"].is_null())
      std::cerr << " for " << s["next_in_ms"].get<std::int64_t>() / 1000 << " s more";
    std::cerr << '\n';
  }
  for (const auto& r : e["rules"]) {
    std::cerr << "  rule " << r["name"].get<std::string>();
    if (!r["threshold"].is_null()) std::cerr << ": " << number_text(r["threshold"]);
    if (!r["filters"].get<bool>()) std::cerr << " (optional now)";
    if (!r["next_expansion_in_ms"].is_null())
      std::cerr << ", grows in " << r["next_expansion_in_ms"].get<std::int64_t>() / 1000 << " s";
    if (!r["optional_in_ms"].is_null())
      std::cerr << ", optional in " << r["optional_in_ms"].get<std::int64_t>() / 1000 << " s";
    std::cerr << '\n';
  }
  for (const auto& c : e["candidates"]["nearest"]) {
    std::cerr << "  "
              << (c["ticket"].is_null() ? std::string("(another's)")
                                        : c["ticket"].get<std::string>())
              << " MMR " << number_text(c["mmr"]) << ", " << c["players"]
              << (c["players"] == 1 ? " player" : " players") << ", waited "
              << c["waited_ms"].get<std::int64_t>() / 1000
              << " s: " << c["refused_by"].get<std::string>();
    if (!c["rule"].is_null()) std::cerr << " " << c["rule"].get<std::string>();
    std::cerr << '\n';
  }
}

int ticket_command(api& a, const std::string& cmd, const flags& f,
                   mm::client::event_connect events) {
  const std::string sub = f.positional.empty() ? "" : f.positional[0];
  const auto id_arg = [&] {
    if (f.positional.size() != 2) throw usage_error(cmd + " " + sub + " needs an ID");
    const std::string& id = f.positional[1];
    const bool hex = id.size() == 16 && std::all_of(id.begin(), id.end(), [](unsigned char c) {
                       return std::isxdigit(c) != 0;
                     });
    if (!hex) throw usage_error("ID: a ticket id is 16 hexadecimal digits, got '" + id + "'");
    return id;
  };
  if (cmd == "queues") {
    print(f.positional.empty() ? a.get("/api/queues") : a.get("/api/queues/" + f.positional[0]));
  } else if (cmd == "ticket" && sub == "create") {
    print(a.post("/api/tickets", ticket_body(f)));
  } else if (cmd == "ticket" && sub == "get") {
    const std::string id = id_arg();
    print(a.get("/api/tickets/" + id +
                (f.has("wait") ? "?wait=" + std::to_string(number_arg("--wait", f.one("wait")))
                               : std::string())));
  } else if (cmd == "ticket" && sub == "explain") {
    const json e = a.get("/api/tickets/" + id_arg() + "/explain" + limit_query(f));
    for (const auto& q : e["queues"]) print_explanation(q);
    print(e);
  } else if (cmd == "ticket" && sub == "cancel") {
    print(a.del("/api/tickets/" + id_arg()));
  } else if (cmd == "ticket" && sub == "watch") {
    const std::string only = f.positional.size() == 2 ? id_arg() : std::string();
    if (f.has("after")) events.after = number_arg("--after", f.one("after"));
    events.queues = f.one("queues");
    return watch_events(events, only, f.has("count") ? number_arg("--count", f.one("count")) : 0);
  } else if (cmd == "lobby" && sub == "find") {
    print(a.post("/api/lobbies/find", lobby_query(f)));
  } else if (cmd == "lobby" && sub == "list") {
    print(a.get("/api/lobbies"));
  } else {
    throw usage_error(cmd + " takes " +
                      (cmd == "ticket" ? "create, get, explain, cancel or watch" : "find or list"));
  }
  return 0;
}

// --team ID:MMR,ID:MMR as a list of players ('' is a team with nobody in it);
// --rtt applies to every player.
json teams_of(const flags& f) {
  json teams = json::array();
  const json rtts = rtts_of(f);
  for (const auto& [k, v] : f.named) {
    if (k != "team") continue;
    json team = json::array();
    std::stringstream s(v);
    for (std::string p; std::getline(s, p, ',');) {
      const auto colon = p.find(':');
      if (colon == std::string::npos)
        throw usage_error("--team expects ID:MMR,..., got '" + v + "'");
      json player = {{"id", number_arg("--team", p.substr(0, colon))},
                     {"mmr", number_of("--team", p.substr(colon + 1))}};
      if (!rtts.empty()) player["rtt_ms"] = rtts;
      team.push_back(std::move(player));
    }
    teams.push_back(std::move(team));
  }
  if (teams.empty()) throw usage_error("backfill needs at least one --team");
  return teams;
}

json backfill_body(const flags& f) {
  json b = {{"teams", teams_of(f)}};
  if (f.has("datacenter")) b["datacenter"] = f.one("datacenter");
  if (f.has("server")) b["server"] = f.one("server");
  if (f.has("priority")) {
    const std::string p = f.one("priority");
    const bool negative = !p.empty() && p[0] == '-';
    const auto magnitude = number_arg("--priority", negative ? p.substr(1) : p);
    b["priority"] =
        negative ? -static_cast<std::int64_t>(magnitude) : static_cast<std::int64_t>(magnitude);
  }
  return b;
}

// One line a person reads per running match, on stderr (the JSON stays on
// stdout for tools): "m-1 (coop, paris): 2 open seats, 1 reservation".
void summarise(const json& match) {
  std::cerr << match["match_id"].get<std::string>() << " (" << match["queue"].get<std::string>()
            << (match["datacenter"].is_string() ? ", " + match["datacenter"].get<std::string>()
                                                : std::string())
            << "): " << match["open_seats"] << " open seats, " << match["reservations"].size()
            << " reservations, backfilling for "
            << match["backfilling_for_ms"].get<std::int64_t>() / 1000 << " s\n";
}

int backfill_command(api& a, const flags& f) {
  const std::string sub = f.positional.empty() ? "" : f.positional[0];
  const auto arg = [&](std::size_t i, const char* what) {
    if (f.positional.size() <= i) throw usage_error("backfill " + sub + " needs a " + what);
    return path_segment(f.positional[i]);
  };
  if (sub == "register") {
    json b = backfill_body(f);
    if (f.positional.size() != 3) throw usage_error("backfill register needs QUEUE and MATCH");
    b["queue"] = f.positional[1];
    b["match_id"] = f.positional[2];
    const json m = a.post("/api/backfills", b);
    summarise(m);
    print(m);
  } else if (sub == "update") {
    const json m = a.put("/api/backfills/" + arg(1, "MATCH"), backfill_body(f));
    summarise(m);
    print(m);
  } else if (sub == "get") {
    const json m = a.get("/api/backfills/" + arg(1, "MATCH"));
    summarise(m);
    print(m);
  } else if (sub == "list") {
    const json all =
        a.get("/api/backfills" + (f.has("queue") ? "?queue=" + path_segment(f.one("queue")) : ""));
    for (const auto& m : all["backfills"]) summarise(m);
    print(all);
  } else if (sub == "explain") {
    const json e = a.get("/api/backfills/" + arg(1, "MATCH") + "/explain" + limit_query(f));
    print_explanation(e);
    print(e);
  } else if (sub == "stop") {
    print(a.del("/api/backfills/" + arg(1, "MATCH")));
  } else if (sub == "confirm" || sub == "release") {
    json b = json::object();
    if (f.has("players")) {
      b["players"] = json::array();
      std::stringstream s(f.one("players"));
      for (std::string id; std::getline(s, id, ',');)
        b["players"].push_back(number_arg("--players", id));
    }
    const std::string path =
        "/api/backfills/" + arg(1, "MATCH") + "/reservations/" + arg(2, "RESERVATION") + "/" + sub;
    const json m = a.post(path, b);
    summarise(m);
    print(m);
  } else {
    throw usage_error(
        "backfill takes register, update, get, list, explain, stop, confirm or release");
  }
  return 0;
}

}  // namespace

bool is_session_command(const std::string& cmd) {
  return cmd == "ticket" || cmd == "queues" || cmd == "lobby" || cmd == "backfill";
}

int session_command(api& a, const std::string& cmd, const flags& f,
                    mm::client::event_connect events) {
  if (cmd == "backfill") return backfill_command(a, f);
  return ticket_command(a, cmd, f, std::move(events));
}

}  // namespace mmctl
