// Integration tests of matchmakerd's start and stop: the configuration read,
// checked and refused with a clear message, a damaged database, SIGTERM and
// the warm start after it, and mmctl against a running server.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "mm/actors/messages.hpp"
#include "mm/engine/synthetic_players.hpp"
#include "mm/storage/database.hpp"
#include "mm/storage/player_table.hpp"
#include "mm/storage/state_table.hpp"
#include "raw_http.hpp"
#include "server_fixture.hpp"
#include "session_http.hpp"

using namespace mm;
using namespace mm::test;

TEST_CASE("matchmakerd --help lists every key with its default", "[server]") {
  const auto [status, out] = run_binary({MATCHMAKERD_BINARY, "--help"});
  CHECK(status == 0);
  for (const char* key :
       {"database.path", "instances", "http.host", "http.port", "actor.host", "actor.port",
        "tokens", "profile.attributes", "profile.mmr_window_per_retry",
        "matchmaker.player_cache_size", "matchmaker.database_scan_tick",
        "matchmaker.enable_fake_opponents", "matchmaker.player_remove_after_candidate_offer",
        "matchmaker.state_snapshot_interval"})
    CHECK(out.find(std::string("  ") + key + "\n") != std::string::npos);
  CHECK(out.find("default: 100000") != std::string::npos);  // player_cache_size
  CHECK(out.find("default: 30s") != std::string::npos);     // database_scan_tick
}

TEST_CASE("matchmakerd reads the config file and flags over it", "[server]") {
  temp_dir dir;
  std::ofstream(dir.file("c.json")) << R"({
    // comments are allowed
    "database": {"path": "x.db"},
    "instances": 3,
    "profile": {"attributes": [{"name": "region", "rule": "hard_equal", "bucketing": "distinct_hard"},
                               {"name": "clan", "rule": "must_differ"},
                               {"name": "tier", "rule": "prefer_equal", "weight": 15,
                                "bucketing": "ranged", "tier_width": 2}],
                "mmr_window": 50, "mmr_window_per_retry": 25, "mmr_window_max": 400},
    "matchmaker": {"enable_fake_opponents": true, "database_scan_tick": "5s",
                   "buckets_rebalance_interval": "2h"}
  })";
  const auto [status, out] =
      run_binary({MATCHMAKERD_BINARY, "--config", dir.file("c.json"), "--http.port=9999",
                  "--instances", "4", "--matchmaker.matching_max_search=800", "--print-config"});
  REQUIRE(status == 0);
  const json c = json::parse(out);
  CHECK(c["database"]["path"] == "x.db");
  CHECK(c["instances"] == 4);  // the flag wins over the file
  CHECK(c["http"]["port"] == 9999);
  CHECK(c["demo"]["players"] == 0);  // never fakes in a database of the game's own
  CHECK(c["profile"]["attributes"].size() == 3);
  CHECK(c["profile"]["attributes"][2]["bucketing"] == "ranged");
  CHECK(c["profile"]["mmr_window_max"] == 400);
  CHECK(c["matchmaker"]["enable_fake_opponents"] == true);
  CHECK(c["matchmaker"]["database_scan_tick"] == "5s");
  CHECK(c["matchmaker"]["buckets_rebalance_interval"] == "2h");
  CHECK(c["matchmaker"]["matching_max_search"] == 800);
  CHECK(c["matchmaker"]["matching_candidate_amount"] == 10);  // a default
}

TEST_CASE("matchmakerd refuses a bad configuration with a clear message", "[server]") {
  temp_dir dir;
  const auto refused = [&](std::vector<std::string> args, const std::string& expected) {
    args.insert(args.begin(), MATCHMAKERD_BINARY);
    args.push_back("--print-config");
    const auto [status, out] = run_binary(args);
    INFO(out);
    CHECK(status == 2);
    CHECK(out.find(expected) != std::string::npos);
  };
  std::ofstream(dir.file("bad.json")) << "{\"instances\": 2,";
  refused({"--config", dir.file("bad.json")}, "is not valid JSON");
  std::ofstream(dir.file("unknown.json")) << R"({"http": {"prot": 1}})";
  refused({"--config", dir.file("unknown.json")}, "unknown config key 'http.prot'");
  refused({"--config", dir.file("missing.json")}, "cannot read the config file");
  std::ofstream(dir.file("group.json")) << R"({"matchmaker": 5})";
  refused({"--config", dir.file("group.json")}, "config key 'matchmaker' must be an object");
  refused({"--instances=zero"}, "config key 'instances': expected an integer");
  refused({"--http.port=70000"}, "config key 'http.port'");
  refused({"--nonsense=1"}, "unknown flag --nonsense");
  refused({"--matchmaker.database_scan_tick=3 weeks"}, "database_scan_tick");
  refused({"--matchmaker.bucket_min_size=500"}, "bucket_min_size");
  refused(
      {"--matchmaker.enable_fake_opponents=true", "--matchmaker.return_model_in_response=false"},
      "return_model_in_response");
  refused({"--http.host=0.0.0.0"}, "refusing to serve HTTP on '0.0.0.0' with no access token");
  refused({"--actor.host=0.0.0.0"}, "refusing to publish the actor port");
  std::ofstream(dir.file("tok.json")) << R"({"tokens": [{"token": "short", "role": "admin"}]})";
  refused({"--config", dir.file("tok.json")}, "at least 16 characters");
  std::ofstream(dir.file("attr.json"))
      << R"({"profile": {"attributes": [{"name": "a", "rule": "maybe"}]}})";
  refused({"--config", dir.file("attr.json")}, "profile.attributes[0].rule");
  // A token of the wrong type is refused without being echoed.
  std::ofstream(dir.file("numtok.json"))
      << R"({"tokens": [{"token": 8765432109876, "role": "admin"}]})";
  const auto [status, out] =
      run_binary({MATCHMAKERD_BINARY, "--config", dir.file("numtok.json"), "--print-config"});
  CHECK(status == 2);
  CHECK(out.find("tokens[0].token") != std::string::npos);
  CHECK(out.find("8765432109876") == std::string::npos);
  // Durations are whole milliseconds: sub-second values are kept, finer ones refused.
  refused({"--matchmaker.database_scan_tick=0.5ms"}, "whole number of milliseconds");
  const auto [ok, printed] =
      run_binary({MATCHMAKERD_BINARY, "--matchmaker.state_snapshot_interval=1500ms",
                  "--matchmaker.buckets_rebalance_interval=300ms", "--print-config"});
  REQUIRE(ok == 0);
  const json c = json::parse(printed);
  CHECK(c["matchmaker"]["state_snapshot_interval"] == "1500ms");
  CHECK(c["matchmaker"]["buckets_rebalance_interval"] == "300ms");
}

TEST_CASE("the example configuration in examples/ is valid", "[server]") {
  const auto [status, out] =
      run_binary({MATCHMAKERD_BINARY, "--config", MM_SOURCE_DIR "/examples/matchmakerd.json",
                  "--print-config"});
  INFO(out);
  REQUIRE(status == 0);
  const json c = json::parse(out);
  CHECK(c["tokens"].size() == 3);
  CHECK(c["tokens"][0]["token"] == "(hidden)");
  CHECK(c["profile"]["attributes"][3]["bucketing"] == "ranged");
  CHECK(c["matchmaker"]["enable_fake_opponents"] == true);
}

TEST_CASE("with tokens matchmakerd may bind beyond loopback", "[server]") {
  temp_dir dir;
  std::ofstream(dir.file("c.json")) << json{
      {"tokens", {{{"token", admin_token}, {"role", "admin"}}}},
      {"http", {{"host", "0.0.0.0"}}}}.dump();
  const auto [status, out] =
      run_binary({MATCHMAKERD_BINARY, "--config", dir.file("c.json"), "--print-config"});
  INFO(out);
  CHECK(status == 0);
}

TEST_CASE("SIGTERM writes every snapshot and exits 0, the next start is warm", "[server]") {
  live_server s;
  s.wait_until_filled();
  const auto before = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  CHECK(s.stop() == 0);
  {
    database db(s.config()["database"]["path"].get<std::string>());
    for (const char* id : {"mm-0", "mm-1"}) {
      const auto st = read_state(db, id);
      REQUIRE(st);
      CHECK(st->persisted_at_unix_ms >= before);
    }
  }
  // With the scan off, only the snapshots can fill the caches.
  s.restart({{"matchmaker", {{"enable_database_scan", false}}}});
  s.wait_until_filled();
  const json restored = s.get_json("/api/matchmakers", view_token)["matchmakers"];
  for (const auto& m : restored) CHECK(m["scanned_players"] == 0);
  CHECK(s.stop() == 0);
}

TEST_CASE("mmctl: import with progress, export, info, test, inspect and errors",
          "[server][mmctl]") {
  live_server s(json::object(), 0);
  const std::vector<std::pair<std::string, std::string>> admin = {{"MMCTL_URL", s.url()},
                                                                  {"MMCTL_TOKEN", admin_token}};
  {
    std::ofstream csv(s.dir().file("players.csv"));
    csv << "id,mmr,attr0,attr1,attr2,attr3,is_bot\n";
    for (int id = 1; id <= 2500; ++id)
      csv << id << ',' << 1000 + id % 700 << ",0," << id % 50 << ",1,2,0\n";
    csv << "2501,not-a-number\n";
  }
  const auto [status, out] =
      run_binary({MMCTL_BINARY, "import", s.dir().file("players.csv"), "--batch", "100"}, admin);
  INFO(out);
  CHECK(status == 1);  // one bad row
  CHECK(out.find("line 2502: mmr 'not-a-number' is not a number") != std::string::npos);
  CHECK(out.find("100.0%") != std::string::npos);
  CHECK(out.find("\"written\": 2500") != std::string::npos);

  const auto [exported, text] =
      run_binary({MMCTL_BINARY, "export", s.dir().file("out.csv")}, admin);
  CHECK(exported == 0);
  std::ifstream in(s.dir().file("out.csv"));
  std::string header, line;
  std::getline(in, header);
  CHECK(header == "id,mmr,attr0,attr1,attr2,attr3,is_bot");
  std::size_t lines = 0;
  std::string last;
  while (std::getline(in, line)) {
    ++lines;
    last = line;
  }
  CHECK(lines == 2500);
  CHECK(last == "2500,1400,0,0,1,2,0");

  s.wait_until_filled();
  const auto [info_status, info] = run_binary({MMCTL_BINARY, "info"}, admin);
  CHECK(info_status == 0);
  CHECK(json::parse(info)["matchmakers"].size() == 2);
  const auto [test_status, report] =
      run_binary({MMCTL_BINARY, "test", "--attacker", "99999", "--mmr", "1300", "--attr",
                  "region=0", "--attr", "guild=3"},
                 admin);
  INFO(report);
  CHECK(test_status == 0);
  CHECK(report.find("Success on mm-") != std::string::npos);
  const auto [inspect_status, page] =
      run_binary({MMCTL_BINARY, "inspect", "mm-0", "0", "--limit", "3"}, admin);
  CHECK(inspect_status == 0);
  CHECK(page.find("\"players\"") != std::string::npos);

  // Errors: a refused token, a usage mistake, no server.
  const auto [denied, why] = run_binary({MMCTL_BINARY, "--token", "wrong-token-0123456789", "info"},
                                        {{"MMCTL_URL", s.url()}});
  CHECK(denied == 1);
  CHECK(why.find("HTTP 401") != std::string::npos);
  CHECK(run_binary({MMCTL_BINARY, "frobnicate"}, admin).first == 2);
  CHECK(run_binary({MMCTL_BINARY, "--url", "http://127.0.0.1:1", "info"}).first == 1);
}

TEST_CASE("a damaged database file stops matchmakerd at start with a clear message",
          "[server][bad-input]") {
  temp_dir dir;
  const std::string path = dir.file("damaged.db");
  {
    database db(path);
    rng r(1);
    upsert_players(db, make_players(synthetic_population{}, 20'000, 1, r));
    db.sql().exec("PRAGMA wal_checkpoint(TRUNCATE)");
  }
  // Garbage over pages in the middle of the file, as a failing disk leaves them.
  const auto size = std::filesystem::file_size(path);
  REQUIRE(size > 200'000);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2));
    const std::string garbage(16 * 4096, '\x5a');
    f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  const auto [status, out] = run_binary(
      {MATCHMAKERD_BINARY, "--database.path=" + path, "--http.port=0", "--actor.port=-1"});
  CHECK(status == 1);
  INFO(out);
  CHECK((out.find("damaged") != std::string::npos || out.find("malformed") != std::string::npos));
}

TEST_CASE("mmctl: ticket create, get with wait, cancel, queues and lobby find", "[server][mmctl]") {
  live_server s(session_patch(), 100);
  const std::vector<std::pair<std::string, std::string>> env = {{"MMCTL_URL", s.url()},
                                                                {"MMCTL_TOKEN", test_token}};
  const auto mmctl = [&](std::vector<std::string> args) {
    args.insert(args.begin(), MMCTL_BINARY);
    auto [status, out] = run_binary(args, env);
    INFO(out);
    const auto brace = out.find('{');
    return std::make_pair(status, brace == std::string::npos
                                      ? json(out)
                                      : json::parse(out.substr(brace), nullptr, false));
  };
  auto [made, ticket] = mmctl({"ticket", "create", "duel", "--player", "1:1500", "--rtt",
                               "paris=20", "--rtt", "tokyo=230"});
  REQUIRE(made == 0);
  const std::string a = ticket["ticket"].get<std::string>();
  auto [made2, ticket2] =
      mmctl({"ticket", "create", "duel", "--player", "2:1530", "--location", "48.5,2.0"});
  REQUIRE(made2 == 0);
  auto [got, outcome] = mmctl({"ticket", "get", a, "--wait", "10"});
  CHECK(got == 0);
  CHECK(outcome["state"] == "matched");
  CHECK(outcome["match"]["datacenter"] == "paris");

  auto [made3, ticket3] = mmctl({"ticket", "create", "coop", "--player", "5:1500", "--player",
                                 "6:1600", "--rtt", "paris=15"});
  REQUIRE(made3 == 0);
  const std::string c = ticket3["ticket"].get<std::string>();
  auto [listed, queue] = mmctl({"queues", "coop"});
  CHECK(listed == 0);
  CHECK(queue["waiting_tickets"][0]["players"] == json({5, 6}));
  auto [cancelled, answer] = mmctl({"ticket", "cancel", c});
  CHECK(cancelled == 0);
  CHECK(answer["cancelled"] == true);
  auto [all, queues] = mmctl({"queues"});
  CHECK(all == 0);
  CHECK(queues["queues"][0]["matches"] == 1);

  auto [found, lobby] =
      mmctl({"lobby", "find", "--mode", "ctf", "--party", "3", "--region", "asia"});
  CHECK(found == 0);
  CHECK(lobby["created"] == true);
  CHECK(lobby["datacenter"] == "tokyo");
  auto [full, why] =
      mmctl({"lobby", "find", "--mode", "race", "--region", "eu", "--no-create", "yes"});
  CHECK(full == 1);
  CHECK(why.get<std::string>().find("HTTP 409: no available lobby") != std::string::npos);
  auto [bad, usage] = mmctl({"ticket", "create", "duel"});
  CHECK(bad == 2);
  auto [refused, reason] = mmctl({"ticket", "create", "nope", "--player", "9:1500"});
  CHECK(refused == 1);
  CHECK(reason.get<std::string>().find("queue: no queue 'nope'") != std::string::npos);
}
