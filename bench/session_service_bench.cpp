// The session matchmaker as a service: tickets from creation to the matched
// notification through the queue actors, and through HTTP, against the
// engine alone in the same run.
//
// usage: mm_session_service_bench [SECONDS=3]
//
// A duel queue (two solos a match, no rule: every waiting pair matches) with
// a 10 ms tick, so the loop's own time is small and what is measured is the
// path around it.
// - engine_tickets_per_s: the reference: add and tick the engine directly,
//   2,000 tickets a tick.
// - session_tickets_per_s, path actors (queues=1, 2): a driver keeps 4,000 tickets waiting
//   per queue through the queue actors (create, tick, notification) and
//   counts the matched notifications its owner gets.
// - tick_to_notification_p99_ms: at half the 1-queue rate, paced every
//   10 ms: from the tick that formed a match (its formed_at on the queue's
//   clock) to the owner's notification, excluding the designed wait for the
//   tick.
// - session_tickets_per_s, path http: POST /api/tickets on a live matchmakerd from 4
//   keep-alive clients, created and matched (the queue's counts).
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <caf/all.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "bench_util.hpp"
#include "matchmakerd_process.hpp"
#include "mm/actors/registration.hpp"
#include "mm/actors/session_queue_actor.hpp"
#include "mm/engine/generic_profile.hpp"

using namespace mm;
using namespace mm::actors;
using namespace std::chrono_literals;

namespace {

constexpr const char* bench_name = "session_service";

session::queue_config duel_queue(const std::string& name) {
  session::queue_config q;
  q.name = name;
  q.tick = 10ms;
  q.give_up_after = 600s;
  return q;
}

session_ticket solo(player_id id) {
  session_ticket t;
  session_player p;
  p.id = id;
  p.mmr = 1000 + static_cast<double>(id % 1000);
  t.players.push_back(p);
  return t;
}

double engine_tickets_per_s(double seconds) {
  session::session_queue q(duel_queue("duel"),
                           session::latency_model(std::vector<session::datacenter>{}), 1);
  player_id next = 1;
  std::uint64_t matched = 0;
  const double t0 = bench::now_s();
  std::int64_t now = 0;
  while (bench::now_s() - t0 < seconds) {
    for (int i = 0; i < 2000; ++i) {
      session::ticket_request r;
      r.players.push_back({next++, 1000.0 + static_cast<double>(next % 1000), {}, {}, {}, {}, {}});
      q.add(r, session::time_ms(now));
    }
    now += 10;
    for (const auto& m : q.tick(session::time_ms(now)).matches) matched += m.tickets.size();
  }
  return static_cast<double>(matched) / (bench::now_s() - t0);
}

using tick_atom = caf::atom_constant<caf::atom("drvtick")>;

// Owner and driver in one actor: keeps `in_flight` tickets waiting per queue
// (closed loop), or creates `per_tick` tickets every 10 ms (paced); records
// each notification's delay after the tick that formed its match.
struct driver_state {
  std::vector<session_interfaces::queue> queues;
  caf::actor_clock::time_point epoch;
  player_id next = 1;
  std::uint64_t matched = 0;
  std::size_t turn = 0;
  std::vector<double> delays_ms;
  bool counting = true;
  static inline const char* name = "bench.driver";
};

caf::behavior driver(caf::stateful_actor<driver_state>* self,
                     std::vector<session_interfaces::queue> queues,
                     caf::actor_clock::time_point epoch, std::size_t in_flight,
                     std::size_t per_tick) {
  auto& st = self->state;
  st.queues = std::move(queues);
  st.epoch = epoch;
  const auto owner = caf::actor_cast<session_interfaces::owner>(self);
  const auto create = [self, owner] {
    auto& s = self->state;
    const auto& q = s.queues[s.turn++ % s.queues.size()];
    self->request(q, caf::infinite, create_atom::value, solo(s.next++), owner)
        .then([](std::uint64_t) {}, [](caf::error&) {});
  };
  for (std::size_t i = 0; i < in_flight * st.queues.size(); ++i) create();
  if (per_tick > 0) self->send(self, tick_atom::value);
  return {
      [self, create, in_flight](ticket_atom, const ticket_outcome& o) {
        auto& s = self->state;
        if (o.state != session::ticket_state::matched) return;
        if (s.counting) ++s.matched;
        const auto formed = s.epoch + std::chrono::milliseconds(o.match.formed_at_ms);
        s.delays_ms.push_back(
            std::chrono::duration<double, std::milli>(self->clock().now() - formed).count());
        if (in_flight > 0) create();
      },
      [self, create, per_tick](tick_atom) {
        self->delayed_send(self, 10ms, tick_atom::value);
        for (std::size_t i = 0; i < per_tick; ++i) create();
      },
      // Matched so far and the delays recorded (then forgotten, with `reset`).
      [self](stats_atom, bool reset) {
        auto& s = self->state;
        auto delays = std::move(s.delays_ms);
        s.delays_ms.clear();
        if (reset) delays.clear();
        return caf::make_message(s.matched, std::move(delays));
      },
  };
}

struct actor_run {
  double tickets_per_s = 0;
  std::vector<double> delays_ms;  // of the measured period
};

actor_run through_actors(std::size_t queues, double seconds, std::size_t in_flight,
                         std::size_t per_tick) {
  caf::actor_system_config cfg;
  cfg.set("logger.verbosity", caf::atom("quiet"));
  add_message_types<generic_profile>(cfg, "generic");
  cfg.add_message_type<std::vector<double>>("bench.delays");
  caf::actor_system sys{cfg};
  const auto start = sys.clock().now();
  std::vector<session_interfaces::queue> qs;
  for (std::size_t i = 0; i < queues; ++i) {
    session_queue_actor_config c;
    c.queue = duel_queue("duel" + std::to_string(i));
    c.epoch = start;
    c.ticket_id_base = static_cast<std::uint64_t>(i + 1) << 48;
    c.finished_kept = 1000;
    qs.push_back(sys.spawn(session_queue_actor, std::move(c)));
  }
  auto d = sys.spawn(driver, qs, start, in_flight, per_tick);
  caf::scoped_actor self{sys};
  const auto read = [&](bool reset) {
    std::pair<std::uint64_t, std::vector<double>> out;
    self->request(d, 10s, stats_atom::value, reset)
        .receive(
            [&](std::uint64_t n, std::vector<double>& delays) {
              out = {n, std::move(delays)};
            },
            [](caf::error&) {});
    return out;
  };
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds / 4));  // warm up
  const std::uint64_t before = read(true).first;
  const double t0 = bench::now_s();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  auto [after, delays] = read(false);
  actor_run out;
  out.tickets_per_s = static_cast<double>(after - before) / (bench::now_s() - t0);
  out.delays_ms = std::move(delays);
  self->send_exit(d, caf::exit_reason::user_shutdown);
  for (auto& q : qs) self->send_exit(q, caf::exit_reason::user_shutdown);
  return out;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

// Tickets created over HTTP by `clients` keep-alive clients for `seconds`,
// and how many of them the queue matched by then.
std::pair<double, double> through_http(double seconds, int clients) {
  const nlohmann::json config = {
      {"sessions",
       {{"queues", {{{"name", "duel"}, {"tick", "10ms"}, {"give_up_after", "600s"}}}}}}};
  const std::string config_file = "/tmp/mm_session_service_bench.json";
  std::ofstream(config_file) << config.dump();
  bench::matchmakerd_process server(
      {"--config", config_file, "--database.path", "/tmp/mm_session_service_bench.db",
       "--demo.players", "0", "--demo.session_players_per_second", "0"},
      1000, false);
  std::atomic<std::uint64_t> next{1}, created{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  const double t0 = bench::now_s();
  for (int c = 0; c < clients; ++c)
    threads.emplace_back([&] {
      httplib::Client http("127.0.0.1", server.http_port());
      http.set_keep_alive(true);
      http.set_tcp_nodelay(true);
      while (!stop) {
        const nlohmann::json body = {{"queue", "duel"},
                                     {"players", {{{"id", next++}, {"mmr", 1500}}}}};
        auto r = http.Post("/api/tickets", body.dump(), "application/json");
        if (r && r->status == 201) ++created;
      }
    });
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& t : threads) t.join();
  const double elapsed = bench::now_s() - t0;
  std::this_thread::sleep_for(100ms);  // the last ticks
  httplib::Client http("127.0.0.1", server.http_port());
  auto r = http.Get("/api/queues");
  double matched = 0;
  if (r && r->status == 200)
    matched = nlohmann::json::parse(r->body)["queues"][0]["matched"].get<double>();
  server.stop();
  for (const char* f : {"/tmp/mm_session_service_bench.db", "/tmp/mm_session_service_bench.db-wal",
                        "/tmp/mm_session_service_bench.db-shm"})
    std::remove(f);
  std::remove(config_file.c_str());
  return {static_cast<double>(created) / elapsed, matched / elapsed};
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 3.0;
  const double engine = engine_tickets_per_s(seconds);
  bench::emit(bench_name, "engine_tickets_per_s", engine, "tickets/s");
  const actor_run one = through_actors(1, seconds, 4000, 0);
  bench::emit(bench_name, "session_tickets_per_s", one.tickets_per_s, "tickets/s",
              "\"path\": \"actors\", \"queues\": 1");
  bench::emit(bench_name, "actor_vs_engine", one.tickets_per_s / engine, "ratio", "\"queues\": 1");
  const actor_run two = through_actors(2, seconds, 4000, 0);
  bench::emit(bench_name, "session_tickets_per_s", two.tickets_per_s, "tickets/s",
              "\"path\": \"actors\", \"queues\": 2");
  bench::emit(bench_name, "two_vs_one_queue", two.tickets_per_s / one.tickets_per_s, "ratio");
  // Half the 1-queue rate, paced every 10 ms.
  const auto per_tick = static_cast<std::size_t>(one.tickets_per_s / 2 / 100);
  const actor_run half = through_actors(1, seconds, 0, std::max<std::size_t>(per_tick, 2));
  const std::string load = "\"tickets_per_s\": " + std::to_string(half.tickets_per_s);
  bench::emit(bench_name, "tick_to_notification_p50_ms", percentile(half.delays_ms, 0.5), "ms",
              load);
  bench::emit(bench_name, "tick_to_notification_p99_ms", percentile(half.delays_ms, 0.99), "ms",
              load);
  const auto [http_created, http_matched] = through_http(seconds, 4);
  bench::emit(bench_name, "session_tickets_per_s", http_created, "tickets/s",
              "\"path\": \"http\", \"clients\": 4");
  bench::emit(bench_name, "http_matched_per_s", http_matched, "tickets/s", "\"clients\": 4");
  bench::emit(bench_name, "http_vs_actor", http_created / one.tickets_per_s, "ratio");
  return 0;
}
