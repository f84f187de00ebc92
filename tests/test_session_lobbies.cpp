// Lobbies: fullest first, a party fits whole or not at all, auto-create or a
// clear error, the nearest region by RTT, several modes, idle lobbies closed;
// and find() against a brute-force scan over random registries.
#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "mm/engine/error.hpp"
#include "mm/engine/random.hpp"
#include "mm/session/lobbies.hpp"

using namespace mm::session;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;

namespace {

// eu: fra, ams; us: nyc, sfo.
latency_model two_regions() {
  return latency_model({{"fra", {50.1, 8.7}, "eu"},
                        {"ams", {52.4, 4.9}, "eu"},
                        {"nyc", {40.7, -74.0}, "us"},
                        {"sfo", {37.8, -122.4}, "us"}});
}

find_lobby_request in_region(std::vector<std::string> modes, std::uint32_t party,
                             const char* region = "eu") {
  find_lobby_request r;
  r.modes = std::move(modes);
  r.party_size = party;
  r.region = region;
  return r;
}

std::string refused(lobby_registry& reg, const find_lobby_request& r, mm::errc expected) {
  try {
    reg.find(r, 0ms);
  } catch (const mm::error& e) {
    CHECK(e.code() == expected);
    return e.what();
  }
  return "found";
}

}  // namespace

TEST_CASE("find places a party in the fullest lobby with room for all of it",
          "[session][lobbies]") {
  lobby_registry reg(two_regions(), {}, 1);
  reg.register_lobby("a", "br", "fra", 10, 3, 0ms);   // 7 free
  reg.register_lobby("b", "br", "ams", 10, 8, 0ms);   // 2 free
  reg.register_lobby("c", "br", "fra", 10, 10, 0ms);  // full
  reg.register_lobby("d", "br", "nyc", 10, 9, 0ms);   // another region
  auto r = reg.find(in_region({"br"}, 2), 0ms);
  CHECK(r.lobby_id == "b");
  CHECK_FALSE(r.created);
  CHECK(r.players == 10);
  CHECK(reg.get("b")->players == 10);
  // b is full now; a party of 3 goes to a, a party of 8 fits nowhere: a
  // new lobby, never a part of the party somewhere.
  CHECK(reg.find(in_region({"br"}, 3), 0ms).lobby_id == "a");
  CHECK(reg.get("a")->players == 6);
  r = reg.find(in_region({"br"}, 8), 0ms);
  CHECK(r.created);
  CHECK(reg.get(r.lobby_id)->players == 8);
  CHECK(reg.get(r.lobby_id)->max_players == 16);
  CHECK(reg.get("a")->players == 6);
}

TEST_CASE("with prevent_auto_create nothing that fits is a clear error", "[session][lobbies]") {
  lobby_registry reg(two_regions(), {}, 1);
  reg.register_lobby("a", "br", "fra", 4, 3, 0ms);
  auto r = in_region({"br"}, 2);
  r.prevent_auto_create = true;
  CHECK_THAT(refused(reg, r, mm::errc::no_available_lobby),
             Contains("no available lobby for a party of 2 in region 'eu'"));
  CHECK(reg.size() == 1);
  CHECK(reg.get("a")->players == 3);
  r.party_size = 1;
  CHECK(reg.find(r, 0ms).lobby_id == "a");
}

TEST_CASE("a created lobby: the first mode, its seats, the nearest datacenter of the region",
          "[session][lobbies]") {
  lobby_config c;
  c.max_players_by_mode = {{"duo", 2}, {"squad", 4}};
  lobby_registry reg(two_regions(), c, 1);
  find_lobby_request r;
  r.modes = {"squad", "duo"};
  r.party_size = 3;
  r.location = geo_point{52.3, 4.8};  // Amsterdam
  const auto made = reg.find(r, 0ms);
  CHECK(made.created);
  const lobby* l = reg.get(made.lobby_id);
  REQUIRE(l);
  CHECK(l->mode == "squad");
  CHECK(l->max_players == 4);
  CHECK(reg.latency().datacenters()[l->datacenter].name == "ams");
  CHECK(l->created_by_find);
  r.party_size = 5;  // more than a squad lobby holds
  CHECK_THAT(refused(reg, r, mm::errc::invalid_argument), Contains("party_size"));
}

TEST_CASE("the region is the nearest datacenter's by the player's RTT", "[session][lobbies]") {
  lobby_registry reg(two_regions(), {}, 1);
  reg.register_lobby("eu1", "br", "fra", 10, 5, 0ms);
  reg.register_lobby("us1", "br", "sfo", 10, 5, 0ms);
  find_lobby_request r;
  r.modes = {"br"};
  r.rtt_ms = {{"fra", 140}, {"sfo", 30}};  // measured: nearer to sfo
  CHECK(reg.find(r, 0ms).lobby_id == "us1");
  r.rtt_ms.clear();
  r.location = geo_point{48.1, 11.6};  // Munich: estimated, nearest is fra
  CHECK(reg.find(r, 0ms).lobby_id == "eu1");
  r.location.reset();
  r.region = "us";
  CHECK(reg.find(r, 0ms).lobby_id == "us1");
}

TEST_CASE("several modes: the fullest lobby of any of them", "[session][lobbies]") {
  lobby_registry reg(two_regions(), {}, 1);
  reg.register_lobby("ctf", "ctf", "fra", 10, 4, 0ms);
  reg.register_lobby("dm", "dm", "fra", 10, 7, 0ms);
  reg.register_lobby("koth", "koth", "fra", 10, 9, 0ms);
  CHECK(reg.find(in_region({"ctf", "dm"}, 1), 0ms).lobby_id == "dm");
  CHECK(reg.find(in_region({"koth", "ctf"}, 2), 0ms).lobby_id == "ctf");  // koth has 1 seat
}

TEST_CASE("lobby updates, closing, idle lobbies and bad input", "[session][lobbies]") {
  lobby_config c;
  c.idle_after = 30s;
  lobby_registry reg(two_regions(), c, 1);
  reg.register_lobby("a", "br", "fra", 10, 5, 0ms);
  reg.register_lobby("b", "br", "fra", 10, 0, 0ms);
  reg.update("a", 0, 10s);
  CHECK(reg.close_idle(29999ms).empty());
  CHECK(reg.close_idle(30s) == std::vector<std::string>{"b"});
  reg.update("a", 1, 35s);  // a player came back: not idle
  CHECK(reg.close_idle(45s).empty());
  reg.update("a", 0, 50s);
  CHECK(reg.close_idle(79999ms).empty());
  CHECK(reg.close_idle(80s) == std::vector<std::string>{"a"});
  CHECK(reg.size() == 0);
  CHECK_FALSE(reg.close("a"));

  const auto error_of = [&](auto f) -> std::string {
    try {
      f();
    } catch (const mm::error& e) {
      return e.what();
    }
    return "accepted";
  };
  reg.register_lobby("x", "br", "fra", 4, 2, 0ms);
  CHECK_THAT(error_of([&] { reg.register_lobby("x", "br", "fra", 4, 2, 0ms); }),
             Contains("id: lobby 'x' is already registered"));
  CHECK_THAT(error_of([&] { reg.register_lobby("y", "br", "mars", 4, 2, 0ms); }),
             Contains("datacenter: no datacenter 'mars'"));
  CHECK_THAT(error_of([&] { reg.register_lobby("y", "br", "fra", 4, 5, 0ms); }),
             Contains("players: 5 is more than max_players (4)"));
  CHECK_THAT(error_of([&] { reg.register_lobby("y", "br", "fra", 0, 0, 0ms); }),
             Contains("max_players"));
  CHECK_THAT(error_of([&] { reg.register_lobby("", "br", "fra", 4, 0, 0ms); }), Contains("id"));
  CHECK_THAT(error_of([&] { reg.update("x", 9, 0ms); }), Contains("players: 9"));
  CHECK_THAT(error_of([&] { reg.update("nope", 1, 0ms); }), Contains("id: no lobby 'nope'"));
  CHECK_THAT(refused(reg, in_region({}, 1), mm::errc::invalid_argument), Contains("modes"));
  CHECK_THAT(refused(reg, in_region({"br"}, 0), mm::errc::invalid_argument),
             Contains("party_size"));
  CHECK_THAT(refused(reg, in_region({"br"}, 1, "mars"), mm::errc::invalid_argument),
             Contains("region: no datacenter in region 'mars'"));
  find_lobby_request nowhere;
  nowhere.modes = {"br"};
  CHECK_THAT(refused(reg, nowhere, mm::errc::invalid_argument),
             Contains("region: give a region, or rtt_ms or a location"));
  nowhere.rtt_ms = {{"fra", -1}};
  CHECK_THAT(refused(reg, nowhere, mm::errc::invalid_argument), Contains("rtt_ms.fra"));
  CHECK(reg.get("x")->players == 2);  // refused requests changed nothing
  CHECK_THROWS_AS(lobby_registry(latency_model{}, {}, 1), mm::error);
}

TEST_CASE("find agrees with a brute-force scan over random registries", "[session][lobbies]") {
  mm::rng r(99);
  const char* modes[] = {"br", "ctf", "dm"};
  const char* dcs[] = {"fra", "ams", "nyc", "sfo"};
  for (int run = 0; run < 300; ++run) {
    lobby_registry reg(two_regions(), {}, static_cast<std::uint64_t>(run));
    std::map<std::string, lobby> mirror;
    const auto n = 1 + r.below(40);
    for (std::uint64_t i = 0; i < n; ++i) {
      lobby l;
      l.id = "l" + std::to_string(i);
      l.mode = modes[r.below(3)];
      l.datacenter = r.below(4);
      l.max_players = 2 + static_cast<std::uint32_t>(r.below(10));
      // Skewed: many lobbies nearly full.
      l.players = r.below(2) ? l.max_players - static_cast<std::uint32_t>(r.below(2))
                             : static_cast<std::uint32_t>(r.below(l.max_players + 1));
      reg.register_lobby(l.id, l.mode, dcs[l.datacenter], l.max_players, l.players, 0ms);
      mirror[l.id] = l;
    }
    for (int q = 0; q < 30; ++q) {
      find_lobby_request f;
      f.modes = {modes[r.below(3)]};
      if (r.below(2)) f.modes.push_back(modes[r.below(3)]);
      f.party_size = 1 + static_cast<std::uint32_t>(r.below(4));
      f.region = r.below(2) ? "eu" : "us";
      f.prevent_auto_create = r.below(3) == 0;
      // The oracle: the fewest free seats among the lobbies that fit.
      std::optional<std::uint32_t> fewest;
      for (const auto& [id, l] : mirror) {
        const bool eu = l.datacenter < 2;
        if ((*f.region == "eu") != eu) continue;
        if (std::find(f.modes.begin(), f.modes.end(), l.mode) == f.modes.end()) continue;
        const std::uint32_t free = l.max_players - l.players;
        if (free >= f.party_size && (!fewest || free < *fewest)) fewest = free;
      }
      if (!fewest && f.prevent_auto_create) {
        CHECK_THROWS_AS(reg.find(f, 0ms), mm::error);
        continue;
      }
      const auto got = reg.find(f, 0ms);
      if (!fewest) {
        CHECK(got.created);
        mirror[got.lobby_id] = *reg.get(got.lobby_id);
        continue;
      }
      REQUIRE_FALSE(got.created);
      lobby& l = mirror.at(got.lobby_id);
      CHECK(l.max_players - l.players == *fewest);
      l.players += f.party_size;
      CHECK(reg.get(got.lobby_id)->players == l.players);
      CHECK(l.players <= l.max_players);
    }
  }
}

TEST_CASE("compaction moves near-empty lobbies into the fullest that fit", "[session][lobbies]") {
  lobby_registry reg(two_regions(), {}, 1);
  reg.register_lobby("a", "ctf", "fra", 16, 2, 0ms);
  reg.register_lobby("b", "ctf", "ams", 16, 14, 0ms);
  reg.register_lobby("c", "ctf", "fra", 16, 10, 0ms);
  reg.register_lobby("d", "ctf", "fra", 16, 1, 0ms);
  reg.register_lobby("e", "dm", "fra", 16, 15, 0ms);   // another mode
  reg.register_lobby("f", "ctf", "nyc", 16, 15, 0ms);  // another region
  reg.register_lobby("g", "ctf", "fra", 16, 0, 0ms);   // empty: closed when idle, not moved
  const auto moves = reg.plan_compaction(2);
  // d (1 player) first: b is the fullest with room. a (2): b has 1 seat
  // left, so c.
  REQUIRE(moves.size() == 2);
  CHECK((moves[0].from == "d" && moves[0].to == "b" && moves[0].players == 1));
  CHECK((moves[1].from == "a" && moves[1].to == "c" && moves[1].players == 2));
  CHECK(reg.get("a")->players == 2);  // only a plan: the registry is unchanged
  CHECK(reg.plan_compaction(0).empty());

  SECTION("two near-empty lobbies: the emptier moves into the other") {
    lobby_registry two(two_regions(), {}, 1);
    two.register_lobby("x", "ctf", "fra", 8, 1, 0ms);
    two.register_lobby("y", "ctf", "fra", 8, 2, 0ms);
    const auto m = two.plan_compaction(2);
    REQUIRE(m.size() == 1);
    CHECK((m[0].from == "x" && m[0].to == "y"));
  }
  SECTION("equal counts do not move into each other") {
    lobby_registry two(two_regions(), {}, 1);
    two.register_lobby("x", "ctf", "fra", 8, 2, 0ms);
    two.register_lobby("y", "ctf", "fra", 8, 2, 0ms);
    CHECK(two.plan_compaction(2).empty());
  }
}

TEST_CASE("compaction plans hold their invariants over random registries",
          "[session][lobbies][property]") {
  mm::rng r(31);
  const char* dcs[] = {"fra", "ams", "nyc", "sfo"};
  const char* modes[] = {"ctf", "dm"};
  std::size_t moved = 0;
  for (int run = 0; run < 300; ++run) {
    lobby_registry reg(two_regions(), {}, static_cast<std::uint64_t>(run));
    const int n = 2 + static_cast<int>(r.below(40));
    for (int i = 0; i < n; ++i) {
      const std::uint32_t max = 4 + static_cast<std::uint32_t>(r.below(13));
      // Many near-empty and many nearly full lobbies.
      const std::uint32_t players = r.below(2) == 0 ? static_cast<std::uint32_t>(r.below(4))
                                                    : max - static_cast<std::uint32_t>(r.below(4));
      reg.register_lobby("l" + std::to_string(i), modes[r.below(2)], dcs[r.below(4)], max,
                         std::min(players, max), 0ms);
    }
    const std::uint32_t k = 1 + static_cast<std::uint32_t>(r.below(4));
    const auto moves = reg.plan_compaction(k);
    const auto region = [&](const lobby& l) {
      return reg.latency().datacenters()[l.datacenter].region;
    };
    std::map<std::string, std::uint32_t> planned;
    std::set<std::string> sources, targets;
    for (int i = 0; i < n; ++i) {
      const std::string id = "l" + std::to_string(i);
      planned[id] = reg.get(id)->players;
    }
    for (const auto& m : moves) {
      const lobby& from = *reg.get(m.from);
      const lobby& to = *reg.get(m.to);
      CHECK(from.players >= 1);
      CHECK(from.players <= k);
      CHECK(from.players < from.max_players);
      CHECK(m.players == from.players);
      CHECK(from.mode == to.mode);
      CHECK(region(from) == region(to));
      CHECK(sources.insert(m.from).second);  // each emptied once
      CHECK_FALSE(targets.count(m.from));    // never both
      CHECK(planned.at(m.to) > m.players);   // into a fuller lobby
      planned[m.to] += m.players;
      CHECK(planned.at(m.to) <= to.max_players);  // seats counted once
      planned[m.from] = 0;
      targets.insert(m.to);
      CHECK_FALSE(sources.count(m.to));
    }
    // Nothing left that could still move: every near-empty lobby (not full)
    // neither emptied nor receiving has no fuller lobby with room left for it.
    for (const auto& [id, count] : planned) {
      const lobby& l = *reg.get(id);
      if (sources.count(id) || targets.count(id) || count == 0 || count > k) continue;
      if (count == l.max_players) continue;  // a full lobby is not near-empty
      for (const auto& [other, other_count] : planned) {
        if (other == id || sources.count(other)) continue;
        const lobby& o = *reg.get(other);
        const bool could = o.mode == l.mode && region(o) == region(l) && other_count > count &&
                           o.max_players - other_count >= count;
        CHECK_FALSE(could);
      }
    }
    moved += moves.size();
  }
  CHECK(moved > 300);
}

TEST_CASE("lobbies are bounded: seats, party size, lobbies in all and per owner",
          "[session][lobbies]") {
  lobby_config cfg;
  cfg.max_lobby_players = 100;
  cfg.max_party_size = 8;
  cfg.max_lobbies = 5;
  cfg.max_lobbies_per_owner = 3;
  lobby_registry reg(two_regions(), cfg, 1);
  const auto code_of = [](auto&& f) {
    try {
      f();
    } catch (const mm::error& e) {
      return std::make_pair(e.code(), std::string(e.what()));
    }
    return std::make_pair(mm::errc::invalid_config, std::string("no error"));
  };
  auto [seats, why] =
      code_of([&] { reg.register_lobby("big", "ctf", "fra", 4294967295u, 0, 0ms); });
  CHECK(seats == mm::errc::invalid_argument);
  CHECK_THAT(why, Contains("max_players: 4294967295 is more than the server allows (100)"));
  find_lobby_request party;
  party.modes = {"ctf"};
  party.region = "eu";
  party.party_size = 4294967295u;
  auto [size, why2] = code_of([&] { reg.find(party, 0ms); });
  CHECK(size == mm::errc::invalid_argument);
  CHECK_THAT(why2, Contains("party_size: 4294967295 is more than the server allows (8)"));
  // One owner holds at most 3; everyone together at most 5.
  for (int i = 0; i < 3; ++i)
    reg.register_lobby("a" + std::to_string(i), "ctf", "fra", 10, 0, 0ms, "alice");
  auto [mine, why3] = code_of([&] { reg.register_lobby("a3", "ctf", "fra", 10, 0, 0ms, "alice"); });
  CHECK(mine == mm::errc::limit_reached);
  CHECK_THAT(why3, Contains("this caller holds its maximum of 3 lobbies"));
  // A find that creates a lobby counts for its owner too.
  party.party_size = 2;
  party.modes = {"race"};
  party.owner = "bob";
  CHECK(reg.find(party, 0ms).created);
  reg.register_lobby("b1", "ctf", "fra", 10, 0, 0ms, "bob");
  auto [all, why4] = code_of([&] { reg.register_lobby("c1", "ctf", "fra", 10, 0, 0ms, "carol"); });
  CHECK(all == mm::errc::limit_reached);
  CHECK_THAT(why4, Contains("maximum of 5 lobbies"));
  // Closing one makes room, for its owner and for everyone.
  CHECK(reg.close("a0"));
  reg.register_lobby("a3", "ctf", "fra", 10, 0, 0ms, "alice");
}
