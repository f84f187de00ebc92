#include "session_actor_tick.hpp"

#include <caf/all.hpp>
#include <future>

#include "mm/actors/registration.hpp"
#include "mm/actors/session_queue_actor.hpp"

namespace mm::bench {

using namespace mm::actors;

namespace {

session_ticket to_message(const session::ticket_request& r) {
  session_ticket t;
  for (const auto& p : r.players) {
    session_player q;
    q.id = p.id;
    q.mmr = p.mmr;
    for (const auto& [name, ms] : p.rtt_ms) q.rtt_ms.push_back({name, ms});
    if (p.location) {
      q.has_location = true;
      q.latitude = p.location->latitude;
      q.longitude = p.location->longitude;
    }
    t.players.push_back(std::move(q));
  }
  return t;
}

// A journal that writes nothing: it takes the first tick's outcomes and says
// how many came.
session_journal_actor::behavior_type null_journal(session_journal_actor::pointer self,
                                                  std::promise<std::size_t>* first_tick) {
  (void)self;
  return {
      [](journal_atom, create_atom, durable_ticket& t) { return t.id; },
      [](journal_atom, cancel_atom, ticket_outcome&) { return true; },
      [first_tick](journal_atom, finish_atom, std::vector<ticket_outcome>& out) mutable {
        if (first_tick) first_tick->set_value(out.size());
        first_tick = nullptr;
      },
      [](journal_atom, reload_atom, std::string&) { return std::vector<durable_ticket>{}; },
      [](journal_atom, sync_atom) { return true; },
      [](journal_atom, journal_listener&) {},
      [](journal_atom, flush_atom) {},
      [](journal_atom, prune_atom) {},
  };
}

}  // namespace

actor_tick actor_first_tick(session::queue_config config, const session::latency_model& latency,
                            const std::vector<session::ticket_request>& tickets,
                            std::chrono::milliseconds tick) {
  caf::actor_system_config cfg;
  add_message_types<generic_profile>(cfg, "generic");
  caf::actor_system sys{cfg};
  std::promise<std::size_t> first_tick;
  auto done = first_tick.get_future();
  session_queue_actor_config c;
  config.tick = tick;
  c.queue = std::move(config);
  c.latency = latency;
  c.seed = 7;
  c.epoch = sys.clock().now();
  const session_journal_actor journal = sys.spawn(null_journal, &first_tick);
  c.journal = journal;
  std::uint64_t id = 1;
  for (const auto& r : tickets) c.restored.push_back({id++, {c.queue.name}, 0, to_message(r)});
  auto queue = sys.spawn(session_queue_actor, std::move(c));
  actor_tick out;
  out.outcomes = done.get();
  caf::scoped_actor self{sys};
  self->request(queue, caf::infinite, info_atom::value)
      .receive([&](session_queue_report& r) { out.ms = r.last_tick_ms; }, [](caf::error&) {});
  self->send_exit(queue, caf::exit_reason::user_shutdown);
  self->send_exit(journal, caf::exit_reason::user_shutdown);
  return out;
}

}  // namespace mm::bench
