#include "session_actor_tick.hpp"

#include <caf/all.hpp>
#include <thread>

#include "mm/actors/registration.hpp"
#include "mm/actors/session_queue_actor.hpp"
#include "mm/actors/worker_idle.hpp"

namespace mm::bench {

using namespace mm::actors;

namespace {

// The message of a ticket, its players' ids moved up by `shift`.
session_ticket to_message(const session::ticket_request& r, player_id shift) {
  session_ticket t;
  for (const auto& p : r.players) {
    session_player q;
    q.id = p.id + shift;
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

// A journal that writes nothing: new tickets are written at once.
session_journal_actor::behavior_type null_journal(session_journal_actor::pointer) {
  return {
      [](journal_atom, create_atom, durable_ticket& t) { return t.id; },
      [](journal_atom, cancel_atom, ticket_outcome&) { return true; },
      [](journal_atom, finish_atom, std::vector<ticket_outcome>&) {},
      [](journal_atom, finish_atom, tick_outcomes&) {},
      [](journal_atom, reload_atom, std::string&) { return std::vector<durable_ticket>{}; },
      [](journal_atom, guest_atom, std::vector<std::uint64_t>&) {
        return std::vector<durable_ticket>{};
      },
      [](journal_atom, forget_atom, std::vector<std::uint64_t>&) {},
      [](journal_atom, backfill_atom, backfill_state&, bool) { return true; },
      [](journal_atom, claim_atom, backfill_atom, std::string&) { return true; },
      [](journal_atom, release_atom, backfill_atom, std::string&) {},
      [](journal_atom, reload_atom, backfill_atom, std::string&) {
        return std::vector<backfill_state>{};
      },
      [](journal_atom, sync_atom) { return true; },
      [](journal_atom, sync_atom, std::string&) { return true; },
      [](journal_atom, journal_listener&) {},
      [](journal_atom, flush_atom) {},
      [](journal_atom, prune_atom) {},
  };
}

}  // namespace

actor_ticks time_actor_ticks(session::queue_config config, const session::latency_model& latency,
                             const std::vector<session::ticket_request>& tickets,
                             std::chrono::milliseconds tick, int rounds) {
  caf::actor_system_config cfg;
  add_message_types<generic_profile>(cfg, "generic");
  // As matchmakerd runs its workers (actor.worker_idle's default): an idle
  // worker waits instead of polling every 50 µs, which on 2 cores took the
  // tick's core from it hundreds of times a tick.
  set_worker_idle(cfg, worker_idle::sleep);
  caf::actor_system sys{cfg};
  session_queue_actor_config c;
  config.tick = tick;
  c.queue = std::move(config);
  c.latency = latency;
  c.seed = 7;
  const auto epoch = sys.clock().now();
  c.epoch = epoch;
  const session_journal_actor journal = sys.spawn(null_journal);
  c.journal = journal;
  std::uint64_t id = 1;
  for (const auto& r : tickets) c.restored.push_back({id++, {c.queue.name}, 0, to_message(r, 0)});
  const std::string queue_name = c.queue.name;
  auto queue = sys.spawn(session_queue_actor, std::move(c));
  caf::scoped_actor self{sys};
  const auto report = [&] {
    session_queue_report out;
    self->request(queue, caf::infinite, info_atom::value)
        .receive([&](session_queue_report& r) { out = std::move(r); }, [](caf::error&) {});
    return out;
  };
  const auto left = [](const session_queue_report& r) { return r.matched + r.expired + r.failed; };
  // The tick that took the tickets: the first report where some left (asked
  // every 20 ms; ticks are `tick` apart, so it is still the last one).
  const auto next_tick = [&](std::uint64_t left_before) {
    for (;;) {
      const session_queue_report r = report();
      if (left(r) > left_before)
        return actor_tick{r.last_tick_ms, static_cast<std::size_t>(left(r) - left_before)};
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  };
  actor_ticks out;
  out.first = next_tick(0);
  for (int round = 1; round <= rounds; ++round) {
    const std::uint64_t left_before = left(report());
    const auto now_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(sys.clock().now() - epoch).count();
    const player_id shift = static_cast<player_id>(round) * 1'000'000'000ull;
    for (const auto& r : tickets) {
      queued_ticket q{{id++, {queue_name}, now_ms, to_message(r, shift)}, true};
      // Sent, not requested: the answers come back as plain messages, all
      // received below (a request's answer waits for its own receive).
      self->send(queue, create_atom::value, std::move(q));
    }
    for (std::size_t i = 0; i < tickets.size(); ++i)
      self->receive([](std::uint64_t) {}, [](caf::error&) {});
    out.later.push_back(next_tick(left_before));
  }
  self->send_exit(queue, caf::exit_reason::user_shutdown);
  self->send_exit(journal, caf::exit_reason::user_shutdown);
  return out;
}

}  // namespace mm::bench
