// The mmsim binary as a game team runs it: --help, refusals naming the
// problem, a tiny day of each kind with its report, and a queue of its own
// from a matchmakerd configuration.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "browser.hpp"
#include "mm/testing/child_process.hpp"
#include "mm/testing/temp_dir.hpp"

using Catch::Matchers::Contains;

namespace {

std::pair<int, std::string> mmsim(std::vector<std::string> args) {
  args.insert(args.begin(), MMSIM_BINARY);
  mm::test::child_process p(args, /*with_stderr=*/true);
  std::string out;
  const int status = p.finish(&out);
  return {status, out};
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("mmsim explains itself and refuses bad input naming it", "[sim][mmsim]") {
  const auto [help_status, help] = mmsim({"--help"});
  CHECK(help_status == 0);
  CHECK_THAT(help, Contains("--play-again"));
  CHECK_THAT(help, Contains("--attacks-per-player-day"));

  CHECK(mmsim({"--bogus"}) ==
        std::pair<int, std::string>{2, "mmsim: unknown option '--bogus' (see mmsim --help)\n"});
  CHECK_THAT(mmsim({"--play-again", "1.5"}).second, Contains("--play-again: '1.5'"));
  CHECK_THAT(mmsim({"--days"}).second, Contains("--days: needs a value"));
  CHECK_THAT(mmsim({"dance"}).second, Contains("unknown command 'dance'"));
  CHECK_THAT(mmsim({"session", "--latency-map", "nowhere"}).second, Contains("DC=FILE"));
  CHECK_THAT(mmsim({"session", "--backfill", "maybe"}).second, Contains("--backfill: on or off"));
  CHECK_THAT(mmsim({"session", "--parties", "0,0"}).second, Contains("--parties: 1 to 8"));
  CHECK_THAT(mmsim({"session", "--leave-rate", "-1"}).second, Contains("--leave-rate: '-1'"));

  mm::test::temp_dir dir;
  std::ofstream(dir.file("bad.csv")) << "latitude,longitude,weight\n10,20,1\n10,200,1\n";
  const auto [status, out] = mmsim({"session", "--population", dir.file("bad.csv")});
  CHECK(status == 2);
  CHECK_THAT(out, Contains("line 3, longitude"));
  CHECK_THAT(mmsim({"session", "--population", dir.file("missing.csv")}).second,
             Contains("cannot open"));
}

TEST_CASE("mmsim runs a tiny day of each kind and says where the report is", "[sim][mmsim]") {
  mm::test::temp_dir dir;
  const std::string out = dir.file("report");
  const auto [status, text] = mmsim({"--days", "0.1", "--joins-per-day", "6000", "--players",
                                     "2000", "--out", out, "--seed", "7"});
  REQUIRE(status == 0);
  CHECK_THAT(text, Contains("session day: "));
  CHECK_THAT(text, Contains("async day: "));
  CHECK_THAT(text, Contains("report: " + std::filesystem::absolute(out + "/index.html").string()));
  const std::string page = read(out + "/index.html");
  CHECK_THAT(page, Contains("Sensitivity"));
  CHECK_THAT(page, Contains("Offer fairness"));
  // Six sensitivity rows: play-again 0.5, 0.75, 0.9 and ideal 30, 50, 70 ms.
  const std::string sensitivity = read(out + "/session_sensitivity.csv");
  CHECK(std::count(sensitivity.begin(), sensitivity.end(), '\n') == 7);
  // Parties leave 5% of matches by default: the day with backfill and without.
  CHECK_THAT(page, Contains("Parties leaving, and backfill"));
  const std::string backfill = read(out + "/session_backfill.csv");
  CHECK(std::count(backfill.begin(), backfill.end(), '\n') == 3);
  CHECK_THAT(backfill, Contains("\non,"));
  CHECK_THAT(backfill, Contains("\noff,"));
  // The same seed again: the same CSVs; the temporary database is gone.
  const std::string again = dir.file("again");
  REQUIRE(mmsim({"--days", "0.1", "--joins-per-day", "6000", "--players", "2000", "--out", again,
                 "--seed", "7", "--quiet"})
              .first == 0);
  for (const char* f : {"session_hours.csv", "session_sensitivity.csv", "session_backfill.csv",
                        "async_hours.csv", "async_fairness.csv", "async_fill.csv"})
    CHECK(read(out + "/" + f) == read(again + "/" + f));
}

TEST_CASE(
    "mmsim takes a queue and datacenters from a matchmakerd configuration, and joins from a CSV",
    "[sim][mmsim]") {
  mm::test::temp_dir dir;
  std::ofstream(dir.file("server.json")) << R"({"sessions": {
    "datacenters": [{"name": "paris", "latitude": 48.85, "longitude": 2.35, "region": "eu"},
                    {"name": "tokyo", "latitude": 35.68, "longitude": 139.69, "region": "asia"}],
    "queues": [{"name": "duel", "min_players": 2, "max_players": 2, "teams": 2, "team_size": 1,
                "rules": [{"kind": "difference", "attribute": "mmr", "max_difference": 100}]}]}})";
  // Players in Paris, a few seconds apart, all within 100 MMR.
  std::ofstream joins(dir.file("joins.csv"));
  joins << "time,latitude,longitude,mmr\n";
  for (int i = 0; i < 200; ++i) joins << i * 5 << ",48.8,2.3," << 1500 + i % 50 << "\n";
  joins.close();
  // Without --days, the run covers the whole days the joins span: one.
  const auto [status, text] =
      mmsim({"session", "--config", dir.file("server.json"), "--queue", "duel", "--population",
             dir.file("joins.csv"), "--no-sensitivity", "--out", dir.file("r")});
  REQUIRE(status == 0);
  CHECK_THAT(text, Contains("200 players joined"));
  const std::string hours = read(dir.file("r/session_hours.csv"));
  CHECK_THAT(hours, Contains("\ntotal,,200,"));
  CHECK_FALSE(std::filesystem::exists(dir.file("r/session_sensitivity.csv")));
  CHECK_THAT(read(dir.file("r/index.html")), Contains("duel from " + dir.file("server.json")));
  CHECK_THAT(read(dir.file("r/index.html")), Contains("1.00, 1"));  // days, seed
  CHECK(std::count(hours.begin(), hours.end(), '\n') == 1 + 24 + 1);
  CHECK_THAT(mmsim({"session", "--config", dir.file("server.json"), "--queue", "nope"}).second,
             Contains("--queue: 'nope' is not a queue"));
}

TEST_CASE("mmsim runs an async day with the profile and options of a matchmakerd configuration",
          "[sim][mmsim]") {
  mm::test::temp_dir dir;
  // MMR alone, a cache as large as the table, no fake opponents.
  std::ofstream(dir.file("server.json")) << R"({
    "profile": {"attributes": [], "mmr_window": 50, "mmr_window_per_retry": 25},
    "matchmaker": {"player_cache_size": 5000, "database_cache_size": 1000,
                   "enable_fake_opponents": false}})";
  const auto [status, text] =
      mmsim({"async", "--config", dir.file("server.json"), "--players", "3000", "--days", "0.1",
             "--attribute-values", "0,0,0,0", "--out", dir.file("r")});
  REQUIRE(status == 0);
  CHECK_THAT(text, Contains("FakeOpponent 0.0%"));
  const std::string page = read(dir.file("r/index.html"));
  CHECK_THAT(page, Contains("options of " + dir.file("server.json") + ": cache 5000 players"));
  CHECK_THAT(page, Contains("the profile of " + dir.file("server.json") + ": MMR window 50 + 25"));
  CHECK_THAT(page, Contains("fake opponents off"));
}

TEST_CASE("mmsim gives players the attributes a queue's rules read", "[sim][mmsim]") {
  mm::test::temp_dir dir;
  std::ofstream(dir.file("server.json")) << R"({"sessions": {
    "queues": [{"name": "modes", "min_players": 2, "max_players": 2, "teams": 2, "team_size": 1,
                "rules": [{"kind": "equality", "attribute": "mode"},
                          {"kind": "difference", "attribute": "level", "max_difference": 5}]}]}})";
  const std::vector<std::string> base = {
      "session",         "--config", dir.file("server.json"), "--days", "0.05",
      "--joins-per-day", "20000",    "--no-sensitivity",      "--out",  dir.file("r")};
  // Without them, the first ticket is refused and the run says why.
  const auto [refused, why] = mmsim(base);
  CHECK(refused == 2);
  CHECK_THAT(why, Contains("the queue refused a simulated player's ticket"));
  CHECK_THAT(why, Contains("attributes its rules read"));

  auto with = base;
  for (const char* a : {"--string", "mode=duel,ffa", "--number", "level=30,10"}) with.push_back(a);
  const auto [status, text] = mmsim(with);
  REQUIRE(status == 0);
  CHECK_THAT(text, Contains("session day: "));
  CHECK_THAT(read(dir.file("r/session_hours.csv")), Contains("\ntotal,"));

  CHECK_THAT(mmsim({"session", "--string", "mode="}).second,
             Contains("--string: expected NAME=VALUES"));
  CHECK_THAT(mmsim({"session", "--string", "mode=a,,b"}).second, Contains("1 to 256 bytes"));
  CHECK_THAT(mmsim({"session", "--number", "level=3"}).second, Contains("expected MEAN,SD"));
  CHECK_THAT(mmsim({"session", "--joins-per-day", "9000000", "--days", "3"}).second,
             Contains("at most 20 million joins"));
}

TEST_CASE("the report page shows its charts and figures in headless Chromium",
          "[sim][mmsim][browser]") {
  INFO("needs Debian's chromium and chromium-driver (./run test installs them)");
  REQUIRE(std::filesystem::exists(mm::test::chromium_path));
  REQUIRE(std::filesystem::exists(mm::test::chromedriver_path));
  mm::test::temp_dir dir;
  const std::string out = dir.file("report");
  REQUIRE(mmsim({"--days", "0.2", "--joins-per-day", "8000", "--players", "2000", "--out", out,
                 "--quiet"})
              .first == 0);
  mm::test::browser b(dir);
  b.open("file://" + std::filesystem::absolute(out + "/index.html").string());
  REQUIRE(b.wait_for("document.readyState === 'complete'"));
  // Ten charts, each drawn at its size with its lines or bars on the page.
  const mm::test::json charts = b.script(
      "return [...document.querySelectorAll('figure svg')].map(s => {"
      "  const r = s.getBoundingClientRect();"
      "  const marks = [...s.querySelectorAll('path, rect[x]')].filter(e => {"
      "    const box = e.getBBox(); return box.width > 0 && box.height > 0; }).length;"
      "  return {width: r.width, height: r.height, marks: marks,"
      "          title: s.querySelector('text').textContent}; });");
  REQUIRE(charts.size() == 10);
  for (const auto& c : charts) {
    INFO(c.dump());
    CHECK(c["width"] == 640);
    CHECK(c["height"] == 360);
    CHECK(c["marks"].get<int>() >= 3);
  }
  CHECK(charts[0]["title"] == "Players online and joining");
  CHECK(charts[4]["title"] == "Empty seats of running matches (share, by hour)");
  CHECK(charts[9]["title"] == "Who gets offered: Lorenz curves");
  // The page's figures are the CSV's: the day's matches.
  const std::string hours = read(out + "/session_hours.csv");
  const auto total = hours.substr(hours.find("\ntotal,") + 1);
  std::vector<std::string> cells;
  std::stringstream row(total);
  for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
  REQUIRE(cells.size() > 6);
  const std::string shown = b.script(
      "return [...document.querySelectorAll('th')].find(t => t.textContent === 'matches')"
      ".nextElementSibling.textContent;");
  CHECK(shown.rfind(cells[6] + " (", 0) == 0);  // "<matches> (<bot matches> with bots)"
  b.screenshot(dir.file("report.png"));
  CHECK(std::filesystem::file_size(dir.file("report.png")) > 10'000);
}

TEST_CASE("mmsim replay explains itself and refuses a broken recording with exit code 2",
          "[sim][mmsim][replay]") {
  const auto [help_status, help] = mmsim({"replay", "--help"});
  CHECK(help_status == 0);
  CHECK_THAT(help, Contains("RECORDING"));
  CHECK_THAT(help, Contains("--config"));
  CHECK_THAT(mmsim({"replay"}).second, Contains("which recording?"));
  CHECK_THAT(mmsim({"replay", "a", "b"}).second, Contains("one recording at a time"));
  CHECK_THAT(mmsim({"replay", "a", "--seed", "x"}).second, Contains("--seed: 'x'"));
  mm::test::temp_dir dir;
  std::ofstream(dir.file("recording-1-000001.jsonl"))
      << R"({"format":"matchmaker-ticket-recording","version":1,"queues":[)";
  const auto [status, out] = mmsim({"replay", dir.file("recording-1-000001.jsonl")});
  CHECK(status == 2);
  CHECK_THAT(out, Contains("recording-1-000001.jsonl:1: the file ends inside this line"));
  std::ofstream(dir.file("v9.jsonl")) << R"({"format":"matchmaker-ticket-recording","version":9})"
                                      << "\n";
  CHECK_THAT(mmsim({"replay", dir.file("v9.jsonl")}).second, Contains("version 9"));
  CHECK_THAT(mmsim({"replay", dir.file("missing")}).second, Contains("neither a file nor"));
}

TEST_CASE("mmsim replay of an async recording needs the player table", "[sim][mmsim][replay]") {
  mm::test::temp_dir dir;
  std::ofstream(dir.file("queries-1-000001.jsonl"))
      << R"({"format":"matchmaker-query-recording","version":1})"
      << "\n";
  const auto [status, out] = mmsim({"replay", dir.file("")});
  CHECK(status == 2);
  CHECK_THAT(out, Contains("--players FILE.db"));
}
