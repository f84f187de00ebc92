// The recording writer in process: a created line's body reads back to the
// same ticket through the HTTP reader, a left line is the outcome's JSON,
// and a writer that falls behind drops events, counts them and says so in
// a gap line, never holding more than max_pending.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "mm/testing/temp_dir.hpp"
#include "session_json.hpp"
#include "ticket_recording.hpp"

using namespace mm;
using namespace mm::server;

namespace {

actors::durable_ticket a_ticket(std::uint64_t id) {
  actors::durable_ticket d;
  d.id = id;
  d.queues = {"coop"};
  actors::session_player p;
  p.id = id * 10;
  p.mmr = 1512.25;
  p.numbers = {{"level", 42}};
  p.strings = {{"mode", "ctf \"night\""}};  // a quote to escape
  p.sets = {{"maps", {"a", "b"}}};
  p.rtt_ms = {{"paris", 18.5}, {"tokyo", 240}};
  p.has_location = true;
  p.latitude = 48.9;
  p.longitude = 2.4;
  d.ticket.players = {p};
  d.ticket.give_up_after_ms = 60000;
  return d;
}

std::vector<json> all_lines(const std::string& dir) {
  std::vector<json> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(e.path());
    for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  }
  return out;
}

}  // namespace

TEST_CASE("a recorded ticket reads back through the HTTP reader, its outcome as the API says it",
          "[recording]") {
  test::temp_dir dir;
  recording_settings s;
  s.queues = {"coop"};
  s.dir = dir.file("rec");
  ticket_recording r(s, json{{"queues", json::array()}});
  const auto d = a_ticket(7);
  r.created(d, 1'800'000'000'000);
  auto other = a_ticket(8);
  other.queues = {"duel"};  // not recorded, nor its outcome
  r.created(other, 1'800'000'000'001);
  actors::ticket_outcome o = actors::outcome_in("coop", 7, session::ticket_state::matched);
  o.match.id = 99;
  o.match.datacenter = "paris";
  o.match.teams = {{70, 71}};
  o.match.tickets = {7, 9};
  r.left(o, 1'800'000'000'500);
  r.left(actors::outcome_in("duel", 8, session::ticket_state::cancelled), 1'800'000'000'600);
  r.flush();
  const auto lines = all_lines(s.dir);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0]["format"] == recording_format);
  CHECK(lines[1]["event"] == "created");
  CHECK(lines[1]["t"] == 1'800'000'000'000);
  const ticket_body back = read_ticket_body(lines[1]["body"]);
  CHECK(back.queue == "coop");
  REQUIRE(back.ticket.players.size() == 1);
  const auto& p = back.ticket.players[0];
  CHECK(p.id == 70);
  CHECK(p.mmr == 1512.25);
  CHECK(p.strings[0].value == "ctf \"night\"");
  CHECK(p.sets[0].items == std::vector<std::string>{"a", "b"});
  CHECK(p.rtt_ms.size() == 2);
  CHECK(p.has_location);
  CHECK(back.ticket.give_up_after_ms == 60000);
  CHECK(lines[2]["event"] == "left");
  CHECK(lines[2]["outcome"] == outcome_json(o));
  CHECK(r.events() == 2);
}

TEST_CASE("a writer that falls behind drops events, counts them and writes a gap line",
          "[recording]") {
  test::temp_dir dir;
  recording_settings s;
  s.queues = {"coop"};
  s.dir = dir.file("rec");
  s.max_pending = 5;
  ticket_recording r(s, json::object());
  for (std::uint64_t i = 1; i <= 100; ++i) r.created(a_ticket(i), 1'800'000'000'000);
  r.flush();
  CHECK(r.dropped() > 0);
  CHECK(r.dropped() + r.events() == 100);
  // The gap is written before the next event after it (here, one more).
  r.created(a_ticket(500), 1'800'000'000'001);
  r.flush();
  std::uint64_t said = 0, created = 0;
  for (const auto& l : all_lines(s.dir)) {
    if (l.value("event", "") == "gap") said += l["dropped"].get<std::uint64_t>();
    if (l.value("event", "") == "created") ++created;
  }
  CHECK(said == r.dropped());
  CHECK(created == r.events());
}
