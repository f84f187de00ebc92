// mm_node: an instance set on a SQLite file, published through CAF's network
// layer, so game servers in other processes or on other machines use it
// through the same typed interface (the client's: find, update, enroll).
//
//   mm_node --db FILE [--instances N] [--port P] [--host ADDR] [--players K]
//
// With --players K an empty player table is filled with K synthetic players.
// Prints "listening on HOST:PORT" once the first scans have filled the caches,
// then serves until SIGINT/SIGTERM, when every instance writes its snapshot.
#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "mm/actors/generic_actors.hpp"
#include "mm/actors/registration.hpp"
#include "mm/actors/remote.hpp"
#include "mm/actors/worker_idle.hpp"
#include "mm/engine/synthetic_players.hpp"
#include "mm/storage/player_table.hpp"

namespace {
volatile std::sig_atomic_t stop_requested = 0;
void on_signal(int) {
  stop_requested = 1;
}

struct args {
  std::string db = "matchmaker.db";
  std::uint32_t instances = 2;
  std::uint16_t port = 0;  // 0: any free port
  std::string host = "127.0.0.1";
  std::size_t players = 0;
};

bool parse(int argc, char** argv, args& a) {
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (!v) return false;
    if (k == "--db")
      a.db = v;
    else if (k == "--instances")
      a.instances = static_cast<std::uint32_t>(std::strtoul(v, nullptr, 10));
    else if (k == "--port")
      a.port = static_cast<std::uint16_t>(std::strtoul(v, nullptr, 10));
    else if (k == "--host")
      a.host = v;
    else if (k == "--players")
      a.players = std::strtoull(v, nullptr, 10);
    else
      return false;
    ++i;
  }
  return a.instances > 0;
}
}  // namespace

int main(int argc, char** argv) try {
  args a;
  if (!parse(argc, argv, a)) {
    std::fprintf(stderr,
                 "usage: mm_node --db FILE [--instances N>0] [--port P] [--host ADDR] "
                 "[--players K]\n");
    return 2;
  }
  {
    mm::database db(a.db);
    if (a.players > 0 && mm::count_players(db) == 0) {
      mm::rng r(5);
      mm::upsert_players(db, mm::make_players(mm::synthetic_population{}, a.players, 1, r));
    }
  }

  caf::actor_system_config cfg;
  cfg.load<caf::io::middleman>();
  mm::actors::set_worker_idle(cfg, mm::actors::worker_idle::sleep);
  cfg.set("logger.verbosity", caf::atom("quiet"));
  mm::actors::add_message_types<mm::generic_profile>(cfg, "generic");
  caf::actor_system sys{cfg};

  mm::actors::instance_config<mm::generic_profile> base;
  base.id = "node";
  base.opts.player_cache_size = 100'000;
  base.opts.database_scan_first_delay = std::chrono::milliseconds(0);
  base.opts.database_scan_tick = std::chrono::milliseconds(1000);
  base.opts.database_scan_max_fetch = 8192;
  base.profile = mm::generic_profile(mm::demo_profile_config());
  base.database.path = a.db;
  auto set = mm::actors::spawn_instance_set<mm::generic_profile>(sys, a.instances, base);
  auto client = mm::actors::spawn_client<mm::generic_profile>(sys, set, std::uint64_t{1});

  // Ready once every instance holds players (or the table is empty).
  caf::scoped_actor self{sys};
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::uint64_t ready = 0;
    for (auto& inst : set)
      self->request(inst, std::chrono::seconds(5), mm::actors::info_atom::value)
          .receive([&](const mm::instance_info& i) { ready += i.engine.players > 0; },
                   [&](caf::error&) {});
    if (ready == set.size() || a.players == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }

  auto port = mm::actors::publish_actor(sys, client, a.port, a.host, false);
  if (!port) {
    std::fprintf(stderr, "mm_node: cannot publish on %s:%u: %s\n", a.host.c_str(), a.port,
                 sys.render(port.error()).c_str());
    for (auto& inst : set) self->send_exit(inst, caf::exit_reason::user_shutdown);
    self->send_exit(client, caf::exit_reason::user_shutdown);
    return 1;
  }
  std::printf("listening on %s:%u\n", a.host.c_str(), static_cast<unsigned>((*port)->port()));
  std::fflush(stdout);

  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  while (!stop_requested) std::this_thread::sleep_for(std::chrono::milliseconds(100));

  (*port)->close();
  self->send_exit(client, caf::exit_reason::user_shutdown);
  for (auto& inst : set) self->send_exit(inst, caf::exit_reason::user_shutdown);
  for (auto& inst : set) {
    self->monitor(inst);
  }
  std::size_t down = 0;
  self->receive_while([&] { return down < set.size(); })(
      [&](const caf::down_msg&) { ++down; },
      caf::after(std::chrono::seconds(10)) >> [&] { down = set.size(); });
  std::printf("stopped\n");
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "mm_node: %s\n", e.what());
  return 1;
}
