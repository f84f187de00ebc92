// The recording of chosen queues' ticket streams through the real
// matchmakerd: every ticket of a recorded queue once at its creation (a
// body POST /api/tickets takes) and once when it leaves, in that order,
// nothing of the other queues; files that start with the header a replay
// needs, rotate at their size and never outnumber max_files.
#include <filesystem>
#include <fstream>
#include <map>

#include "server_fixture.hpp"
#include "session_http.hpp"

using namespace mm;
using namespace mm::test;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

json recording_patch(const std::string& dir, std::uint64_t max_file_bytes, std::uint32_t files) {
  json p = session_patch();
  p["sessions"]["record"] = {
      {"queues", {"coop"}}, {"dir", dir}, {"max_file_bytes", max_file_bytes}, {"max_files", files}};
  return p;
}

std::vector<fs::path> recording_files(const std::string& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<json> lines_of(const fs::path& file) {
  std::vector<json> out;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

}  // namespace

TEST_CASE("a recorded queue's tickets are written once created and once gone, in order",
          "[server][session][recording]") {
  temp_dir rec;
  const std::string dir = rec.file("recordings");
  std::map<std::string, int> created, left;
  {
    live_server s(recording_patch(dir, 64ull << 20, 8), 100);
    std::vector<std::string> coop;
    for (std::uint64_t i = 0; i < 8; ++i) coop.push_back(create(s, solo("coop", 10 + i, 1500)));
    const auto lonely = create(s, solo("coop", 30, 1500));
    const auto d1 = create(s, solo("duel", 40, 1500));
    create(s, solo("duel", 41, 1510));
    for (const auto& id : coop)
      REQUIRE(s.get_json("/api/tickets/" + id + "?wait=10", test_token)["state"] == "matched");
    REQUIRE(s.get_json("/api/tickets/" + d1 + "?wait=10", test_token)["state"] == "matched");
    REQUIRE(del(s, "/api/tickets/" + lonely, test_token));
    // Counted on /metrics once written (within 200 ms).
    bool counted = false;
    for (int i = 0; i < 100 && !counted; ++i) {
      const auto m = s.get("/metrics", view_token);
      REQUIRE(m);
      counted = m->body.find("mm_session_recorded_events_total 18") != std::string::npos;
      if (!counted) std::this_thread::sleep_for(50ms);  // polls a live server's writer
    }
    CHECK(counted);
    REQUIRE(s.stop() == 0);
  }
  const auto files = recording_files(dir);
  REQUIRE(files.size() == 1);
  const auto lines = lines_of(files[0]);
  REQUIRE(lines.size() == 19);  // the header, 9 tickets created and gone
  const json& header = lines[0];
  CHECK(header["format"] == "matchmaker-ticket-recording");
  CHECK(header["version"] == 1);
  CHECK(header["recorded"] == json({"coop"}));
  CHECK(header["datacenters"].size() == 2);
  bool has_coop = false;
  for (const auto& q : header["queues"]) has_coop = has_coop || q["name"] == "coop";
  CHECK(has_coop);
  std::int64_t last_t = 0;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const json& l = lines[i];
    CHECK(l["t"].get<std::int64_t>() >= last_t);
    last_t = l["t"].get<std::int64_t>();
    if (l["event"] == "created") {
      const std::string id = l["ticket"];
      CHECK(l["body"]["queue"] == "coop");
      CHECK(l["body"]["players"][0]["rtt_ms"]["paris"] == 20);
      CHECK(++created[id] == 1);
    } else {
      REQUIRE(l["event"] == "left");
      const std::string id = l["outcome"]["ticket"];
      CHECK(created.count(id) == 1);  // after its creation
      CHECK(++left[id] == 1);
      CHECK((l["outcome"]["state"] == "matched" || l["outcome"]["state"] == "cancelled"));
    }
  }
  CHECK(created.size() == 9);
  CHECK(left.size() == 9);
}

TEST_CASE("recording files rotate at their size and the oldest go",
          "[server][session][recording]") {
  temp_dir rec;
  const std::string dir = rec.file("recordings");
  {
    live_server s(recording_patch(dir, 4096, 3), 100);
    std::vector<std::string> ids;
    for (std::uint64_t i = 0; i < 40; ++i) ids.push_back(create(s, solo("coop", 100 + i, 1500)));
    for (const auto& id : ids)
      REQUIRE(s.get_json("/api/tickets/" + id + "?wait=10", test_token)["state"] == "matched");
    REQUIRE(s.stop() == 0);
  }
  const auto files = recording_files(dir);
  CHECK(files.size() == 3);
  for (const auto& f : files) {
    CHECK(fs::file_size(f) <= 4096);
    const auto lines = lines_of(f);
    REQUIRE_FALSE(lines.empty());
    CHECK(lines[0]["format"] == "matchmaker-ticket-recording");
  }
  // The last file ends with the last ticket gone; the files are numbered in order.
  CHECK(lines_of(files.back()).back()["event"] == "left");
  CHECK(lines_of(files.front())[0]["file"].get<int>() <
        lines_of(files.back())[0]["file"].get<int>());
}

TEST_CASE("a recording directory that cannot be made stops the start, naming the key",
          "[server][session][recording]") {
  temp_dir rec;
  std::ofstream(rec.file("plain")) << "a file, not a directory";
  json c = recording_patch(rec.file("plain") + "/sub", 4096, 3);
  c["database"] = {{"path", rec.file("mm.db")}};
  c["http"] = {{"port", 0}};
  c["actor"] = {{"port", -1}};
  c["demo"] = {{"players", 0}};
  std::ofstream(rec.file("c.json")) << c.dump();
  const auto [status, out] = run_binary({MATCHMAKERD_BINARY, "--config", rec.file("c.json")});
  CHECK(status != 0);
  CHECK_THAT(out, Contains("sessions.record.dir"));
}
