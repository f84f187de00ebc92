// matchmakerd: the matchmaker as a service. It opens (or creates) the SQLite
// database, or the PostgreSQL one that several nodes share, runs a supervised
// instance set (or its part of a cluster's set), publishes it on the actor
// port for game servers, and serves the admin HTTP API, the dashboard and
// /metrics. SIGINT or SIGTERM: every instance writes its snapshot, then exit 0.
#include <atomic>
#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "cluster_node.hpp"
#include "demo_session_load.hpp"
#include "http_api.hpp"
#include "mm/actors/admin_bridge.hpp"
#include "mm/actors/game_front.hpp"
#include "mm/actors/generic_actors.hpp"
#include "mm/actors/registration.hpp"
#include "mm/actors/remote.hpp"
#include "mm/actors/session_service.hpp"
#include "mm/engine/log.hpp"
#include "mm/engine/synthetic_players.hpp"
#include "mm/session/public_id.hpp"
#include "session_host.hpp"
#include "store_url.hpp"

namespace {

volatile std::sig_atomic_t stop_requested = 0;
void on_signal(int) {
  stop_requested = 1;
}

using namespace mm;
using profile = generic_profile;
using iface = actors::interfaces<profile>;

void say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

void fill_demo_table(player_store& db, std::int64_t players) {
  if (players <= 0 || db.count_players() > 0) return;
  say("matchmakerd: writing " + std::to_string(players) + " synthetic players into " + db.where());
  rng r(2026);
  const std::size_t chunk = 10'000;
  for (std::int64_t done = 0; done < players; done += chunk) {
    const auto n = static_cast<std::size_t>(std::min<std::int64_t>(chunk, players - done));
    db.upsert_players(make_players(synthetic_population{}, n, static_cast<player_id>(done) + 1, r));
  }
}

// The demo's own traffic: queries from random synthetic attackers through the
// client, so the dashboard has requests to show.
struct load_state {
  load_state() = default;
  rng r{7};
  std::uint64_t max_id = 0;
  static inline const char* name = "mm.demo_load";
};
using load_tick_atom = caf::atom_constant<caf::atom("loadtick")>;

caf::behavior demo_load(caf::stateful_actor<load_state>* self, iface::client client,
                        std::int64_t per_second, std::uint64_t players) {
  self->state.max_id = std::max<std::uint64_t>(players, 1);
  const auto per_tick = std::max<std::int64_t>(1, per_second / 10);
  self->send(self, load_tick_atom::value);
  return {[=](load_tick_atom) {
    self->delayed_send(self, std::chrono::milliseconds(100), load_tick_atom::value);
    for (std::int64_t i = 0; i < per_tick; ++i) {
      auto& st = self->state;
      const player_id attacker = 1 + st.r.below(st.max_id);
      match_request<generic_query> req{make_query(synthetic_population{}, attacker, st.r),
                                       static_cast<std::uint32_t>(st.r.below(4)),
                                       {}};
      self->request(client, std::chrono::seconds(1), actors::find_atom::value, std::move(req))
          .then([](const match_reply<generic_model>&) {}, [](caf::error&) {});
    }
  }};
}

int run(const server::server_config& c) {
  // From the start: a stop requested while starting is honoured once serving.
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  if (c.tokens.empty())
    log(log_level::warning,
        "no access token configured: the API and the actor port are open to every process on "
        "this machine, and bound to loopback only");
  if (c.database_url.empty()) {
    const std::filesystem::path db_path(c.database_path);
    if (db_path.has_parent_path()) std::filesystem::create_directories(db_path.parent_path());
  }
  const auto db = server::open_configured_store(c);
  if (auto problem = db->integrity_problem())
    throw store_error("database '" + db->where() + "' is damaged (" + *problem +
                      "): restore it from a backup, or move it aside to start on a new file");
  fill_demo_table(*db, c.effective_demo_players());
  say("matchmakerd: database " + db->where() + " holds " + std::to_string(db->count_players()) +
      " players");

  // Before the actor system: a recording directory that cannot be written
  // stops the start here.
  auto recording = server::open_recording(c);
  auto query_recording = server::open_query_recording(c);

  caf::actor_system_config cfg;
  actors::use_network(cfg, c.actor_tls);
  actors::set_worker_idle(cfg, c.worker_idle);
  cfg.set("logger.verbosity", caf::atom("quiet"));
  actors::add_message_types<profile>(cfg, "generic");
  caf::actor_system sys{cfg};

  actors::instance_config<profile> base;
  base.id = "mm";
  base.opts = c.opts;
  base.profile = profile(c.profile);
  base.database.path = server::store_location(c);
  base.database.open = server::open_store_at;
  if (query_recording)
    base.observe = [query_recording](std::uint32_t shard) {
      return server::observer_of(query_recording, shard);
    };
  // In a cluster every shard has a dormant supervisor here, run while this
  // node holds its lease (cluster_node.hpp).
  std::shared_ptr<cluster::serving_deadline> deadline;
  if (c.cluster_total > 0) {
    deadline = std::make_shared<cluster::serving_deadline>();
    base.lease_gate = deadline;
    base.lease_idle_limit = std::max(std::chrono::milliseconds(100), c.cluster_takeover_after / 10);
  }
  const actors::set_part part = c.instance_part();
  // The instances' engines, shared with the query bridge: an HTTP query is
  // answered on the network thread where its instance is free (engine_slot.hpp).
  auto slots = std::make_shared<actors::engine_slots<profile>>(part.total);
  base.slots = slots;
  auto set = actors::spawn_instance_part<profile>(sys, part, base);
  actors::query_bridge<profile>::slot_list member_slots;
  for (const std::uint32_t i : part.shards) member_slots.push_back(slots->slots.at(i));
  std::vector<std::string> names;
  for (const std::uint32_t i : part.shards)
    names.push_back(actors::member_config(base, part.total, i).id);
  const auto timeout = std::chrono::milliseconds(c.query_timeout_ms);
  auto client = actors::spawn_client<profile>(sys, set, std::uint64_t{1}, part);
  actors::admin_bridge<profile> bridge(sys, set, names, client, timeout);
  actors::query_bridge<profile> queries(sys, set, timeout, std::uint64_t{2},
                                        std::move(member_slots));

  // The session matchmaker: every queue behind one service actor, started
  // here on a server alone, and by the lease on a node of a cluster.
  auto events = std::make_shared<actors::ticket_event_feed>(
      actors::ticket_event_feed::limits{c.sessions.max_outcomes, c.sessions.outcome_retention});
  server::session_host sessions(sys, c, c.cluster_total > 0 ? "cluster" : "matchmakerd", events,
                                recording);
  if (c.cluster_total == 0) sessions.start({});
  const auto session_service = sessions.handle();
  {
    std::string list;
    for (const auto& q : c.sessions.queues) list += (list.empty() ? "" : ", ") + q.name;
    say("matchmakerd: session queues: " + (list.empty() ? std::string("none") : list) + " over " +
        std::to_string(c.sessions.datacenters.size()) + " datacenters");
  }

  caf::scoped_actor self{sys};
  actors::game_front_actor<profile> front;  // what the actor port publishes
  // This node's part of a cluster once it has joined (the actor port asks
  // it which shards are served here).
  auto cluster_ref = std::make_shared<std::atomic<const server::cluster_node*>>(nullptr);
  // Each supervisor passes the stop to its instance, which writes its snapshot
  // on the way out; the actor system's destructor waits for those last writes.
  auto stop_actors = [&] {
    for (auto& inst : set) {
      self->monitor(inst);
      self->send_exit(inst, caf::exit_reason::user_shutdown);
    }
    self->send_exit(client, caf::exit_reason::user_shutdown);
    if (front) self->send_exit(front, caf::exit_reason::user_shutdown);
    std::size_t down = 0;
    self->receive_while([&] { return down < set.size(); })(
        [&](const caf::down_msg&) { ++down; },
        caf::after(std::chrono::seconds(30)) >>
            [&] {
              log(log_level::error, "some matchmakers did not stop within 30 s");
              down = set.size();
            });
  };

  // The queues stop and the journal writes what it holds (every ticket is
  // durable already); the lobbies go to the session state table, read back
  // at the next start.
  auto save_sessions = [&] { sessions.stop(); };

  std::unique_ptr<actors::published_port> actor_port;
  if (c.actor_port >= 0) {
    // Who each connection is (mm/actors/identity.hpp): the same tokens as
    // HTTP, the TLS peers' certificates, the anonymous role.
    auto identities =
        std::make_shared<actors::identity_book>(c.tokens, c.actor_peers, c.actor_anonymous_role);
    // One actor for both halves: the routing client and the session service.
    front = sys.spawn(actors::game_front<profile>, client, session_service,
                      actors::served_now([&c, cluster_ref] {
                        served_resources out;
                        if (c.cluster_total == 0) {  // a server alone: all of its set
                          for (std::uint32_t i = 0; i < c.instances; ++i) out.shards.push_back(i);
                          out.sessions = true;
                          return out;
                        }
                        if (const server::cluster_node* n = cluster_ref->load()) {
                          out.shards = n->served_shards();
                          out.sessions = n->serves(server::sessions_resource);
                        }
                        return out;
                      }),
                      identities);
    auto published =
        actors::publish_actor(sys, front, static_cast<std::uint16_t>(c.actor_port), c.actor_host,
                              c.actor_tls.enabled(), c.actor_limits, identities);
    if (!published) {
      std::fprintf(stderr, "matchmakerd: cannot publish the actor port on %s:%d: %s\n",
                   c.actor_host.c_str(), c.actor_port, sys.render(published.error()).c_str());
      save_sessions();  // the tickets taken back at the start are not lost
      stop_actors();
      return 1;
    }
    actor_port = std::move(*published);
    say("matchmakerd: actor port listening on " + c.actor_host + ":" +
        std::to_string(actor_port->port()) + (c.actor_tls.enabled() ? " (mutual TLS)" : ""));
  }

  caf::actor load;
  if (c.effective_demo_qps() > 0)
    load = sys.spawn(demo_load, caf::actor_cast<iface::client>(client), c.effective_demo_qps(),
                     db->count_players());
  caf::actor session_load;
  if (c.effective_demo_session_players() > 0 && !c.sessions.queues.empty()) {
    const auto& q = c.sessions.queues.front();
    session_load =
        sys.spawn(server::demo_session_load, session_service,
                  server::demo_session_settings{q.name, q.max_party_size, c.sessions.datacenters,
                                                c.effective_demo_session_players()});
    say("matchmakerd: demo: " + std::to_string(c.effective_demo_session_players()) +
        " synthetic players a second join session queue '" + q.name + "'");
  }

  const auto read_db = server::open_configured_store(c);
  // Ticket polls are answered from the running service's books where they
  // arrive (session_bridge.hpp).
  actors::session_bridge session_bridge(sys, session_service, timeout, std::chrono::seconds(1),
                                        sessions.target());
  server::http_context ctx{c, bridge, queries, session_bridge, *db, {}, *read_db, {}, {}};
  ctx.events = events.get();
  ctx.recording = sessions.recording();
  ctx.queries_recording = query_recording.get();
  // Every connection is a file descriptor: take what the system allows.
  const std::uint64_t files = server::raise_open_file_limit();
  if (files != 0 && files < c.http.max_connections + 256)
    log(log_level::warning, "http.max_connections is " + std::to_string(c.http.max_connections) +
                                " but this process may open only " + std::to_string(files) +
                                " files (ulimit -n): connections past that are refused");
  // What a start that fails from here on undoes, before it returns 1.
  const auto abandon_start = [&] {
    if (load) self->send_exit(load, caf::exit_reason::user_shutdown);
    save_sessions();  // the tickets taken back at the start are not lost
    if (session_load) self->send_exit(session_load, caf::exit_reason::user_shutdown);
    stop_actors();
  };
  server::http_handlers handlers;
  try {
    handlers = server::api_handlers(ctx);
  } catch (const std::logic_error& e) {
    std::fprintf(stderr, "matchmakerd: %s\n", e.what());
    abandon_start();
    return 1;
  }
  server::http_server http(c.http, std::move(handlers));
  ctx.counters.connections = &http.stats();
  ctx.counters.queries_answered_inline = [&queries] { return queries.answered_inline(); };
  ctx.counters.bridge_batches = [&queries] { return queries.batch_answers(); };
  ctx.counters.ticket_polls_answered_inline = [&session_bridge] {
    return session_bridge.answered_here();
  };
  if (actor_port) ctx.counters.actor_port = [p = actor_port.get()] { return p->counters(); };
  std::uint16_t http_port = 0;
  try {
    http_port = http.listen(c.http_host, c.http_port);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "matchmakerd: %s (in use, or not an address here)\n", e.what());
    abandon_start();
    return 1;
  }
  say("matchmakerd: http listening on http://" + c.http_host + ":" + std::to_string(http_port) +
      "/");

  // A node of a cluster joins once its ports are known (the others redirect
  // to them) and takes its share of the shards.
  std::unique_ptr<server::cluster_node> node;
  if (c.cluster_total > 0) {
    std::vector<server::cluster_node::supervisor> supervisors;
    for (const auto& m : set)
      supervisors.push_back(caf::actor_cast<server::cluster_node::supervisor>(m));
    try {
      node = std::make_unique<server::cluster_node>(
          sys, c, supervisors, sessions, deadline, http_port, actor_port ? actor_port->port() : -1);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "matchmakerd: cannot join the cluster: %s\n", e.what());
      http.stop();
      abandon_start();
      return 1;
    }
    ctx.cluster = node.get();
    cluster_ref->store(node.get());
    say("matchmakerd: node '" + node->report()["node"].get<std::string>() + "' of a cluster of " +
        std::to_string(c.cluster_total) + " shards");
  }

  while (!stop_requested) std::this_thread::sleep_for(std::chrono::milliseconds(50));

  say("matchmakerd: stopping (writing snapshots)");
  session_bridge.release_waiters();  // long-polls answered now: nothing holds the stop
  events->close();
  http.stop();
  ctx.cluster = nullptr;
  cluster_ref->store(nullptr);
  // A node hands its shards over first: each writes its last snapshot, then
  // its lease is freed and another node takes it at once.
  if (node) node->stop();
  if (load) self->send_exit(load, caf::exit_reason::user_shutdown);
  if (actor_port) actor_port->close();
  save_sessions();
  // After the save: the demo stream owns its tickets, and an owner that is
  // gone has its tickets cancelled.
  if (session_load) self->send_exit(session_load, caf::exit_reason::user_shutdown);
  stop_actors();
  say("matchmakerd: stopped");
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
  try {
    return run(cl.config);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "matchmakerd: %s\n", e.what());
    return 1;
  }
}
