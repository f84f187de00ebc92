// What session ticket clients were told, and the checks that nothing they
// were told is lost or contradicted: shared by the kill -9 test of one
// server (test_ticket_crash.cpp) and the takeover test of a cluster
// (test_cluster_takeover.cpp).
#pragma once

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "mm/engine/random.hpp"
#include "server_fixture.hpp"

namespace mm::test {

// Two queues, a duel and a 4-player co-op with parties, ticking every 50 ms,
// and every event held, for the clients below.
inline json ticket_queues_patch() {
  return {{"demo", {{"session_players_per_second", 0}}},
          {"sessions",
           {{"max_outcomes", 10'000'000},  // every event of a longer run is still held
            {"datacenters",
             {{{"name", "paris"}, {"latitude", 48.9}, {"longitude", 2.4}, {"region", "eu"}}}},
            {"queues",
             {{{"name", "duel"}, {"tick", "50ms"}, {"give_up_after", "600s"}},
              {{"name", "coop"},
               {"min_players", 4},
               {"max_players", 4},
               {"teams", 0},
               {"max_party_size", 2},
               {"tick", "50ms"},
               {"give_up_after", "600s"}}}}}}};
}

// The same queues and two more, in `partitions` partitions: of 3, arena
// runs in partition 0, duel and coop in 1, solo in 2 (the hash is stable:
// mm/session/partitions.hpp).
inline json partitioned_queues_patch(std::uint32_t partitions) {
  json c = ticket_queues_patch();
  c["sessions"]["partitions"] = partitions;
  for (const char* queue : {"arena", "solo"})
    c["sessions"]["queues"].push_back(
        {{"name", queue}, {"tick", "50ms"}, {"give_up_after", "600s"}});
  return c;
}

// A ticket of one player at MMR 1500 near paris: two make a duel.
inline json duel_ticket(const std::string& queue, std::uint64_t player) {
  return {{"queue", queue},
          {"players", {{{"id", player}, {"mmr", 1500}, {"rtt_ms", {{"paris", 20}}}}}}};
}

// What the clients were told, across every round.
struct ledger {
  std::mutex m;
  std::set<std::string> acknowledged;              // 201 answered
  std::set<std::string> cancelled;                 // a DELETE answered cancelled: true
  std::map<std::string, std::string> told;         // ticket -> the match id a long-poll answered
  std::map<std::string, std::uint64_t> player_of;  // ticket -> its player
  std::uint64_t ids_reused = 0;
};

// Where a ticket client sends its requests: `port()` names the node to ask
// now; a request that fails (the node was killed) ends the client, or, with
// `retry`, is tried again on whatever `port()` names 50 ms later (a cluster,
// whose survivors take over). Redirects are followed (a cluster's nodes send
// session requests to the node that holds the queues). With `pace`, a client
// starts a round (a create, maybe a cancel and a long-poll) at most once per
// `pace`: a load that does not grow with the server's speed. `queues`: the
// tickets' queues, one drawn for each ticket ("a" or ["a", "b"]); none:
// duel, coop, or both. A player makes `tickets_per_player` tickets in a
// row (more than one: the next while the last may still wait, refused then).
struct ticket_target {
  std::function<std::uint16_t()> port;
  bool retry = false;
  std::chrono::milliseconds pace{0};
  std::vector<json> queues{};
  std::uint64_t tickets_per_player = 1;
};

inline ticket_target single_node(const live_server& s) {
  return {[&s] { return s.port(); }, false};
}

// One client until `stop`: creates tickets with players of its own, cancels
// some, long-polls others.
inline void ticket_client(const ticket_target& to, int who, std::uint64_t round,
                          std::atomic<bool>& stop, ledger& l) {
  using namespace std::chrono_literals;
  const httplib::Headers auth{{"Authorization", "Bearer " + test_token}};
  rng r(round * 100 + static_cast<std::uint64_t>(who));
  std::vector<std::string> mine;
  // Sends one request, again on another node while `retry` says so.
  auto send = [&](auto request) -> httplib::Result {
    for (;;) {
      httplib::Client c("127.0.0.1", to.port());
      c.set_read_timeout(5s);
      c.set_follow_location(true);
      auto res = request(c);
      if ((res && res->status != 503) || !to.retry || stop) return res;
      std::this_thread::sleep_for(50ms);  // the survivors are taking over
    }
  };
  auto next_round = std::chrono::steady_clock::now();
  for (std::uint64_t n = 0; !stop; ++n) {
    if (to.pace.count() > 0) {
      std::this_thread::sleep_until(next_round);
      next_round += to.pace;
    }
    const std::uint64_t player =
        (round * 10 + static_cast<std::uint64_t>(who)) * 1'000'000 + n / to.tickets_per_player + 1;
    json body = {{"players", {{{"id", player}, {"mmr", 1500}, {"rtt_ms", {{"paris", 20}}}}}}};
    if (to.queues.empty()) {
      const auto kind = r.below(3);
      if (kind == 0) body["queue"] = "duel";
      if (kind == 1) body["queue"] = "coop";
      if (kind == 2) body["queues"] = {"coop", "duel"};
    } else {
      const json& q = to.queues[r.below(to.queues.size())];
      body[q.is_array() ? "queues" : "queue"] = q;
    }
    auto res = send([&](httplib::Client& c) {
      return c.Post("/api/tickets", auth, body.dump(), "application/json");
    });
    if (!res) return;  // killed
    if (res->status == 201) {
      const std::string id = json::parse(res->body)["ticket"];
      std::lock_guard lock(l.m);
      if (!l.acknowledged.insert(id).second) ++l.ids_reused;
      l.player_of[id] = player;
      mine.push_back(id);
    }
    if (!mine.empty() && r.below(4) == 0) {
      const std::string& id = mine[r.below(mine.size())];
      auto del = send([&](httplib::Client& c) { return c.Delete("/api/tickets/" + id, auth); });
      if (!del) return;
      if (del->status == 200 && json::parse(del->body)["cancelled"] == true) {
        std::lock_guard lock(l.m);
        l.cancelled.insert(id);
      }
    }
    if (!mine.empty() && r.below(4) == 0) {
      const std::string& id = mine[r.below(mine.size())];
      auto got =
          send([&](httplib::Client& c) { return c.Get("/api/tickets/" + id + "?wait=1", auth); });
      if (!got) return;
      if (got->status == 200) {
        const json o = json::parse(got->body);
        if (o["state"] == "matched") {
          std::lock_guard lock(l.m);
          l.told[id] = o["match"]["id"];
        }
      }
    }
  }
}

// A GET with the test token, answered by whichever node serves it. A 503
// (the queues between two owners: a takeover, or a node of a starved
// machine whose heartbeat was late) is asked again, as a client honouring
// Retry-After would, for 30 s at most; what is lost answers 404.
using ticket_reader = std::function<httplib::Result(const std::string& path)>;

inline ticket_reader reader_of(const live_server& s) {
  return [&s](const std::string& path) {
    httplib::Client c("127.0.0.1", s.port());
    c.set_read_timeout(std::chrono::seconds(30));
    c.set_follow_location(true);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    for (;;) {
      auto r = c.Get(path, {{"Authorization", "Bearer " + test_token}});
      if (!r || r->status != 503 || std::chrono::steady_clock::now() > until) return r;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));  // Retry-After, shortened
    }
  };
}

// Every acknowledged ticket is there, and agrees with what was told; no
// ticket is in two matches. Returns (waiting, finished).
// `only`: the acknowledged tickets to read (all when null); a ticket in two
// matches is then found only when both are among them.
inline std::pair<std::size_t, std::size_t> check_all(const ticket_reader& get, ledger& l,
                                                     const std::set<std::string>* only = nullptr) {
  std::lock_guard lock(l.m);
  std::size_t waiting = 0, finished = 0, lost = 0, contradicted = 0;
  std::string first_lost;          // the first ticket not found, and what the server said
  std::string first_contradicted;  // the first ticket read back as not what its client was told
  std::map<std::string, std::string> match_of;  // ticket -> its match, as the server says
  std::map<std::string, std::set<std::string>> tickets_of;  // match -> its tickets
  for (const auto& id : only ? *only : l.acknowledged) {
    auto r = get("/api/tickets/" + id);
    INFO("GET /api/tickets/" << id << ": " << httplib::to_string(r.error()));
    REQUIRE(r);
    if (r->status != 200) {
      if (lost++ == 0) first_lost = id + ": " + std::to_string(r->status) + " " + r->body;
      continue;
    }
    const json o = json::parse(r->body);
    if (o["state"] == "waiting")
      ++waiting;
    else
      ++finished;
    const auto contradiction = [&](const std::string& told) {
      if (contradicted++ == 0) first_contradicted = id + " told " + told + "; read: " + r->body;
    };
    if (l.cancelled.count(id) && o["state"] != "cancelled") contradiction("cancelled");
    if (const auto t = l.told.find(id); t != l.told.end())
      if (o["state"] != "matched" || o["match"]["id"] != t->second)
        contradiction("matched in " + t->second);
    if (o["state"] == "matched") {
      match_of[id] = o["match"]["id"];
      for (const auto& t : o["match"]["tickets"]) tickets_of[o["match"]["id"]].insert(t);
    }
  }
  // A ticket's match lists it, and no two matches list the same ticket.
  std::map<std::string, int> listed;
  for (const auto& [match, tickets] : tickets_of)
    for (const auto& t : tickets) ++listed[t];
  std::size_t twice = 0;
  for (const auto& [t, n] : listed) twice += n > 1 ? 1 : 0;
  for (const auto& [t, match] : match_of) CHECK(tickets_of[match].count(t) == 1);
  INFO("the first acknowledged ticket not read back: " << first_lost);
  INFO("the first told outcome read back otherwise: " << first_contradicted);
  CHECK(lost == 0);
  CHECK(contradicted == 0);
  CHECK(twice == 0);
  return {waiting, finished};
}

// The events say the same, each once: read from sequence 0 on, page by
// page, every acknowledged ticket has its creation's event, a told match and
// an acknowledged cancel their outcome's, and no ticket two outcomes; the
// sequence numbers only grow, none given twice, none dropped. With
// `one_waiting_per_player` (claims in the store: the session queues in
// partitions), a player's tickets follow each other in the sequence: a
// ticket's creation comes after the outcome of the player's ticket before,
// so no player waited in two tickets at once, nor was in two matches at once.
inline void check_events(const ticket_reader& get, ledger& l, bool one_waiting_per_player = false) {
  std::lock_guard lock(l.m);
  std::map<std::uint64_t, std::string> waiting_of;  // player -> its ticket waiting now
  std::uint64_t waited_twice = 0;
  std::set<std::string> created;
  std::map<std::string, json> outcome;
  std::uint64_t after = 0, out_of_order = 0, two_outcomes = 0, missed = 0;
  std::string first_two;  // the first ticket's two outcomes
  for (;;) {
    const auto res = get("/api/events?limit=1000&after=" + std::to_string(after));
    REQUIRE(res);
    REQUIRE(res->status == 200);
    const json page = json::parse(res->body);
    missed += page["missed"] == true ? 1 : 0;
    for (const auto& e : page["events"]) {
      if (e["seq"].get<std::uint64_t>() <= after) ++out_of_order;
      after = e["seq"];
      const std::string id = e["ticket"];
      if (e["state"] == "waiting")
        created.insert(id);
      else if (const auto [at, first] = outcome.emplace(id, e); !first && two_outcomes++ == 0)
        first_two = at->second.dump() + " then " + e.dump();
      const auto player = l.player_of.find(id);
      if (!one_waiting_per_player || player == l.player_of.end()) continue;
      if (e["state"] == "waiting") {
        auto [at, fresh] = waiting_of.emplace(player->second, id);
        if (!fresh) ++waited_twice;
        at->second = id;
      } else if (const auto w = waiting_of.find(player->second);
                 w != waiting_of.end() && w->second == id) {
        waiting_of.erase(w);
      }
    }
    after = std::max(after, page["next_after"].get<std::uint64_t>());
    if (page["more"] != true) break;
  }
  std::size_t no_creation = 0, contradicted = 0;
  std::string first_contradiction;  // the ticket, what its client was told, what the events say
  const auto contradiction = [&](const std::string& id, const std::string& told) {
    if (contradicted++ > 0) return;
    const auto o = outcome.find(id);
    first_contradiction = id + " told " + told + "; events: " +
                          (o == outcome.end() ? std::string("no outcome") : o->second.dump());
  };
  for (const auto& id : l.acknowledged) no_creation += created.count(id) == 0 ? 1 : 0;
  for (const auto& [id, match] : l.told) {
    const auto o = outcome.find(id);
    if (o == outcome.end() || o->second["state"] != "matched" || o->second["match"]["id"] != match)
      contradiction(id, "matched in " + match);
  }
  for (const auto& id : l.cancelled) {
    const auto o = outcome.find(id);
    if (o == outcome.end() || o->second["state"] != "cancelled") contradiction(id, "cancelled");
  }
  INFO("the first told outcome the events contradict: " << first_contradiction);
  INFO("the first ticket with two outcomes: " << first_two);
  CHECK(missed == 0);
  CHECK(waited_twice == 0);
  CHECK(out_of_order == 0);
  CHECK(two_outcomes == 0);
  CHECK(no_creation == 0);
  CHECK(contradicted == 0);
}

}  // namespace mm::test
