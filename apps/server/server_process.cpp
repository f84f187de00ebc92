#include "server_process.hpp"

#include <cstdio>
#include <filesystem>

#include "demo_query_load.hpp"
#include "demo_session_load.hpp"
#include "mm/actors/registration.hpp"
#include "mm/engine/log.hpp"
#include "store_url.hpp"

namespace mm::server {

namespace {

std::unique_ptr<player_store> open_demo_store(const server_config& c) {
  if (c.database_url.empty()) {
    const std::filesystem::path db_path(c.database_path);
    if (db_path.has_parent_path()) std::filesystem::create_directories(db_path.parent_path());
  }
  auto db = open_configured_store(c);
  if (auto problem = db->integrity_problem())
    throw store_error("database '" + db->where() + "' is damaged (" + *problem +
                      "): restore it from a backup, or move it aside to start on a new file");
  fill_demo_table(*db, c.effective_demo_players());
  say("server", "matchmakerd: database " + db->where() + " holds " +
                    std::to_string(db->count_players()) + " players");
  return db;
}

caf::actor_system_config& network_config(caf::actor_system_config& cfg, const server_config& c) {
  actors::use_network(cfg, c.actor_tls);
  actors::set_worker_idle(cfg, c.worker_idle);
  cfg.set("logger.verbosity", caf::atom("quiet"));
  actors::add_message_types<generic_profile>(cfg, "generic");
  return cfg;
}

}  // namespace

server_process::server_process(const server_config& c)
    : config_(c),
      db_(open_demo_store(c)),
      // Before the actor system: a recording directory that cannot be
      // written stops the start here.
      recording_(open_recording(c)),
      query_recording_(open_query_recording(c)),
      sys_(network_config(actor_config_, c)),
      self_(sys_),
      // Who each caller is (mm/actors/identity.hpp): the tokens of HTTP and
      // the port's hello, the TLS peers' certificates, the anonymous role.
      identities_(
          std::make_shared<actors::identity_book>(c.tokens, c.actor_peers, c.actor_anonymous_role)),
      cluster_ref_(std::make_shared<std::atomic<const cluster_node*>>(nullptr)) {
  // The profile's configuration versions (config_scopes.hpp): the store's
  // latest is the instances' profile from their start, and followed after.
  live_profile_.emplace(
      c, profile_config_scope(c, [this](const generic_profile_config& p, bool rebuild) {
        return apply_profile(p, rebuild);
      }));
  actors::instance_config<profile> base;
  base.id = "mm";
  base.opts = c.opts;
  base.profile = profile(read_profile_document(c.profile, live_profile_->applied_document()));
  base.database.path = store_location(c);
  base.database.open = [io = c.store_io_timeout()](const std::string& where) {
    return open_store_at(where, io);
  };
  if (query_recording_)
    base.observe = [r = query_recording_](std::uint32_t shard) { return observer_of(r, shard); };
  // In a cluster every shard has a dormant supervisor here, run while this
  // node holds its lease (cluster_node.hpp).
  if (c.cluster_total > 0) {
    deadline_ = std::make_shared<cluster::serving_deadline>();
    base.lease_gate = deadline_;
    base.lease_idle_limit = std::max(std::chrono::milliseconds(100), c.cluster_takeover_after / 10);
  }
  const actors::set_part part = c.instance_part();
  // The instances' engines, shared with the query bridge: an HTTP query is
  // answered on the network thread where its instance is free (engine_slot.hpp).
  slots_ = std::make_shared<actors::engine_slots<profile>>(part.total);
  base.slots = slots_;
  // From the first actor on, a failure stops what runs before it is thrown:
  // the actor system's destructor waits for every actor.
  try {
    set_ = actors::spawn_instance_part<profile>(sys_, part, base);
    actors::query_bridge<profile>::slot_list member_slots;
    for (const std::uint32_t i : part.shards) member_slots.push_back(slots_->slots.at(i));
    std::vector<std::string> names;
    for (const std::uint32_t i : part.shards)
      names.push_back(actors::member_config(base, part.total, i).id);
    const auto timeout = std::chrono::milliseconds(c.query_timeout_ms);
    client_ = actors::spawn_client<profile>(sys_, set_, std::uint64_t{1}, part);
    bridge_.emplace(sys_, set_, names, client_, timeout);
    queries_.emplace(sys_, set_, timeout, std::uint64_t{2}, std::move(member_slots));

    // The session matchmaker: every queue behind one service actor, started
    // here on a server alone, and by the lease on a node of a cluster.
    events_ = std::make_shared<actors::ticket_event_feed>(
        actors::ticket_event_feed::limits{c.sessions.max_outcomes, c.sessions.outcome_retention});
    const std::string service_name = session_service_name(c);
    sessions_.emplace(sys_, c, service_name, events_, recording_);
    // The queues' configuration versions (live_config.hpp): the store's
    // latest is in force before the service starts, and followed after.
    live_sessions_.emplace(
        c, sessions_config_scope(
               c, service_name,
               [this](std::int64_t version, const std::vector<session::queue_config>& q) {
                 return sessions_->apply_queues(version, q);
               }));
    if (c.cluster_total == 0) sessions_->start_all();
    live_sessions_->follow();
    live_profile_->follow();
    std::function<void()> flush;
    if (recording_) flush = [r = recording_] { r->flush(); };
    dry_run_.emplace(c, std::move(flush));
  } catch (...) {
    live_sessions_.reset();
    live_profile_.reset();
    stop_actors();
    throw;
  }
  std::string list;
  for (const auto& q : c.sessions.queues) list += (list.empty() ? "" : ", ") + q.name;
  say("server", "matchmakerd: session queues: " + (list.empty() ? std::string("none") : list) +
                    " over " + std::to_string(c.sessions.datacenters.size()) + " datacenters");
}

server_process::~server_process() {
  stop();
}

bool server_process::open() {
  const server_config& c = config_;
  const auto session_service = sessions_->handle();
  if (c.actor_port >= 0) {
    // One actor for both halves: the routing client and the session service.
    front_ = sys_.spawn(actors::game_front<profile>, client_, session_service,
                        actors::served_now([&c, cluster_ref = cluster_ref_] {
                          served_resources out;
                          if (c.cluster_total == 0) {  // a server alone: all of its set
                            for (std::uint32_t i = 0; i < c.instances; ++i) out.shards.push_back(i);
                            out.sessions = true;
                            return out;
                          }
                          if (const cluster_node* n = cluster_ref->load()) {
                            out.shards = n->served_shards();
                            // With partitions the node's switch answers each
                            // request for the partitions it serves.
                            out.sessions = n->serves_sessions();
                          }
                          return out;
                        }),
                        identities_);
    auto published =
        actors::publish_actor(sys_, front_, static_cast<std::uint16_t>(c.actor_port), c.actor_host,
                              c.actor_tls.enabled(), c.actor_limits, identities_);
    if (!published) {
      log(log_level::error, "server",
          "cannot publish the actor port on " + c.actor_host + ":" + std::to_string(c.actor_port) +
              ": " + sys_.render(published.error()));
      stop();
      return false;
    }
    actor_port_ = std::move(*published);
    say("server", "matchmakerd: actor port listening on " + c.actor_host + ":" +
                      std::to_string(actor_port_->port()) +
                      (c.actor_tls.enabled() ? " (mutual TLS)" : ""));
  }

  if (c.effective_demo_qps() > 0)
    query_load_ = sys_.spawn(demo_query_load, caf::actor_cast<iface::client>(client_),
                             c.effective_demo_qps(), db_->count_players());
  if (c.effective_demo_session_players() > 0 && !c.sessions.queues.empty()) {
    // The first queue; with partitions every queue in turn, so that each
    // node's queues move (a node's tickets for another's queues are refused).
    demo_session_settings demo{{}, c.sessions.datacenters, c.effective_demo_session_players()};
    std::string names;
    for (const auto& q : c.sessions.queues) {
      demo.queues.push_back({q.name, q.max_party_size});
      names += (names.empty() ? "'" : ", '") + q.name + "'";
      if (c.sessions.partitions <= 1) break;
    }
    session_load_ = sys_.spawn(demo_session_load, session_service, std::move(demo));
    say("server", "matchmakerd: demo: " + std::to_string(c.effective_demo_session_players()) +
                      " synthetic players a second join session queue " + names);
  }

  read_db_ = open_configured_store(c);
  const auto timeout = std::chrono::milliseconds(c.query_timeout_ms);
  // Ticket polls are answered from the running service's books where they
  // arrive (session_bridge.hpp).
  session_bridge_.emplace(sys_, session_service, timeout, std::chrono::seconds(1),
                          sessions_->partitions());
  http_context_.emplace(c, *identities_, *bridge_, *queries_, *session_bridge_, *db_, *read_db_);
  http_context& ctx = *http_context_;
  ctx.events = events_.get();
  ctx.recording = sessions_->recording();
  ctx.queries_recording = query_recording_.get();
  add_readiness_checks();
  ctx.readiness = &readiness_;
  ctx.reload_tokens = [this] { return reload_tokens(); };
  ctx.live_sessions = &*live_sessions_;
  ctx.live_profile = &*live_profile_;
  ctx.dry_run = &*dry_run_;
  // Every connection is a file descriptor: take what the system allows.
  const std::uint64_t files = raise_open_file_limit();
  if (files != 0 && files < c.http.max_connections + 256)
    log(log_level::warning, "server",
        "http.max_connections is " + std::to_string(c.http.max_connections) +
            " but this process may open only " + std::to_string(files) +
            " files (ulimit -n): connections past that are refused");
  http_handlers handlers;
  std::shared_ptr<const api_routes> routes;
  try {
    routes = api_table(ctx);
    handlers = api_handlers(ctx, routes);
  } catch (const std::logic_error& e) {
    log(log_level::error, "server", e.what());
    stop();
    return false;
  }
  http_ = std::make_unique<http_server>(c.http, std::move(handlers));
  ctx.counters.connections = &http_->stats();
  ctx.counters.queries_answered_inline = [q = &*queries_] { return q->answered_inline(); };
  ctx.counters.bridge_batches = [q = &*queries_] { return q->batch_answers(); };
  ctx.counters.ticket_polls_answered_inline = [b = &*session_bridge_] {
    return b->answered_here();
  };
  if (actor_port_) ctx.counters.actor_port = [p = actor_port_.get()] { return p->counters(); };
  std::uint16_t http_port = 0;
  try {
    http_port = http_->listen(c.http_host, c.http_port);
  } catch (const std::exception& e) {
    log(log_level::error, "server", std::string(e.what()) + " (in use, or not an address here)");
    stop();
    return false;
  }
  say("server", "matchmakerd: http listening on http://" + c.http_host + ":" +
                    std::to_string(http_port) + "/");
  if (c.effective_resp_port() >= 0) {
    resp_commands_ = std::make_unique<resp_commands>(ctx, routes, c.resp);
    resp_ = std::make_unique<resp_server>(c.resp, resp_commands_->handlers());
    ctx.counters.resp = &resp_->stats();
    try {
      const auto port =
          resp_->listen(c.resp.host, static_cast<std::uint16_t>(c.effective_resp_port()));
      say("server", "matchmakerd: resp listening on " + c.resp.host + ":" + std::to_string(port));
    } catch (const std::exception& e) {
      log(log_level::error, "server", std::string(e.what()) + " (in use, or not an address here)");
      stop();
      return false;
    }
  }

  // A node of a cluster joins once its ports are known (the others redirect
  // to them) and takes its share of the shards.
  if (c.cluster_total > 0) {
    std::vector<cluster_node::supervisor> supervisors;
    for (const auto& m : set_) supervisors.push_back(caf::actor_cast<cluster_node::supervisor>(m));
    try {
      node_ = std::make_unique<cluster_node>(sys_, c, supervisors, *sessions_, deadline_, http_port,
                                             actor_port_ ? actor_port_->port() : -1);
    } catch (const std::exception& e) {
      log(log_level::error, "server", std::string("cannot join the cluster: ") + e.what());
      stop();
      return false;
    }
    ctx.cluster = node_.get();
    cluster_ref_->store(node_.get());
    say("server", "matchmakerd: node '" + node_->report()["node"].get<std::string>() +
                      "' of a cluster of " + std::to_string(c.cluster_total) + " shards");
  }
  return true;
}

std::uint32_t server_process::apply_profile(const generic_profile_config& p, bool rebuild) {
  // Before the instances start (the first version): they start with it.
  if (set_.empty()) return 0;
  caf::scoped_actor self{sys_};  // this thread's own (the follower's, a handler's)
  std::uint32_t changed = 0;
  for (const auto& m : set_)
    self->request(m, std::chrono::seconds(30), actors::configure_atom::value,
                  actors::profile_change<profile>{profile(p), rebuild})
        .receive([&](bool) { ++changed; },
                 [&](caf::error& e) {
                   log(log_level::error, "matchmaker",
                       "a matchmaker did not take the new profile: " + sys_.render(e));
                 });
  return changed;
}

json server_process::reload_tokens() {
  std::lock_guard lock(reload_mutex_);  // a signal's and a route's at once: one after the other
  auto tokens = reread_tokens(config_);
  identities_->replace_tokens(std::move(tokens));
  json list = json::array();
  std::string names;
  for (const auto& who : identities_->token_identities()) {
    list.push_back({{"name", who.name}, {"role", std::string(to_string(who.granted))}});
    names +=
        (names.empty() ? "" : ", ") + who.name + " (" + std::string(to_string(who.granted)) + ")";
  }
  log(log_level::info, "server", "tokens reloaded from " + config_.config_file + ": " + names);
  return {{"tokens", list}};
}

// GET /readyz (readiness.hpp): each check none when ok, else why not.
void server_process::add_readiness_checks() {
  using problem = std::optional<std::string>;
  readiness_.add("store", [this]() -> problem {
    std::lock_guard lock(http_context_->read_db_mutex);
    // One indexed lookup (id 0 is never looked up); throws when the database
    // cannot be read.
    read_db_->find_player(1);
    return std::nullopt;
  });
  if (config_.cluster_total > 0)
    readiness_.add("cluster", [this]() -> problem {
      const cluster_node* node = cluster_ref_->load();
      if (!node) return "not joined yet";
      if (!node->metrics().serving)
        return "its heartbeat was not renewed in time: it serves nothing until it is";
      std::string missing;
      for (const auto& r : node->planned_not_held()) missing += (missing.empty() ? "" : ", ") + r;
      if (!missing.empty()) return "not held yet, planned here: " + missing;
      return std::nullopt;
    });
  readiness_.add("shards", [this]() -> problem {
    const actors::set_part part = config_.instance_part();
    std::vector<std::uint32_t> served = part.shards;  // a server alone: all of its part
    if (config_.cluster_total > 0) {
      const cluster_node* node = cluster_ref_->load();
      served = node ? node->served_shards() : std::vector<std::uint32_t>{};
    }
    std::string waiting;
    for (const std::uint32_t shard : served) {
      const auto at = std::find(part.shards.begin(), part.shards.end(), shard);
      if (at == part.shards.end()) continue;
      const auto i = static_cast<std::size_t>(at - part.shards.begin());
      const auto info = bridge_->info(i);
      if (!info || info->instance.ready_unix_ms == 0)
        waiting += (waiting.empty() ? "" : ", ") + bridge_->names()[i];
    }
    if (!waiting.empty())
      return "neither restored from a snapshot nor past a first scan: " + waiting;
    return std::nullopt;
  });
  if (!config_.sessions.queues.empty() || !config_.sessions.queue_template.empty())
    readiness_.add("sessions", [this]() -> problem {
      const cluster_node* node = cluster_ref_->load();
      const std::uint32_t count = sessions_->partition_count();
      for (std::uint32_t p = 0; p < count; ++p) {
        const auto resource = session::partition_resource(p, count);
        // Another node's: the cluster check says if it should be here.
        if (config_.cluster_total > 0 && !(node && node->serves(resource))) continue;
        const std::string which =
            count > 1 ? "the session service of partition " + std::to_string(p) + " "
                      : "the session service ";
        if (!sessions_->running(p)) return which + "is not running";
        if (sessions_->journal_write_failed(p))
          return which + "could not write its ticket journal to the store (last write failed)";
      }
      return std::nullopt;
    });
}

void server_process::stop() {
  if (actors_stopped_) return;
  if (session_bridge_) session_bridge_->release_waiters();  // nothing holds the stop
  events_->close();
  if (resp_) resp_->stop();
  if (http_) http_->stop();
  readiness_.stop();       // its checks read what stops next; waits for a run in flight
  resp_commands_.reset();  // after both doors: waits for its commands running
  if (http_context_) http_context_->cluster = nullptr;
  cluster_ref_->store(nullptr);
  // A node hands its shards over first: each writes its last snapshot, then
  // its lease is freed and another node takes it at once.
  if (node_) node_->stop();
  // No change reaches the queues or the matchmakers while they stop.
  live_sessions_.reset();
  live_profile_.reset();
  if (query_load_) self_->send_exit(query_load_, caf::exit_reason::user_shutdown);
  if (actor_port_) actor_port_->close();
  // The queues stop and the journal writes what it holds (every ticket is
  // durable already); the lobbies go to the session state table, read back
  // at the next start.
  sessions_->stop_all();
  // After the save: the demo stream owns its tickets, and an owner that is
  // gone has its tickets cancelled.
  if (session_load_) self_->send_exit(session_load_, caf::exit_reason::user_shutdown);
  stop_actors();
}

// Each supervisor passes the stop to its instance, which writes its snapshot
// on the way out; the actor system's destructor waits for those last writes.
void server_process::stop_actors() {
  if (actors_stopped_) return;
  actors_stopped_ = true;
  for (auto& inst : set_) {
    self_->monitor(inst);
    self_->send_exit(inst, caf::exit_reason::user_shutdown);
  }
  self_->send_exit(client_, caf::exit_reason::user_shutdown);
  if (front_) self_->send_exit(front_, caf::exit_reason::user_shutdown);
  std::size_t down = 0;
  self_->receive_while([&] { return down < set_.size(); })(
      [&](const caf::down_msg&) { ++down; }, caf::after(std::chrono::seconds(30)) >>
                                                 [&] {
                                                   log(log_level::error, "server",
                                                       "some matchmakers did not stop within 30 s");
                                                   down = set_.size();
                                                 });
}

}  // namespace mm::server
