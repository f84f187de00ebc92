// matchmakerd: the matchmaker as a service. It opens (or creates) the SQLite
// database, or the PostgreSQL one that several nodes share, runs a supervised
// instance set (or its part of a cluster's set), publishes it on the actor
// port for game servers, and serves the admin HTTP API, the dashboard and
// /metrics (server_process.hpp). SIGINT or SIGTERM: every instance writes its
// snapshot, then exit 0.
#include <csignal>
#include <cstdio>
#include <thread>

#include "mm/actors/remote.hpp"
#include "mm/engine/log.hpp"
#include "server_process.hpp"

namespace {

volatile std::sig_atomic_t stop_requested = 0;
volatile std::sig_atomic_t reload_requested = 0;
void on_signal(int) {
  stop_requested = 1;
}
void on_reload(int) {
  reload_requested = 1;
}

using namespace mm;

int run(const server::server_config& c) {
  // From the start: a stop requested while starting is honoured once serving.
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::signal(SIGHUP, on_reload);  // the config file's tokens again (docs/security.md)
  if (c.tokens.empty())
    log(log_level::warning, "server",
        "no access token configured: the API and the actor port are open to every process on "
        "this machine, and bound to loopback only");
  server::server_process process(c);
  if (!process.open()) return 1;
  while (!stop_requested) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (!reload_requested) continue;
    reload_requested = 0;
    try {
      process.reload_tokens();
    } catch (const std::exception& e) {
      log(log_level::error, "server",
          std::string("tokens not reloaded (the old ones stay): ") + e.what());
    }
  }
  say("server", "matchmakerd: stopping (writing snapshots)");
  process.stop();
  say("server", "matchmakerd: stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  server::command_line cl;
  try {
    cl = server::parse_command_line(argc, argv);
  } catch (const config_error& e) {
    std::fprintf(stderr, "matchmakerd: %s\n", e.what());
    return 2;
  }
  if (cl.help) {
    std::printf("%s", server::help_text().c_str());
    return 0;
  }
  if (cl.print_config) {
    std::printf("%s\n", server::describe(cl.config).c_str());
    return 0;
  }
  if (cl.config.actor_tls.enabled())
    if (auto why = actors::tls_problem(cl.config.actor_tls)) {
      std::fprintf(stderr, "matchmakerd: actor.tls: %s\n", why->c_str());
      return 2;
    }
  set_log_format(cl.config.logging.format);
  set_log_level(cl.config.logging.least);
  try {
    return run(cl.config);
  } catch (const std::exception& e) {
    log(log_level::error, "server", e.what());
    return 1;
  }
}
