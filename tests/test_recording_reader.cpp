// Reading a recording back for a replay (recording_reader.hpp): what the
// writer wrote reads back, routed as the server routes it; and a recording
// that is cut short, of another version or format, too large, too deep or
// wrong in any field is refused naming the file, the line and the problem.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "mm/testing/temp_dir.hpp"
#include "recording_reader.hpp"
#include "session_json.hpp"

using namespace mm;
using namespace mm::server;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

constexpr std::int64_t t0 = 1'800'000'123'000;  // 2027-01-15 08:02:03 UTC

json header() {
  session_settings s;
  return {{"format", recording_format},
          {"version", recording_format_version},
          {"file", 1},
          {"started_unix_ms", t0},
          {"recorded", {"coop"}},
          {"queues", queues_json(s.queues)},
          {"queue_template", ""},
          {"datacenters", datacenters_json(s)},
          {"detour_factor", 2.0}};
}

json player(std::uint64_t id, double mmr) {
  return {{"id", id}, {"mmr", mmr}, {"location", {{"latitude", 50}, {"longitude", 8}}}};
}

json created(std::int64_t t, const std::string& id, std::uint64_t player_id, double mmr) {
  return {{"t", t},
          {"event", "created"},
          {"ticket", id},
          {"body", {{"queue", "coop"}, {"players", {player(player_id, mmr)}}}}};
}

json left(std::int64_t t, const std::string& id, const std::string& state) {
  json o = {{"ticket", id}, {"queue", "coop"}, {"state", state}};
  if (state == "matched")
    o["match"] = {{"id", "00000000000000aa"}, {"datacenter", "frankfurt"},
                  {"teams", {{1, 2}}},        {"tickets", {id, "0000000000000002"}},
                  {"mmr_spread", 40},         {"worst_rtt_ms", 12.5},
                  {"bot_match", false}};
  return {{"t", t}, {"event", "left"}, {"outcome", o}};
}

// A recording file of these lines after the header; the text as written.
std::string file_text(const std::vector<json>& lines, const json& h = header()) {
  std::string out = h.dump() + "\n";
  for (const auto& l : lines) out += l.dump() + "\n";
  return out;
}

std::string write(const test::temp_dir& dir, const std::string& name, const std::string& text) {
  fs::create_directories(dir.file("rec"));
  const std::string path = dir.file("rec/" + name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

const std::vector<json> good_lines = {
    json{{"t", t0}, {"event", "queue"}, {"queue", "coop"}, {"seed", "18446744073709551615"}},
    created(t0 + 10, "0000000000000001", 1, 1500),
    created(t0 + 20, "0000000000000002", 2, 1540),
    json{{"t", t0 + 500}, {"event", "tick"}, {"queue", "coop"}},
    json{{"t", t0 + 500}, {"event", "late"}, {"queue", "coop"}, {"ticket", "0000000000000002"}},
    created(t0 + 900, "0000000000000003", 3, 1200),
    left(t0 + 1500, "0000000000000001", "matched"),
    json{{"t", t0 + 1500}, {"event", "tick"}, {"queue", "coop"}},
    json{{"t", t0 + 1990}, {"event", "cancel"}, {"queue", "coop"}, {"ticket", "0000000000000003"}},
    left(t0 + 2000, "0000000000000003", "cancelled"),
    left(t0 + 2100, "00000000000000ff", "expired"),  // created before the recording
    json{{"t", t0 + 2200}, {"event", "gap"}, {"dropped", 7}},
};

// The refusal of a recording made of `text`.
std::string refusal(const std::string& text, const recording_limits& limits = {}) {
  test::temp_dir dir;
  const std::string path = write(dir, "recording-1-000001.jsonl", text);
  try {
    read_recording(path, limits);
  } catch (const error& e) {
    CHECK(e.code() == errc::invalid_argument);
    return e.what();
  }
  FAIL("the recording was read");
  return "";
}

}  // namespace

TEST_CASE("a recording reads back: tickets, outcomes, ticks, seeds, late joins, cancel moments",
          "[recording][replay]") {
  test::temp_dir dir;
  write(dir, "recording-1-000001.jsonl", file_text(good_lines));
  const recording r = read_recording(dir.file("rec"));
  REQUIRE(r.tickets.size() == 3);
  CHECK(r.tickets[0].id == "0000000000000001");
  CHECK(r.tickets[0].queues == std::vector<std::string>{"coop"});
  CHECK(r.tickets[0].outcome.state == session::ticket_state::matched);
  CHECK(r.tickets[0].outcome.match ==
        std::vector<std::string>{"0000000000000001", "0000000000000002"});
  CHECK(r.tickets[0].outcome.worst_rtt_ms == 12.5);
  CHECK(r.tickets[1].outcome.state == session::ticket_state::waiting);
  CHECK(r.tickets[2].outcome.state == session::ticket_state::cancelled);
  CHECK(r.orphans == 1);
  CHECK(r.dropped == 7);
  CHECK(r.seeds.at("coop") == 18446744073709551615ull);
  CHECK(r.ticks.at("coop") == std::vector<std::int64_t>{t0 + 500, t0 + 1500});
  CHECK(r.first_unix_ms == t0);
  CHECK(r.last_unix_ms == t0 + 2200);
  CHECK(r.settings.queues.front().name == "coop");

  // Routed and timed for the replay: time 0 is the start of the UTC hour.
  const auto c = replay_config_of(r, r.settings, 1);
  const std::int64_t epoch = replay_epoch_unix_ms(r);
  CHECK(epoch % 3'600'000 == 0);
  CHECK(t0 - epoch < 3'600'000);
  REQUIRE(c.tickets.size() == 3);
  CHECK(c.tickets[0].created_ms == t0 + 10 - epoch);
  CHECK(c.tickets[1].late_after_ms == t0 + 500 - epoch);
  CHECK(c.tickets[2].recorded.at_ms == t0 + 2000 - epoch);
  CHECK(c.tickets[2].cancelled_ms == t0 + 1990 - epoch);  // the queue's own moment
  CHECK(c.tickets[0].cancelled_ms == -1);
  CHECK(c.ticks.at("coop") == std::vector<std::int64_t>{t0 + 500 - epoch, t0 + 1500 - epoch});
  CHECK(c.end_ms == t0 + 2200 - epoch);
  // A tick other than the recorded one: the replayed queue runs on its own
  // grid, and no ticket joins late.
  session_settings other = r.settings;
  other.queues.front().tick = std::chrono::milliseconds(250);
  const auto d = replay_config_of(r, other, 1);
  CHECK(d.ticks.empty());
  CHECK(d.tickets[1].late_after_ms == -1);
  CHECK(d.tickets[2].cancelled_ms == -1);
  // A queue the candidate lacks: the ticket is refused, naming why.
  other.queues.front().name = "ranked";
  const auto e = replay_config_of(r, other, 1);
  CHECK_THAT(e.tickets[0].refused, Contains("queue"));
}

TEST_CASE("a directory's files are read oldest first, and must share their configuration",
          "[recording][replay]") {
  test::temp_dir dir;
  write(dir, "recording-1-000002.jsonl", file_text({created(t0 + 50, "0000000000000005", 5, 1)}));
  write(dir, "recording-1-000001.jsonl", file_text({created(t0, "0000000000000004", 4, 1)}));
  write(dir, "notes.txt", "not a recording");
  json older = header();
  older["version"] = 2;  // recorded before an upgrade: read with the rest
  write(dir, "recording-0-000001.jsonl",
        file_text({created(t0 - 50, "0000000000000003", 3, 1)}, older));
  const recording r = read_recording(dir.file("rec"));
  REQUIRE(r.files.size() == 3);
  CHECK(r.tickets.front().id == "0000000000000003");

  json h = header();
  h["detour_factor"] = 3.0;
  write(dir, "recording-1-000003.jsonl", file_text({}, h));
  CHECK_THROWS_WITH(read_recording(dir.file("rec")),
                    Contains("000003.jsonl:1: recorded with other queues or datacenters"));
  test::temp_dir empty;
  fs::create_directories(empty.file("rec"));
  CHECK_THROWS_WITH(read_recording(empty.file("rec")), Contains("no recording-*.jsonl"));
  CHECK_THROWS_WITH(read_recording(empty.file("missing")), Contains("neither a file nor"));
}

TEST_CASE("a recording cut short, of another format or version, is refused naming the line",
          "[recording][replay]") {
  const std::string text = file_text(good_lines);
  // Cut anywhere inside the last line: never read as if whole.
  for (std::size_t cut = 1; cut < good_lines.back().dump().size(); cut += 7)
    CHECK_THAT(refusal(text.substr(0, text.size() - 1 - cut)),
               Contains(":13: the file ends inside this line"));
  CHECK_THAT(refusal(""), Contains("empty, no header"));
  json h = header();
  h["version"] = 99;
  CHECK_THAT(refusal(file_text({}, h)),
             Contains(":1: recording format version 99: this mmsim reads versions 1 to 3"));
  h.erase("version");
  CHECK_THAT(refusal(file_text({}, h)), Contains("version missing"));
  h = header();
  h["format"] = "something-else";
  CHECK_THAT(refusal(file_text({}, h)), Contains(":1: not a ticket recording"));
  h = header();
  h["queues"][0]["max_players"] = -4;
  CHECK_THAT(refusal(file_text({}, h)), Contains(":1: header:"));
  CHECK_THAT(refusal(header().dump() + "\n\x01\x02\xff binary\n"), Contains(":2:"));
}

TEST_CASE("a recording's events are checked field by field", "[recording][replay]") {
  const auto one = [](json line) { return refusal(file_text({std::move(line)})); };
  CHECK_THAT(one(json::array()), Contains(":2: a line must be a JSON object"));
  CHECK_THAT(one({{"event", "gap"}, {"dropped", 1}}), Contains(":2: t must be a unix time in ms"));
  CHECK_THAT(one({{"t", "soon"}, {"event", "gap"}}), Contains("t must be"));
  CHECK_THAT(one({{"t", t0}, {"event", "dance"}}), Contains(":2: event must be created, left"));
  CHECK_THAT(one({{"t", t0}, {"event", 7}}), Contains(":2: event must be created, left"));
  CHECK_THAT(one({{"t", t0}, {"event", "gap"}, {"dropped", -1}}), Contains("dropped must be"));
  json c = created(t0, "0000000000000001", 1, 1500);
  c["ticket"] = "../../etc";
  CHECK_THAT(one(c), Contains("ticket must be a ticket id"));
  c = created(t0, "0000000000000001", 1, 1500);
  c["body"]["players"][0]["mmr"] = "high";
  CHECK_THAT(one(c), Contains(":2: body.players[0].mmr"));
  c = created(t0, "0000000000000001", 1, 1500);
  CHECK_THAT(refusal(file_text({c, c})), Contains(":3: ticket 0000000000000001 created twice"));
  json l = left(t0, "0000000000000001", "matched");
  l["outcome"]["state"] = "vanished";
  CHECK_THAT(refusal(file_text({c, l})), Contains(":3: outcome.state 'vanished'"));
  l = left(t0, "0000000000000001", "matched");
  l["outcome"]["match"].erase("tickets");
  CHECK_THAT(refusal(file_text({c, l})), Contains(":3: outcome:"));
  CHECK_THAT(one({{"t", t0}, {"event", "queue"}, {"queue", "coop"}, {"seed", 12}}),
             Contains("seed must be a decimal number as text"));
  CHECK_THAT(
      one({{"t", t0}, {"event", "queue"}, {"queue", "coop"}, {"seed", "99999999999999999999"}}),
      Contains("seed must fit 64 bits"));
  CHECK_THAT(one({{"t", t0}, {"event", "tick"}}), Contains("queue must be a queue's name"));
  CHECK_THAT(one({{"t", t0}, {"event", "cancel"}, {"queue", "coop"}, {"ticket", 3}}),
             Contains(":2: ticket must be a ticket id"));
}

TEST_CASE("a recording too large or too deep is refused before it is held", "[recording][replay]") {
  recording_limits small;
  small.max_line_bytes = 1000;
  small.max_tickets = 2;
  small.max_ticks = 1;
  std::vector<json> lines = {created(t0, "0000000000000001", 1, 1500)};
  lines[0]["body"]["players"][0]["strings"] = {{"bio", std::string(900, 'x')}};
  CHECK_THAT(refusal(file_text(lines), small), Contains(":2: a line longer than 1000 bytes"));
  // A line with no end at all is refused at its bound, not read whole.
  CHECK_THAT(refusal(header().dump() + "\n" + std::string(50'000, '['), small),
             Contains("longer than 1000 bytes"));
  lines = {created(t0, "0000000000000001", 1, 1), created(t0, "0000000000000002", 2, 1),
           created(t0, "0000000000000003", 3, 1)};
  CHECK_THAT(refusal(file_text(lines), small), Contains(":4: more than 2 tickets"));
  lines = {json{{"t", t0}, {"event", "tick"}, {"queue", "coop"}},
           json{{"t", t0 + 1}, {"event", "tick"}, {"queue", "coop"}}};
  CHECK_THAT(refusal(file_text(lines), small), Contains(":3: more than 1 ticks"));
  recording_limits tiny_total;
  tiny_total.max_bytes = 100;
  CHECK_THAT(refusal(file_text({}), tiny_total),
             Contains("bytes, more than the 100 a replay reads"));
  // Events 40 days apart: a virtual clock would walk every tick between.
  lines = {json{{"t", t0}, {"event", "gap"}, {"dropped", 1}},
           json{{"t", t0 + 40ll * 86'400'000}, {"event", "gap"}, {"dropped", 1}}};
  CHECK_THAT(refusal(file_text(lines)), Contains("spans 40 days"));
  // Nesting deeper than the server's JSON bound.
  CHECK_THAT(refusal(header().dump() + "\n" + std::string(200, '[') + std::string(200, ']') + "\n"),
             Contains(":2:"));
}
