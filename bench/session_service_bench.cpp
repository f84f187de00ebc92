// The session matchmaker as a service: tickets from creation to the matched
// notification through the session service (durable in a SQLite journal, and
// the same without a store), and through HTTP, against the engine alone in the
// same run.
//
// usage: mm_session_service_bench [SECONDS=3] [recording | claims | claims-pg | durable | http]
//
// With "durable", only durable_vs_memory_tickets (below); with "http", only
// the three HTTP rates (to profile the server under them).
// With "recording", only the cost of recording the ticket stream:
// recording_vs_plain, the 1-queue durable actor path with a recording of
// its queue (sessions.record) over the same without, medians of three
// alternated runs. With "claims", only claims_vs_plain: the same path with
// the player claims of a partitioned service (shared_claims) over without,
// and partition_vs_plain: with its events numbered by the store as well
// (event_stream); "claims-pg" the same with the journal on a PostgreSQL
// server it starts.
//
// A duel queue (two solos a match, no rule: every waiting pair matches) with
// a 10 ms tick, so the loop's own time is small and what is measured is the
// path around it.
// - engine_tickets_per_s: the reference: add and tick the engine directly,
//   2,000 tickets a tick.
// - session_tickets_per_s, path actors (queues=1, 2): a driver keeps 4,000 tickets waiting
//   per queue through the session service (create, journal, tick, journal,
//   notification) and counts the matched notifications its owner gets; with
//   durable=true the journal is a SQLite file (WAL, synchronous=FULL: an fsync
//   per group commit), with durable=false the service has no store.
// - durable_vs_memory_tickets: the two, 1 queue, alternated three times: the
//   median of the three ratios (and the medians of each rate).
// - memory_per_waiting_ticket: heap bytes (mallinfo2) held per ticket with
//   100,000 solo tickets waiting in one queue of the service (durable), each
//   with RTTs to 30 datacenters.
// - tick_to_notification_p99_ms: at half the 1-queue rate, paced every
//   10 ms: from the tick that formed a match (its formed_at on the queue's
//   clock) to the owner's notification, excluding the designed wait for the
//   tick.
// - session_tickets_per_s, path http: POST /api/tickets on a live matchmakerd from 4
//   keep-alive clients, created and matched (the queue's counts); then from 32
//   clients (with 4, each client's wait for its commit bounds the rate);
//   then from 256 keep-alive connections of one event-driven client
//   (http_load.hpp: the server's capacity, hundreds of creates in flight as
//   the actor path keeps thousands); then from 4 clients sending 100
//   tickets a request ({"tickets": [...]}). http_vs_actor,
//   http_32_clients_vs_actor, http_256_connections_vs_actor and
//   http_batch_vs_actor: each against the 1-queue durable actor path.
// - websocket_events_per_s: at that load, the events one admin WebSocket
//   (GET /api/events) receives per second (a waiting and a matched event a
//   ticket), and whether it was cut off as too slow.
// - http_create_p50/p99_ms: the same clients paced at half that rate, each
//   create timed from when it was due (kept_pace says whether they kept it).
// - event_commit_to_client_p50/p99_ms: in the paced phase, from an event's
//   commit (its at_unix_ms, after the match was formed and written) to the
//   WebSocket client; the tick-to-commit part is tick_to_notification above.
#include <malloc.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <caf/all.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>
#ifdef MM_HAVE_POSTGRES
#include <pqxx/pqxx>
#endif
#include <thread>
#include <vector>

#include "bench_util.hpp"
#include "mm/actors/registration.hpp"
#include "mm/actors/session_service.hpp"
#include "mm/engine/generic_profile.hpp"
#include "mm/session/public_id.hpp"
#ifdef MM_HAVE_POSTGRES
#include "mm/storage/pg_store.hpp"
#include "mm/testing/postgres_server.hpp"
#endif
#include "session_http_phase.hpp"
#include "ticket_recording.hpp"

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
  session_interfaces::service service;
  std::vector<std::string> queues;
  caf::actor_clock::time_point epoch;
  player_id next = 1;
  std::uint64_t matched = 0;
  std::size_t turn = 0;
  std::vector<double> delays_ms;
  bool counting = true;
  static inline const char* name = "bench.driver";
};

caf::behavior driver(caf::stateful_actor<driver_state>* self, session_interfaces::service service,
                     std::vector<std::string> queues, caf::actor_clock::time_point epoch,
                     std::size_t in_flight, std::size_t per_tick) {
  auto& st = self->state;
  st.service = std::move(service);
  st.queues = std::move(queues);
  st.epoch = epoch;
  const auto owner = caf::actor_cast<session_interfaces::owner>(self);
  const auto create = [self, owner] {
    auto& s = self->state;
    const auto& q = s.queues[s.turn++ % s.queues.size()];
    self->request(s.service, caf::infinite, create_atom::value, q, solo(s.next++), owner)
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
  double cores_busy = 0;          // the process's CPU time over the wall time
  std::vector<double> delays_ms;  // of the measured period
};

// The process's CPU time (user and system) so far.
double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

const std::string journal_file = "/tmp/mm_session_service_bench_journal.db";

void remove_database(const std::string& file) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((file + suffix).c_str());
}

// Where a durable run keeps its journal: empty, the SQLite file; else the
// URL of a PostgreSQL server the bench started ("claims-pg").
std::string journal_url;

// An empty journal: the file made anew, or the server's journal tables
// emptied (an earlier run's waiting tickets would hold their players' claims).
std::shared_ptr<player_store> fresh_journal() {
#ifdef MM_HAVE_POSTGRES
  if (!journal_url.empty()) {
    auto store = std::make_shared<pg_store>(journal_url);  // migrates a new database
    pqxx::connection c(journal_url);
    pqxx::work w(c);
    w.exec("TRUNCATE session_player_claims, session_ticket_journal, session_ticket_events");
    w.commit();
    return store;
  }
#endif
  remove_database(journal_file);
  return std::make_shared<sqlite_store>(journal_file);
}

// What a service in partitions does more than one alone: its player claims
// (shared_claims), and its events numbered by the store (event_stream).
enum class partition_cost { none, claims, claims_and_stream };

// A service over `queues` (named duel0, duel1, ...): durable in a SQLite
// journal, or without a store.
session_service_config service_config(std::vector<session::queue_config> queues, bool durable,
                                      std::shared_ptr<ticket_recorder> recorder = nullptr,
                                      partition_cost partition = partition_cost::none) {
  session_service_config c;
  c.shared_claims = partition != partition_cost::none;
  if (partition == partition_cost::claims_and_stream) c.event_stream = "bench";
  c.recorder = std::move(recorder);
  c.queues = std::move(queues);
  c.latency = session::latency_model({{"paris", {48.9, 2.4}, "eu"}});  // the lobbies need one
  if (durable) c.store = fresh_journal();
  auto ids_store = std::make_shared<sqlite_store>(journal_file + ".ids");
  c.ids = std::make_shared<session::id_source>(
      session::random_id_key(), [ids_store] { return ids_store->reserve_id_generation(); });
  c.unix_epoch_ms = unix_ms_now();
  c.max_outcomes = 10'000;
  return c;
}

actor_run through_actors(std::size_t queues, double seconds, std::size_t in_flight,
                         std::size_t per_tick, bool durable,
                         std::shared_ptr<ticket_recorder> recorder = nullptr,
                         partition_cost partition = partition_cost::none) {
  caf::actor_system_config cfg;
  cfg.set("logger.verbosity", caf::atom("quiet"));
  add_message_types<generic_profile>(cfg, "generic");
  cfg.add_message_type<std::vector<double>>("bench.delays");
  caf::actor_system sys{cfg};
  std::vector<session::queue_config> configs;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < queues; ++i) {
    configs.push_back(duel_queue("duel" + std::to_string(i)));
    names.push_back(configs.back().name);
  }
  auto service =
      sys.spawn(session_service, service_config(configs, durable, std::move(recorder), partition));
  const auto start = sys.clock().now();  // the service's epoch, within a millisecond
  auto d = sys.spawn(driver, caf::actor_cast<session_interfaces::service>(service), names, start,
                     in_flight, per_tick);
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
  const double cpu0 = cpu_seconds();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  auto [after, delays] = read(false);
  actor_run out;
  const double wall = bench::now_s() - t0;
  out.tickets_per_s = static_cast<double>(after - before) / wall;
  out.cores_busy = (cpu_seconds() - cpu0) / wall;
  out.delays_ms = std::move(delays);
  self->send_exit(d, caf::exit_reason::user_shutdown);
  self->send_exit(service, caf::exit_reason::user_shutdown);
  return out;
}

// Heap bytes per waiting ticket: 100,000 solo tickets that never match (MMRs
// 10 apart, a rule of 1), with RTTs to 30 datacenters as a game sends them.
double memory_per_waiting_ticket() {
  caf::actor_system_config cfg;
  cfg.set("logger.verbosity", caf::atom("quiet"));
  add_message_types<generic_profile>(cfg, "generic");
  caf::actor_system sys{cfg};
  std::vector<session::datacenter> dcs;
  for (int i = 0; i < 30; ++i)
    dcs.push_back({"dc" + std::to_string(i), {static_cast<double>(i), 0}, "r"});
  session::queue_config q = duel_queue("apart");
  session::rule skill;
  skill.name = "skill";
  skill.max_difference = 1;
  q.rules = {skill};
  session_service_config c = service_config({q}, true);
  c.latency = session::latency_model(dcs);
  auto service = sys.spawn(session_service, c);
  constexpr player_id n = 100'000;
  const auto heap = [] { return static_cast<double>(mallinfo2().uordblks); };
  // 1,000 creates in flight at a time (a group commit or two for all of
  // them), from a helper actor; this thread waits for their answers.
  const auto create = [&](player_id first, player_id last) {
    const auto svc = caf::actor_cast<session_interfaces::service>(service);
    for (player_id from = first; from <= last; from += 1000) {
      const player_id to = std::min<player_id>(last, from + 999);
      auto done = std::make_shared<std::promise<void>>();
      auto answered = done->get_future();
      sys.spawn([from, to, done, svc, &dcs](caf::event_based_actor* a) {
        auto left = std::make_shared<player_id>(to - from + 1);
        const auto one_more = [left, done] {
          if (--*left == 0) done->set_value();
        };
        for (player_id id = from; id <= to; ++id) {
          session_ticket t = solo(id);
          t.players[0].mmr = static_cast<double>(id) * 10;
          for (const auto& dc : dcs)
            t.players[0].rtt_ms.push_back({dc.name, static_cast<double>(20 + id % 50)});
          a->request(svc, 60s, create_atom::value, std::string("apart"), t,
                     session_interfaces::owner{})
              .then([one_more](std::uint64_t) { one_more(); },
                    [one_more](caf::error&) { one_more(); });
        }
      });
      answered.wait();
    }
  };
  create(1, 1000);  // the allocators' warm-up
  const double before = heap();
  create(1001, 1000 + n);
  const double after = heap();
  caf::anon_send_exit(service, caf::exit_reason::user_shutdown);
  return (after - before) / static_cast<double>(n);
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

// What the HTTP run measures.

}  // namespace

// The cost of recording the ticket stream (sessions.record): the 1-queue
// durable actor path without and with a recording of its queue, alternated
// three times; the medians and their ratio.
void recording_cost(double seconds) {
  const std::string dir = "/tmp/mm_session_service_bench_recording";
  std::vector<double> plain, recorded;
  std::uint64_t events = 0, dropped = 0;
  for (int round = 0; round < 3; ++round) {
    plain.push_back(through_actors(1, seconds, 4000, 0, true).tickets_per_s);
    std::filesystem::remove_all(dir);
    server::recording_settings s;
    s.queues = {"duel0"};
    s.dir = dir;
    auto r = std::make_shared<server::ticket_recording>(s, nlohmann::json::object());
    recorded.push_back(through_actors(1, seconds, 4000, 0, true, r).tickets_per_s);
    r->flush();
    events += r->events();
    dropped += r->dropped();
  }
  std::filesystem::remove_all(dir);
  const double p = bench::median3(plain[0], plain[1], plain[2]);
  const double w = bench::median3(recorded[0], recorded[1], recorded[2]);
  bench::emit(bench_name, "session_tickets_per_s", p, "tickets/s",
              "\"path\": \"actors\", \"queues\": 1, \"durable\": true, \"recording\": false");
  bench::emit(bench_name, "session_tickets_per_s", w, "tickets/s",
              "\"path\": \"actors\", \"queues\": 1, \"durable\": true, \"recording\": true, "
              "\"events\": " +
                  std::to_string(events) + ", \"dropped\": " + std::to_string(dropped));
  bench::emit(bench_name, "recording_vs_plain", w / p, "ratio");
}

// The cost of the player claims of a service that shares its store with
// other partitions (shared_claims), then with its events numbered by the
// store too (event_stream): the 1-queue durable actor path without and with
// them, alternated three times; the medians and their ratios.
void claims_cost(double seconds) {
  std::vector<double> plain, claimed, streamed;
  for (int round = 0; round < 3; ++round) {
    plain.push_back(through_actors(1, seconds, 4000, 0, true).tickets_per_s);
    claimed.push_back(
        through_actors(1, seconds, 4000, 0, true, nullptr, partition_cost::claims).tickets_per_s);
    streamed.push_back(
        through_actors(1, seconds, 4000, 0, true, nullptr, partition_cost::claims_and_stream)
            .tickets_per_s);
  }
  const double p = bench::median3(plain[0], plain[1], plain[2]);
  const double c = bench::median3(claimed[0], claimed[1], claimed[2]);
  const double s = bench::median3(streamed[0], streamed[1], streamed[2]);
  const std::string path = "\"path\": \"actors\", \"queues\": 1, \"durable\": true, ";
  bench::emit(bench_name, "session_tickets_per_s", p, "tickets/s", path + "\"claims\": false");
  bench::emit(bench_name, "session_tickets_per_s", c, "tickets/s", path + "\"claims\": true");
  bench::emit(bench_name, "session_tickets_per_s", s, "tickets/s",
              path + "\"claims\": true, \"event_stream\": true");
  bench::emit(bench_name, "claims_vs_plain", c / p, "ratio");
  bench::emit(bench_name, "partition_vs_plain", s / p, "ratio");
}

// The 1-queue actor path without a store and durable, alternated three
// times: the medians of each and of the three ratios (one pair alone moved
// between 0.28 and 0.59 over the runs of one hour).
struct durable_cost {
  double memory = 0, durable = 0, ratio = 0;
  double memory_cores = 0, durable_cores = 0;  // the process's CPU time over wall time
};
durable_cost durable_vs_memory(double seconds) {
  std::vector<double> memory, durable, ratio, memory_cores, durable_cores;
  for (int round = 0; round < 3; ++round) {
    const actor_run m = through_actors(1, seconds, 4000, 0, false);
    const actor_run d = through_actors(1, seconds, 4000, 0, true);
    memory.push_back(m.tickets_per_s);
    durable.push_back(d.tickets_per_s);
    ratio.push_back(durable.back() / memory.back());
    memory_cores.push_back(m.cores_busy);
    durable_cores.push_back(d.cores_busy);
  }
  return {bench::median3(memory[0], memory[1], memory[2]),
          bench::median3(durable[0], durable[1], durable[2]),
          bench::median3(ratio[0], ratio[1], ratio[2]),
          bench::median3(memory_cores[0], memory_cores[1], memory_cores[2]),
          bench::median3(durable_cores[0], durable_cores[1], durable_cores[2])};
}

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 3.0;
  const std::string mode = argc > 2 ? argv[2] : "";
  if (mode == "recording") {
    recording_cost(seconds);
    return 0;
  }
  if (mode == "claims") {
    claims_cost(seconds);
    return 0;
  }
#ifdef MM_HAVE_POSTGRES
  if (mode == "claims-pg") {  // the same with the journal on PostgreSQL
    test::postgres_server pg;
    journal_url = pg.url();
    claims_cost(seconds);
    return 0;
  }
#endif
  if (mode == "http") {  // the HTTP phases alone (to profile the server)
    const bench::session_http::http_run http =
        bench::session_http::through_http(seconds, 4, 32, 256);
    bench::emit(bench_name, "session_tickets_per_s", http.created_per_s, "tickets/s",
                "\"path\": \"http\", \"clients\": 4");
    bench::emit(bench_name, "session_tickets_per_s", http.created_wide_per_s, "tickets/s",
                "\"path\": \"http\", \"clients\": 32");
    bench::emit(bench_name, "session_tickets_per_s", http.created_connections_per_s, "tickets/s",
                "\"path\": \"http\", \"connections\": 256");
    bench::emit(bench_name, "session_tickets_per_s", http.created_batched_per_s, "tickets/s",
                "\"path\": \"http\", \"clients\": 4, \"tickets_per_request\": 100");
    return 0;
  }
  const durable_cost cost = durable_vs_memory(seconds);
  bench::emit(bench_name, "session_tickets_per_s", cost.memory, "tickets/s",
              "\"path\": \"actors\", \"queues\": 1, \"durable\": false, \"cores_busy\": " +
                  std::to_string(cost.memory_cores));
  bench::emit(bench_name, "session_tickets_per_s", cost.durable, "tickets/s",
              "\"path\": \"actors\", \"queues\": 1, \"durable\": true, \"cores_busy\": " +
                  std::to_string(cost.durable_cores));
  bench::emit(bench_name, "durable_vs_memory_tickets", cost.ratio, "ratio");
  if (mode == "durable") return 0;
  const double engine = engine_tickets_per_s(seconds);
  bench::emit(bench_name, "engine_tickets_per_s", engine, "tickets/s");
  bench::emit(bench_name, "actor_vs_engine", cost.durable / engine, "ratio", "\"queues\": 1");
  const actor_run two = through_actors(2, seconds, 4000, 0, true);
  bench::emit(bench_name, "session_tickets_per_s", two.tickets_per_s, "tickets/s",
              "\"path\": \"actors\", \"queues\": 2, \"durable\": true");
  bench::emit(bench_name, "two_vs_one_queue", two.tickets_per_s / cost.durable, "ratio");
  // Half the 1-queue rate, paced every 10 ms.
  const auto per_tick = static_cast<std::size_t>(cost.durable / 2 / 100);
  const actor_run half = through_actors(1, seconds, 0, std::max<std::size_t>(per_tick, 2), true);
  const std::string load = "\"tickets_per_s\": " + std::to_string(half.tickets_per_s);
  bench::emit(bench_name, "tick_to_notification_p50_ms", percentile(half.delays_ms, 0.5), "ms",
              load);
  bench::emit(bench_name, "tick_to_notification_p99_ms", percentile(half.delays_ms, 0.99), "ms",
              load);
  const bench::session_http::http_run http = bench::session_http::through_http(seconds, 4, 32, 256);
  bench::emit(bench_name, "session_tickets_per_s", http.created_per_s, "tickets/s",
              "\"path\": \"http\", \"clients\": 4");
  bench::emit(bench_name, "http_matched_per_s", http.matched_per_s, "tickets/s", "\"clients\": 4");
  bench::emit(bench_name, "http_vs_actor", http.created_per_s / cost.durable, "ratio");
  bench::emit(bench_name, "session_tickets_per_s", http.created_wide_per_s, "tickets/s",
              "\"path\": \"http\", \"clients\": 32");
  bench::emit(bench_name, "http_32_clients_vs_actor", http.created_wide_per_s / cost.durable,
              "ratio");
  bench::emit(bench_name, "session_tickets_per_s", http.created_connections_per_s, "tickets/s",
              "\"path\": \"http\", \"connections\": 256");
  bench::emit(bench_name, "http_256_connections_vs_actor",
              http.created_connections_per_s / cost.durable, "ratio");
  bench::emit(bench_name, "session_tickets_per_s", http.created_batched_per_s, "tickets/s",
              "\"path\": \"http\", \"clients\": 4, \"tickets_per_request\": 100");
  bench::emit(bench_name, "http_batch_vs_actor", http.created_batched_per_s / cost.durable,
              "ratio");
  // The paced phase's figures count only when its clients kept the pace.
  const bool kept_pace = http.half_achieved >= 0.95 * http.half_rate;
  const std::string paced = "\"tickets_per_s\": " + std::to_string(http.half_achieved) +
                            ", \"asked_per_s\": " + std::to_string(http.half_rate) +
                            ", \"kept_pace\": " + (kept_pace ? "true" : "false");
  bench::emit(bench_name, "http_create_p50_ms", percentile(http.create_ms, 0.5), "ms", paced);
  bench::emit(bench_name, "http_create_p99_ms", percentile(http.create_ms, 0.99), "ms", paced);
  bench::emit(bench_name, "websocket_events_per_s", http.events_per_s, "events/s",
              std::string("\"cut_off\": ") + (http.events_cut ? "true" : "false"));
  bench::emit(bench_name, "event_commit_to_client_p50_ms", percentile(http.event_ms, 0.5), "ms",
              paced);
  bench::emit(bench_name, "event_commit_to_client_p99_ms", percentile(http.event_ms, 0.99), "ms",
              paced);
  bench::emit(bench_name, "memory_per_waiting_ticket", memory_per_waiting_ticket(), "bytes");
  remove_database(journal_file);
  remove_database(journal_file + ".ids");
  return 0;
}
