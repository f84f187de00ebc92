// The async traffic's recording and its replay: what the engines' observer
// saw reads back call for call; a broken recording is refused naming the
// file, the line and the field; the replay honours each request's
// exclusions and the game's removals, is deterministic, and its figures are
// the calls counted by hand.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>

#include "mm/engine/random.hpp"
#include "mm/engine/synthetic_players.hpp"
#include "mm/storage/player_store.hpp"
#include "mm/testing/temp_dir.hpp"
#include "query_recording.hpp"
#include "query_recording_reader.hpp"

using namespace mm;
using namespace mm::server;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

json recorded_header() {
  server_config c;
  const json all = json::parse(describe(c));
  return {{"profile", all["profile"]}, {"matchmaker", all["matchmaker"]}, {"instances", 2}};
}

match_request<generic_query> a_request(player_id attacker, float mmr) {
  match_request<generic_query> r;
  r.query.attacker = attacker;
  r.query.mmr = mmr;
  r.query.attributes = {1, 2, 3, 4};
  r.num_retries = 2;
  r.excluded_player_ids = {7, 9};
  r.allow_fake_opponent = false;
  return r;
}

// The refusal of an async recording made of `lines` after a good header.
std::string refusal(const std::vector<std::string>& lines, json header = {}) {
  test::temp_dir dir;
  if (header.is_null()) {
    header = recorded_header();
    header["format"] = query_recording_format;
    header["version"] = query_recording_format_version;
  }
  std::ofstream out(dir.file("queries-1-000001.jsonl"), std::ios::binary);
  out << header.dump() << "\n";
  for (const auto& l : lines) out << l;
  out.close();
  try {
    read_query_recording(dir.file("queries-1-000001.jsonl"));
  } catch (const error& e) {
    return e.what();
  }
  FAIL("the recording was read");
  return "";
}

const std::string query_line =
    R"({"t":1800000000000,"event":"query","instance":1,"request":{"attacker_id":5,"mmr":1500,)"
    R"("attributes":[1,2,3,4],"retries":1,"excluded_ids":[]},"allow_fake_opponent":true,)"
    R"("result":"success","opponent":12})";

}  // namespace

TEST_CASE("what an engine's observer saw reads back call for call", "[recording][replay]") {
  test::temp_dir dir;
  query_recording_settings s;
  s.enabled = true;
  s.dir = dir.file("rec");
  {
    const auto r = std::make_shared<query_recording>(s, recorded_header());
    auto seen = observer_of(r, 1);
    match_response<generic_model> answer;
    answer.type = match_type::success;
    answer.best_candidate_id = 42;
    seen->answered(a_request(5, 1512.5f), answer);
    const generic_model models[] = {generic_model(8, 1400.f, {0, 1, 2, 3})};
    seen->updated(8, models);
    seen->enrolled(models);
    seen->removed(8);
    r->flush();
    CHECK(r->events() == 4);
  }
  const query_recording_data d = read_query_recording(s.dir);
  REQUIRE(d.calls.size() == 4);
  CHECK(d.recorded.instances == 2);
  const auto& q = d.calls[0];
  CHECK(q.what == sim::recorded_call::kind::query);
  CHECK(q.instance == 1);
  CHECK(q.request.query.attacker == 5);
  CHECK(q.request.query.mmr == 1512.5f);
  CHECK(q.request.query.attributes == std::array<std::uint32_t, 4>{1, 2, 3, 4});
  CHECK(q.request.num_retries == 2);
  CHECK(q.request.excluded_player_ids == std::vector<player_id>{7, 9});
  CHECK_FALSE(q.request.allow_fake_opponent);
  CHECK(q.recorded == match_type::success);
  CHECK(q.recorded_opponent == 42);
  CHECK(d.calls[1].what == sim::recorded_call::kind::update);
  CHECK(d.calls[1].id == 8);
  REQUIRE(d.calls[1].models.size() == 1);
  CHECK(d.calls[1].models[0].mmr == 1400.f);
  CHECK(d.calls[1].models[0].attributes == std::array<std::uint32_t, 4>{0, 1, 2, 3});
  CHECK(d.calls[2].what == sim::recorded_call::kind::enroll);
  CHECK(d.calls[3].what == sim::recorded_call::kind::remove);
  CHECK(d.calls[3].id == 8);
}

TEST_CASE(
    "an async recording cut short, of another format or version, or wrong in a field, is "
    "refused naming it",
    "[recording][replay]") {
  CHECK_THAT(refusal({query_line}), Contains(":2: the file ends inside this line"));
  json h = recorded_header();
  h["format"] = query_recording_format;
  h["version"] = 7;
  CHECK_THAT(refusal({}, h), Contains(":1: async recording format version 7"));
  h["format"] = "matchmaker-ticket-recording";
  CHECK_THAT(refusal({}, h), Contains(":1: not an async recording"));
  h["format"] = 12;
  CHECK_THAT(refusal({}, h), Contains(":1: not an async recording"));
  h = recorded_header();
  h["format"] = query_recording_format;
  h["version"] = query_recording_format_version;
  h["matchmaker"]["player_cache_size"] = -1;
  CHECK_THAT(refusal({}, h), Contains("the recorded configuration"));
  const auto with = [](std::string line, const std::string& from, const std::string& to) {
    line.replace(line.find(from), from.size(), to);
    return line + "\n";
  };
  CHECK_THAT(refusal({with(query_line, R"("mmr":1500)", R"("mmr":"high")")}), Contains(":2: mmr"));
  CHECK_THAT(refusal({with(query_line, R"("instance":1)", R"("instance":5000)")}),
             Contains(":2: instance must be 0 to 1023"));
  CHECK_THAT(refusal({with(query_line, R"("result":"success")", R"("result":"maybe")")}),
             Contains(":2: result must be"));
  CHECK_THAT(refusal({with(query_line, R"("event":"query")", R"("event":"dance")")}),
             Contains(":2: event must be query"));
  CHECK_THAT(refusal({with(query_line, R"("event":"query")", R"("event":[1])")}),
             Contains(":2: event must be query"));
  CHECK_THAT(refusal({with(query_line, R"("retries":1)", R"("retries":1,"max_retries":3)")}),
             Contains("max_retries"));
  std::string models = R"({"t":1800000000000,"event":"update","instance":0,"id":3,"models":[)";
  for (int i = 0; i < 65; ++i)
    models += std::string(i ? "," : "") + R"({"id":3,"mmr":1,"attributes":[]})";
  CHECK_THAT(refusal({models + "]}\n"}), Contains("at most 64 models"));
  CHECK_THAT(refusal({R"({"t":1800000000000,"event":"remove","instance":0,"id":"x"})"
                      "\n"}),
             Contains(":2: id"));
  recording_limits small;
  small.max_calls = 1;
  test::temp_dir dir;
  h = recorded_header();
  h["format"] = query_recording_format;
  h["version"] = query_recording_format_version;
  std::ofstream(dir.file("queries-1-000001.jsonl")) << h.dump() << "\n"
                                                    << query_line << "\n"
                                                    << query_line << "\n";
  CHECK_THROWS_WITH(read_query_recording(dir.file("queries-1-000001.jsonl"), small),
                    Contains(":3: more than 1 calls"));
}

namespace {

// A player table of `n` synthetic players (the demo's population).
void write_table(const std::string& path, std::size_t n) {
  sqlite_store store(path);
  rng r(3);
  const auto rows = make_players(synthetic_population{}, n, 1, r);
  store.upsert_players(rows);
}

}  // namespace

TEST_CASE("the async replay honours exclusions and removals, is deterministic, and counts by hand",
          "[recording][replay]") {
  test::temp_dir dir;
  const std::string table = dir.file("players.db");
  write_table(table, 3000);
  server_config engines;
  engines.opts.database_scan_first_delay = std::chrono::milliseconds(0);
  engines.opts.database_scan_tick = std::chrono::milliseconds(60'000);
  sim::async_replay_config c;
  c.profile = engines.profile;
  c.engine = engines.opts;
  c.instances = 2;
  c.database = table;
  rng r(9);
  std::vector<player_id> removed;
  for (int i = 0; i < 3000; ++i) {
    sim::recorded_call x;
    x.at_ms = 1000 + i * 20;  // all between two scans (at 0 and at 60 s)
    x.instance = r.below(2);
    if (i % 50 == 25) {
      x.what = sim::recorded_call::kind::remove;
      x.id = 1 + r.below(3000);
      x.instance = static_cast<std::uint32_t>(x.id % 2);
      removed.push_back(x.id);
    } else {
      x.request.query.attacker = 1 + r.below(3000);
      x.request.query.mmr = static_cast<float>(1500 + 300 * r.normal());
      x.request.num_retries = r.below(4);
      for (int k = 0; k < 20; ++k) x.request.excluded_player_ids.push_back(1 + r.below(3000));
      x.recorded = i % 3 == 0 ? match_type::none_found : match_type::success;
      x.recorded_opponent = 1 + r.below(3000);
    }
    c.calls.push_back(std::move(x));
  }
  c.end_ms = 70'000;
  const sim::async_replay_report a = sim::replay_async(c);
  const sim::async_replay_report b = sim::replay_async(c);
  CHECK(a.replayed == b.replayed);
  CHECK(a.opponents == b.opponents);
  CHECK(a.scans == 4);  // two instances, at 0 and at 60 s
  std::uint64_t queries = 0, success = 0, recorded_success = 0;
  std::set<player_id> gone;
  for (std::size_t i = 0; i < c.calls.size(); ++i) {
    const auto& x = c.calls[i];
    if (x.what == sim::recorded_call::kind::remove) {
      gone.insert(x.id);
      continue;
    }
    ++queries;
    recorded_success += x.recorded == match_type::success;
    if (a.replayed[i] != match_type::success) continue;
    ++success;
    const player_id o = a.opponents[i];
    CHECK(o != x.request.query.attacker);
    CHECK(std::find(x.request.excluded_player_ids.begin(), x.request.excluded_player_ids.end(),
                    o) == x.request.excluded_player_ids.end());
    CHECK(gone.count(o) == 0);  // removed, and no scan since
  }
  CHECK(success > queries / 2);
  CHECK(a.totals.replayed.queries == queries);
  CHECK(a.totals.replayed.success == success);
  CHECK(a.totals.recorded.success == recorded_success);
  CHECK(a.updates == removed.size());
}
