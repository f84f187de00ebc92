// A dry run of a candidate configuration on the real matchmakerd's recording
// (docs/operations.md, "A dry run before applying"): the version in force
// replays what happened, the candidate's side gives the same figures as
// `mmsim replay` of the same recording and candidate, within its CPU
// budget; without a recording it says so.
#include <algorithm>
#include <cmath>
#include <fstream>

#include "mm/engine/random.hpp"
#include "replay_csv.hpp"

using namespace mm;
using namespace mm::test;
using namespace std::chrono_literals;

namespace {

// Solo tickets into the ranked queue, MMR skewed around 1500 (some far off,
// who expire under the tight rule), until every one has left its queue.
void play(const live_server& s) {
  mm::rng r(17);
  std::vector<std::string> ids;
  for (std::uint64_t i = 0; i < 90; ++i) {
    const double mmr = std::clamp(1500 + 250 * r.normal() * (i % 5 == 0 ? 2 : 1), 0.0, 4000.0);
    ids.push_back(create(s, solo("ranked", 1000 + i, mmr)));
    // Spreads the arrivals over ticks (load shaping, not synchronisation).
    if (i % 15 == 14) std::this_thread::sleep_for(120ms);
  }
  for (const auto& id : ids)
    REQUIRE(s.get_json("/api/tickets/" + id + "?wait=10", test_token)["state"] != "waiting");
}

json ranked_document(double max_difference) {
  return {{"queues", ranked_patch(max_difference)["sessions"]["queues"]}};
}

}  // namespace

TEST_CASE(
    "dry run: the candidate's side is mmsim replay's, the version in force replays what "
    "happened, within the CPU budget",
    "[server][session][recording][replay][live_config]") {
  temp_dir rec;
  const std::string dir = rec.file("recordings");
  json patch = ranked_patch(60);
  patch["sessions"]["record"] = {{"queues", {"ranked"}}, {"dir", dir}};
  live_server s(patch, 100);
  play(s);

  const json run = s.post_json("/api/admin/config/sessions/dry-run",
                               {{"document", ranked_document(400)}}, admin_token);
  INFO(run.dump());
  const json& now = run["current"]["queues"]["ranked"];
  const json& next = run["candidate"]["queues"]["ranked"];
  const json& recorded = run["recorded"]["figures"];
  CHECK(run["recording"]["tickets"] == 90);
  CHECK(run["current"]["version"] == 1);
  // The version in force replays what happened.
  CHECK(now["tickets"] == 90);
  CHECK(std::abs(now["matched"].get<double>() - recorded["matched"].get<double>()) <= 2);
  CHECK(recorded["expired"].get<int>() > 0);
  // The wider rule matches those who expired.
  CHECK(next["matched"].get<int>() > now["matched"].get<int>());
  CHECK(next["expired_share"].get<double>() < now["expired_share"].get<double>());
  CHECK(next["mmr_spread"]["mean"].get<double>() > now["mmr_spread"]["mean"].get<double>());
  // Its CPU time within the documented budget of 20 s.
  CHECK(run["cpu_seconds"].get<double>() < 20);
  CHECK(run["wall_seconds"].get<double>() < 60);
  // Nothing was applied.
  CHECK(s.get_json("/api/admin/config/sessions", view_token)["version"] == 1);
  s.post_json("/api/admin/config/sessions/dry-run",
              {{"document", ranked_document(400)}, {"window_s", 5}}, admin_token, 400);
  // The same through mmctl, in words and JSON.
  std::ofstream(rec.file("wide-doc.json")) << ranked_document(400).dump();
  const auto [by_mmctl, said] =
      run_binary({MMCTL_BINARY, "config", "dry-run", rec.file("wide-doc.json"), "--window", "3600"},
                 {{"MMCTL_URL", s.url()}, {"MMCTL_TOKEN", admin_token}});
  INFO(said);
  CHECK(by_mmctl == 0);
  CHECK(said.find("candidate") != std::string::npos);
  CHECK(said.find("\"candidate\"") != std::string::npos);
  REQUIRE(s.stop() == 0);

  // mmsim replay of the same recording and candidate: the same figures.
  std::ofstream(rec.file("wide.json")) << ranked_patch(400).dump();
  const auto [status, out] = run_binary(
      {MMSIM_BINARY, "replay", dir, "--config", rec.file("wide.json"), "--out", rec.file("wide")});
  INFO(out);
  REQUIRE(status == 0);
  const std::string csv = rec.file("wide/replay_queues.csv");
  for (const char* n : {"tickets", "matched", "cancelled", "expired", "failed", "waiting"})
    CHECK(csv_value(csv, "ranked", std::string("replayed_") + n) == next[n].get<double>());
  CHECK(std::abs(csv_value(csv, "ranked", "replayed_time_to_match_mean_s") -
                 next["time_to_match_s"]["mean"].get<double>()) < 1e-3);
  CHECK(std::abs(csv_value(csv, "ranked", "replayed_time_to_match_p95_s") -
                 next["time_to_match_s"]["p95"].get<double>()) < 1e-3);
  CHECK(std::abs(csv_value(csv, "ranked", "replayed_mmr_spread_mean") -
                 next["mmr_spread"]["mean"].get<double>()) < 0.1);
  CHECK(std::abs(csv_value(csv, "ranked", "replayed_worst_rtt_mean_ms") -
                 next["worst_rtt_ms"]["mean"].get<double>()) < 0.1);
}

TEST_CASE("dry run: without a recording it says so", "[server][live_config]") {
  live_server s(session_patch());
  const json doc = s.get_json("/api/admin/config/sessions", view_token)["document"];
  const json none =
      s.post_json("/api/admin/config/sessions/dry-run", {{"document", doc}}, admin_token, 404);
  CHECK(none["error"].get<std::string>().find("no recording") != std::string::npos);
  s.post_json("/api/admin/config/sessions/dry-run", {{"document", doc}}, test_token, 403);
}
