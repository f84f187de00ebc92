// Explain through the session service and its queue actors, on CAF's
// deterministic scheduler and its virtual clock: a multi-queue ticket is
// explained in each of its queues at the virtual time, its stage moves on
// as the clock does, another credential's ticket and match do not exist
// for a caller, and other credentials' candidates come without their ids.
#include <catch2/catch.hpp>

#include "session_fixture.hpp"

using namespace mm;
using namespace mm::actors;
using namespace std::chrono_literals;
using session::latency_stage;
using session::refusal;
using test::party;
using test::session_fixture;

namespace {

using explanations = std::vector<session::explanation>;

std::pair<std::optional<explanations>, caf::error> explain(session_fixture& x, std::uint64_t id,
                                                           const std::string& credential) {
  return x.f.ask<explanations>(x.s, explain_atom::value, id, std::uint32_t{1000}, credential);
}

}  // namespace

TEST_CASE("a ticket is explained in each of its queues at the virtual time, for its credential",
          "[session][actors][explain]") {
  session_fixture x;
  session_ticket mine = party({1500}, 1);
  mine.also_queues = {"duel"};
  mine.credential = "a";
  const auto id = x.create("coop", mine);
  session_ticket far = party({1900}, 2);  // 400 away: coop's skill rule (200) refuses it
  far.credential = "b";
  const auto other = x.create("coop", far);
  x.f.advance(4s);

  auto [e, err] = explain(x, id, "a");
  INFO(x.f.sys().render(err));
  REQUIRE(e);
  REQUIRE(e->size() == 2);
  const auto& coop = e->at(0).queue == "coop" ? e->at(0) : e->at(1);
  const auto& duel = e->at(0).queue == "coop" ? e->at(1) : e->at(0);
  CHECK(coop.waited_ms == 4000);
  CHECK(coop.stage == latency_stage::ideal);
  CHECK(coop.next_stage_in_ms == 6000);
  CHECK(coop.refused_by_rule == std::vector<std::uint64_t>{1});
  REQUIRE(coop.nearest.size() == 1);
  CHECK(coop.nearest[0].ticket == 0);  // another credential's: no id
  CHECK(coop.nearest[0].why == refusal::rule);
  CHECK(duel.waiting == 0);
  CHECK(duel.verdict == session::wait_verdict::no_candidates);

  // An admin sees the candidate's id; another credential sees no ticket.
  auto [as_admin, admin_err] = explain(x, id, "");
  REQUIRE(as_admin);
  for (const auto& q : *as_admin)
    if (q.queue == "coop") CHECK(q.nearest.at(0).ticket == other);
  auto [none, refused] = explain(x, id, "b");
  CHECK_FALSE(none);
  CHECK(error_code_of(refused) == errc::not_found);

  // Ten seconds on, the ticket's latency stage has moved on.
  x.f.advance(7s);
  auto [later, later_err] = explain(x, id, "a");
  REQUIRE(later);
  for (const auto& q : *later)
    if (q.queue == "coop") CHECK(q.stage == latency_stage::expand);

  // A cancelled ticket waits no more.
  REQUIRE(x.cancel(id));
  auto [gone, gone_err] = explain(x, id, "a");
  CHECK_FALSE(gone);
  CHECK(error_code_of(gone_err) == errc::not_found);
}

TEST_CASE("a running match's open seats are explained to its game server only",
          "[session][actors][explain][backfill]") {
  session_fixture x;
  backfill_registration r;
  r.queue = "coop";
  r.match_id = "m1";
  r.datacenter = "paris";
  r.teams = {party({1000, 1020}, 100).players};
  r.credential = "gs";
  REQUIRE(x.f.ask<backfill_state>(x.s, backfill_atom::value, create_atom::value, r).first);
  session_ticket far = party({2000}, 1);
  far.credential = "player";
  x.create("coop", far);
  x.f.advance(2s);
  const auto e =
      x.f.ask<session::explanation>(x.s, backfill_atom::value, explain_atom::value,
                                    std::string("m1"), std::uint32_t{10}, std::string("gs"));
  REQUIRE(e.first);
  CHECK(e.first->running_match);
  CHECK(e.first->players == 2);
  CHECK(e.first->waited_ms == 2000);
  CHECK(e.first->refused_by_rule == std::vector<std::uint64_t>{1});
  CHECK(e.first->nearest.at(0).ticket == 0);
  const auto theirs =
      x.f.ask<session::explanation>(x.s, backfill_atom::value, explain_atom::value,
                                    std::string("m1"), std::uint32_t{10}, std::string("other"));
  CHECK_FALSE(theirs.first);
  CHECK(error_code_of(theirs.second) == errc::not_found);
}

TEST_CASE("explanations are bounded per second across callers", "[session][actors][explain]") {
  auto c = test::two_queues();
  c.explains_per_s = 2;
  session_fixture x(c);
  const auto id = x.create("coop", party({1500}, 1));
  CHECK(explain(x, id, "").first);
  CHECK(explain(x, id, "someone").second);  // not theirs: not_found, a token spent all the same
  auto [refused, why] = explain(x, id, "");
  CHECK_FALSE(refused);
  CHECK(error_code_of(why) == errc::limit_reached);
  CHECK_THAT(x.f.sys().render(why), Catch::Matchers::Contains("sessions.explains_per_s"));
  x.f.advance(1s);
  CHECK(explain(x, id, "").first);
}

TEST_CASE("each queue counts the main reasons of a few waiting tickets every interval",
          "[session][actors][explain]") {
  auto c = test::two_queues();
  c.wait_reasons_every = 2s;
  session_fixture x(c);
  x.create("coop", party({1500}, 1));
  x.create("coop", party({1900}, 2));           // 400 apart: the skill rule (200) keeps them apart
  for (int i = 0; i < 5; ++i) x.f.advance(1s);  // ticks at 1..5 s: samples at 1, 3 and 5 s
  const auto reports = x.f.ask<std::vector<session_queue_report>>(x.s, info_atom::value).first;
  REQUIRE(reports);
  for (const auto& r : *reports) {
    if (r.queue == "duel") {
      CHECK(r.wait_reasons.empty());  // nobody waits there: nothing drawn
      continue;
    }
    REQUIRE(r.wait_reasons == std::vector<std::string>{"rule:skill"});
    CHECK(r.wait_reason_counts == std::vector<std::uint64_t>{24});  // 3 draws of 8
  }
}
