// What the session tests over HTTP share: two queues (duel, coop), a solo
// ticket's body, and creating and cancelling tickets as a token.
#pragma once

#include "server_fixture.hpp"

namespace mm::test {

// A duel queue (2 solos, MMR within 100, a tick every 100 ms, 2 s to give
// up) and a co-op queue over two datacenters.
inline json session_patch() {
  return {{"sessions",
           {{"datacenters",
             {{{"name", "paris"}, {"latitude", 48.9}, {"longitude", 2.4}, {"region", "eu"}},
              {{"name", "tokyo"}, {"latitude", 35.7}, {"longitude", 139.7}, {"region", "asia"}}}},
            {"queues",
             {{{"name", "duel"},
               {"tick", "100ms"},
               {"give_up_after", "2s"},
               {"rules", {{{"name", "skill"}, {"max_difference", 100}}}}},
              {{"name", "coop"},
               {"min_players", 4},
               {"max_players", 4},
               {"teams", 0},
               {"max_party_size", 4},
               {"tick", "100ms"},
               {"latency", {{"ideal_ms", 50}}}}}}}}};
}

inline json solo(const char* queue, std::uint64_t id, double mmr) {
  return {{"queue", queue},
          {"players", {{{"id", id}, {"mmr", mmr}, {"rtt_ms", {{"paris", 20}, {"tokyo", 240}}}}}}};
}

// A ticket's id: 16 hex digits.
inline std::string create(const live_server& s, const json& ticket,
                          const std::string& token = test_token) {
  const json made = s.post_json("/api/tickets", ticket, token, 201);
  CHECK(made["state"] == "waiting");
  const std::string id = made["ticket"].get<std::string>();
  CHECK(id.size() == 16);
  return id;
}

inline httplib::Result del(const live_server& s, const std::string& path,
                           const std::string& token) {
  httplib::Client c("127.0.0.1", s.port());
  return c.Delete(path, {{"Authorization", "Bearer " + token}});
}

}  // namespace mm::test
