// A session service on CAF's deterministic scheduler with a real SQLite
// journal in a temporary directory: tickets, owners and restarts of the
// service from its store, all on the virtual clock.
#pragma once

#include <catch2/catch.hpp>
#include <memory>
#include <vector>

#include "actor_fixture.hpp"
#include "mm/actors/errors.hpp"
#include "mm/actors/session_service.hpp"
#include "mm/testing/temp_dir.hpp"

namespace mm::test {

using outcomes = std::shared_ptr<std::vector<actors::ticket_outcome>>;

inline actors::session_interfaces::owner spawn_owner(actor_fixture& f, outcomes got) {
  return f.sys().spawn([got]() -> actors::session_interfaces::owner::behavior_type {
    return {[got](actors::ticket_atom, const actors::ticket_outcome& o) { got->push_back(o); }};
  });
}

// Players first, first + 1, ... with these MMRs, 20 ms from paris.
inline actors::session_ticket party(std::vector<double> mmr, player_id first) {
  actors::session_ticket t;
  for (std::size_t i = 0; i < mmr.size(); ++i) {
    actors::session_player p;
    p.id = first + i;
    p.mmr = mmr[i];
    p.rtt_ms = {{"paris", 20}, {"tokyo", 250}};
    t.players.push_back(p);
  }
  return t;
}

// 4-player co-op over two datacenters with the staged latency policy, and a
// 1v1 duel; a tick a second.
inline actors::session_service_config two_queues() {
  actors::session_service_config c;
  c.latency =
      session::latency_model({{"paris", {48.9, 2.4}, "eu"}, {"tokyo", {35.7, 139.7}, "asia"}});
  session::queue_config coop;
  coop.name = "coop";
  coop.min_players = coop.max_players = 4;
  coop.teams = 0;
  coop.max_party_size = 4;
  coop.latency = session::latency_stages{};
  session::rule skill;
  skill.name = "skill";
  skill.max_difference = 200;
  coop.rules = {skill};
  session::queue_config duel;
  duel.name = "duel";
  session::rule near;
  near.name = "skill";
  duel.rules = {near};
  c.queues = {coop, duel};
  return c;
}

inline actors::session_service_pointer service_of(const actors::session_service_actor& s) {
  auto* p = dynamic_cast<actors::session_service_pointer>(caf::actor_cast<caf::abstract_actor*>(s));
  REQUIRE(p);
  return p;
}

// The queue actor running the service's slot `slot` (reached through its
// supervisor's state; the test scheduler runs everything on this thread).
inline actors::session_queue_actor_type queue_actor(const actors::session_service_actor& s,
                                                    std::size_t slot) {
  auto sup = service_of(s)->state.slots.at(slot);
  auto* p = dynamic_cast<actors::session_queue_supervisor_pointer>(
      caf::actor_cast<caf::abstract_actor*>(sup));
  REQUIRE(p);
  return p->state.queue;
}

class session_fixture {
 public:
  explicit session_fixture(actors::session_service_config c = two_queues())
      : store(std::make_shared<sqlite_store>(dir.file("journal.db"))),
        start_(f.sys().clock().now()) {
    owner = spawn_owner(f, got);
    start(std::move(c));
  }
  ~session_fixture() {
    stop();
    caf::anon_send_exit(owner, caf::exit_reason::user_shutdown);
  }

  // A service over the store, taking back what it holds (a restart).
  void start(actors::session_service_config c) {
    config = c;
    c.store = store;
    c.ids = std::make_shared<session::id_source>(
        session::id_key{0x1234, 0x5678}, [s = store] { return s->reserve_id_generation(); });
    c.detached_journal = false;
    c.unix_epoch_ms = unix_now();
    actors::adopt_v8_journal(*store, c.service_name, c.ids->permutation());
    c.restored = actors::load_session_journal(*store, c.service_name, &c.ids->permutation(),
                                              c.unix_epoch_ms, c.outcome_retention, c.max_outcomes);
    svc = f.sys().spawn(actors::session_service, std::move(c));
    s = caf::actor_cast<actors::session_interfaces::service>(svc);
    f.run();
  }
  void stop() {
    if (!svc) return;
    caf::anon_send_exit(svc, caf::exit_reason::user_shutdown);
    f.run();
    svc = nullptr;
    s = nullptr;
  }
  // The unix time the virtual clock stands for.
  std::int64_t unix_now() {
    return 1'800'000'000'000 +
           std::chrono::duration_cast<std::chrono::milliseconds>(f.sys().clock().now() - start_)
               .count();
  }

  std::pair<std::optional<std::uint64_t>, caf::error> ask_create(
      const std::string& queue, const actors::session_ticket& t,
      const actors::session_interfaces::owner& who) {
    return f.ask<std::uint64_t>(s, actors::create_atom::value, queue, t, who);
  }
  std::uint64_t create(const std::string& queue, const actors::session_ticket& t) {
    auto [id, err] = ask_create(queue, t, owner);
    INFO(f.sys().render(err));
    REQUIRE(id);
    return *id;
  }
  // The refusal's text, checked to be the caller's fault.
  std::string refused(const std::string& queue, const actors::session_ticket& t) {
    auto [id, err] = ask_create(queue, t, owner);
    REQUIRE_FALSE(id);
    const auto code = error_code_of(err);
    CHECK((code == errc::invalid_argument || code == errc::conflict));
    return f.sys().render(err);
  }
  std::optional<actors::ticket_outcome> status(std::uint64_t id) {
    return f.ask<actors::ticket_outcome>(s, actors::status_atom::value, id).first;
  }
  session::ticket_state state(std::uint64_t id) {
    auto o = status(id);
    REQUIRE(o);
    return o->state;
  }
  std::optional<bool> cancel(std::uint64_t id) {
    return f.ask<bool>(s, actors::cancel_atom::value, id).first;
  }

  actor_fixture f;
  temp_dir dir;
  std::shared_ptr<sqlite_store> store;
  outcomes got = std::make_shared<std::vector<actors::ticket_outcome>>();
  actors::session_interfaces::owner owner;
  actors::session_service_config config;
  actors::session_service_actor svc;
  actors::session_interfaces::service s;

 private:
  caf::actor_clock::time_point start_;
};

}  // namespace mm::test
