#include "session_host.hpp"

#include <caf/all.hpp>
#include <chrono>

#include "access.hpp"
#include "mm/actors/errors.hpp"
#include "mm/actors/session_reconfigure.hpp"
#include "mm/actors/session_service.hpp"
#include "mm/engine/log.hpp"
#include "session_persistence.hpp"
#include "store_url.hpp"
#include "unix_time.hpp"

namespace mm::server {

namespace {

// How often the feed reads the event stream when no local partition
// committed: the delay of another node's events on this node's feed.
constexpr std::chrono::milliseconds stream_follow_period{50};

}  // namespace

std::shared_ptr<ticket_recording> open_recording(const server_config& c) {
  if (c.sessions.record.queues.empty()) return nullptr;
  // What a replay needs to run the same queues: their config and the
  // datacenters' (docs/session.md, "Recording").
  json header = {{"queues", queues_json(c.sessions.queues)},
                 {"queue_template", c.sessions.queue_template},
                 {"recorded", c.sessions.record.queues},
                 {"datacenters", datacenters_json(c.sessions)},
                 {"detour_factor", c.sessions.detour_factor}};
  auto r = std::make_shared<ticket_recording>(c.sessions.record, std::move(header));
  say("server", "matchmakerd: recording the tickets of " +
                    std::to_string(c.sessions.record.queues.size()) + " queue(s) into " +
                    c.sessions.record.dir);
  return r;
}

session_host::session_host(caf::actor_system& sys, const server_config& c, std::string service_name,
                           std::shared_ptr<actors::ticket_event_feed> events,
                           std::shared_ptr<ticket_recording> recording)
    : sys_(sys),
      config_(c),
      name_(std::move(service_name)),
      events_(std::move(events)),
      recording_(std::move(recording)),
      runs_(std::max<std::uint32_t>(1, c.sessions.partitions)),
      queues_(c.sessions.queues) {
  running_ = std::make_unique<std::atomic<bool>[]>(runs_.size());
  name_queues();
  // Ids come from the deployment's key and generations drawn in the store.
  std::shared_ptr<player_store> id_store = open_configured_store(c);
  const auto key = id_store->ticket_id_key(session::random_id_key());
  const auto count = static_cast<std::uint32_t>(runs_.size());
  for (std::uint32_t p = 0; p < count; ++p)
    ids_.push_back(std::make_shared<session::id_source>(
        key, [id_store] { return id_store->reserve_id_generation(); }, p));
  partitions_ = std::make_shared<actors::session_partitions>(count, ids_[0]->permutation());
  handle_ = caf::actor_cast<actors::session_interfaces::service>(actors::make_session_switch(
      sys, partitions_, sys.message_types<actors::session_interfaces::service>()));
  if (count > 1)
    follower_ = std::make_unique<actors::stream_follower>(
        open_configured_store(c), name_, events_, stream_follow_period,
        [this](const std::vector<journal_event>& rows) { news_.post(rows); });
}

session_host::~session_host() {
  stop_all();
  follower_.reset();
}

std::string session_host::service_of(std::uint32_t p) const {
  return session::partition_service(name_, p, partitions_->count());
}

bool session_host::running(std::uint32_t p) const {
  if (p >= runs_.size()) throw std::out_of_range("session_host::running: no partition");
  return running_[p].load();
}

std::vector<std::string> session_host::queue_names() const {
  std::lock_guard lock(names_mutex_);
  return names_;
}

void session_host::name_queues() {
  std::vector<std::string> names;
  for (const auto& q : queues_) names.push_back(q.name);
  std::lock_guard lock(names_mutex_);
  names_ = std::move(names);
}

void session_host::start_all() {
  for (std::uint32_t p = 0; p < partitions_->count(); ++p) start(p, {});
}

void session_host::stop_all() {
  for (std::uint32_t p = 0; p < partitions_->count(); ++p) stop(p);
}

namespace {

std::optional<session::queue_config> template_of(const std::vector<session::queue_config>& queues,
                                                 const std::string& name) {
  for (const auto& q : queues)
    if (q.name == name) return q;
  return std::nullopt;
}

}  // namespace

std::uint32_t session_host::apply_queues(std::int64_t version,
                                         std::vector<session::queue_config> queues) {
  std::lock_guard lock(mutex_);
  queues_ = std::move(queues);
  queues_version_ = version;
  name_queues();
  caf::scoped_actor self{sys_};
  std::uint32_t changed = 0;
  for (const auto& run : runs_) {
    if (!run.service) continue;
    // Each service takes its partition's share (session_service_config::partition).
    const auto service = caf::actor_cast<actors::session_service_actor>(run.service);
    caf::error failed;
    self->request(service, std::chrono::seconds(30), actors::configure_atom::value,
                  actors::queue_set{queues_, template_of(queues_, config_.sessions.queue_template)})
        .receive([&](std::uint32_t n) { changed += n; },
                 [&](caf::error& e) { failed = std::move(e); });
    if (failed) {
      // The project's own sentence when it has one (it names the key).
      const bool ours = error_code_of(failed) && failed.context().match_elements<std::string>();
      throw mm::error(error_code_of(failed).value_or(errc::instance_down),
                      ours ? failed.context().get_as<std::string>(0) : sys_.render(failed));
    }
  }
  return changed;
}

void session_host::start(std::uint32_t p, const write_fence& fence) {
  std::lock_guard lock(mutex_);
  auto& run = runs_.at(p);
  if (run.service) return;
  run.fence = fence;
  const auto& s = config_.sessions;
  const std::uint32_t count = partitions_->count();
  const std::string name = service_of(p);
  actors::session_service_config sessions;
  sessions.queues = queues_;
  sessions.partition = {p, count};
  if (count > 1) {
    // One waiting ticket per player across the partitions, and one event
    // sequence, both in the store.
    sessions.shared_claims = true;
    sessions.event_stream = name_;
  }
  sessions.latency = latency_model_of(s);
  sessions.default_queue = template_of(queues_, s.queue_template);
  sessions.max_queues = s.max_queues;
  sessions.lobbies.max_lobbies = s.max_lobbies;
  sessions.lobbies.max_lobbies_per_owner = s.max_lobbies_per_credential;
  sessions.lobbies.max_lobby_players = s.max_lobby_players;
  sessions.lobbies.max_party_size = s.max_lobby_party;
  sessions.max_backfills_per_credential = s.max_backfills_per_credential;
  sessions.backfill_requests_per_s = s.backfill_requests_per_s;
  sessions.backfill_burst = s.backfill_burst;
  sessions.explains_per_s = s.explains_per_s;
  sessions.wait_reasons_every = s.wait_reasons_every;
  sessions.recorder = recording_;
  // Tickets are durable in the journal, on a connection of its own, fenced
  // by the lease on a node of a cluster.
  std::shared_ptr<player_store> journal_store = open_configured_store(config_);
  if (!fence.empty()) journal_store->set_write_fence(fence);
  if (count > 1) {
    // A ticket's id names its partition: the waiting tickets of the one
    // service before partitions cannot move into them, nor its running
    // matches. They are refused rather than left unread.
    const auto left = journal_store->read_waiting_tickets(name_).size();
    const auto running = journal_store->read_backfills(name_).size();
    if (left + running > 0)
      throw mm::error(errc::invalid_config,
                      "sessions.partitions: the queues' journal without partitions ('" + name_ +
                          "') still holds " + std::to_string(left) + " waiting tickets and " +
                          std::to_string(running) +
                          " running matches; run with sessions.partitions 1 until the tickets "
                          "are matched or cancelled and the matches stopped, then turn the "
                          "partitions on");
    // Running match ids are claimed across the partitions (by the journal);
    // the claims an earlier run took for matches it never wrote go first.
    if (const auto n = journal_store->drop_orphan_match_claims(name))
      say("server", "matchmakerd: " + std::to_string(n) +
                        " running match ids claimed but never registered were freed");
  }
  sessions.ids = ids_[p];
  sessions.store = journal_store;
  run.health->last_write_failed = false;  // this start's journal: nothing written yet
  sessions.journal_writes = run.health;
  sessions.service_name = name;
  sessions.outcome_retention = s.outcome_retention;
  sessions.max_outcomes = s.max_outcomes;
  sessions.unix_epoch_ms = unix_now_ms();
  {
    // The lobbies of the last graceful stop; and the waiting tickets an
    // earlier version kept there, moved into the journal once.
    auto state_store = open_configured_store(config_);
    if (!fence.empty()) state_store->set_write_fence(fence);
    const auto r = restore_session_state(state_store->take_session_state(name), s, unix_now_ms());
    if (!r.tickets.created.empty()) journal_store->write_journal(name, r.tickets);
    sessions.restored_lobbies = r.lobbies;
    const auto& ids = ids_[p]->permutation();
    if (const auto moved = actors::adopt_v8_journal(*journal_store, name, ids))
      say("server", "matchmakerd: " + std::to_string(moved) +
                        " tickets of the journal moved to version 9's rows (by serial)");
    if (count > 1) news_.expect(name);  // before its guest rows are read
    sessions.restored = actors::load_session_journal(
        *journal_store, name, &ids, sessions.unix_epoch_ms, sessions.outcome_retention,
        sessions.max_outcomes, sessions.event_stream, count > 1);
    adopt_token_names(config_, sessions.restored);
    const auto& back = sessions.restored;
    if (back.waiting.size() + back.retained.size() + back.unreadable + r.lobbies.size() > 0)
      say("server",
          "matchmakerd: sessions of the last run: " + std::to_string(back.waiting.size()) +
              " waiting tickets back, " + std::to_string(back.retained.size()) +
              " outcomes kept, " + std::to_string(back.unreadable) + " unreadable; " +
              std::to_string(r.lobbies.size()) + " lobbies back");
  }
  if (follower_) {
    // The follower reads the stream, every partition's events, in order.
    sessions.events_committed = [f = follower_.get()] { f->poke(); };
  } else {
    // The events written before stay readable from their sequence numbers
    // (the feed takes only those newer than what it holds).
    events_->append(sessions.restored.events);
    events_->continue_from(sessions.restored.last_seq);
    events_->set_live(true);
    sessions.events = events_;
  }
  sessions.restored.events.clear();
  // Books of this run's own: the HTTP server reads them for ticket polls
  // while this run serves, never an older run's.
  sessions.book =
      std::make_shared<actors::ticket_book>(sessions.outcome_retention, sessions.max_outcomes);
  run.service = caf::actor_cast<caf::actor>(sys_.spawn(actors::session_service, sessions));
  if (count > 1) news_.serve(name, run.service);
  partitions_->target(p).set(caf::actor_cast<caf::strong_actor_ptr>(run.service), sessions.book);
  running_[p] = true;
}

void session_host::abandon(std::uint32_t p) {
  std::lock_guard lock(mutex_);
  auto& run = runs_.at(p);
  partitions_->target(p).clear({});
  running_[p] = false;
  news_.forget(service_of(p));
  if (run.service) caf::anon_send_exit(run.service, caf::exit_reason::kill);
  run.service = nullptr;
  // The event followers see the queues gone and go elsewhere; with
  // partitions every node's feed follows the stream and stays.
  if (!follower_) events_->set_live(false);
}

void session_host::stop(std::uint32_t p, const std::string& served_by) {
  std::lock_guard lock(mutex_);
  auto& run = runs_.at(p);
  partitions_->target(p).clear(served_by);
  running_[p] = false;  // requests go elsewhere from now on, while it saves
  news_.forget(service_of(p));
  if (!run.service) return;
  const std::string name = service_of(p);
  const auto service = caf::actor_cast<actors::session_service_actor>(run.service);
  caf::scoped_actor self{sys_};
  // The queues stop and the journal writes what it holds (every ticket is
  // durable already); the lobbies go to the session state table, read back
  // by the next start.
  self->request(service, std::chrono::seconds(10), actors::session_save_atom::value)
      .receive([&](bool) {},
               [&](caf::error& e) {
                 log(log_level::error, "sessions",
                     "the session queues did not stop: " + sys_.render(e));
               });
  std::optional<std::vector<actors::lobby_registration>> lobbies;
  self->request(service, std::chrono::seconds(10), actors::lobby_atom::value,
                actors::inspect_atom::value)
      .receive([&](std::vector<actors::lobby_registration>& l) { lobbies = std::move(l); },
               [&](caf::error& e) {
                 log(log_level::error, "sessions", "the lobbies did not answer: " + sys_.render(e));
               });
  if (lobbies) {
    try {
      auto state_store = open_configured_store(config_);
      if (!run.fence.empty()) state_store->set_write_fence(run.fence);
      state_store->write_session_state(name, session_state_of(*lobbies), unix_now_ms());
      say("server", "matchmakerd: kept " + std::to_string(lobbies->size()) +
                        " lobbies for the next start; the tickets are in the journal");
    } catch (const std::exception& e) {
      log(log_level::error, "sessions", std::string("the lobbies were not written: ") + e.what());
    }
  }
  self->monitor(run.service);
  self->send_exit(run.service, caf::exit_reason::user_shutdown);
  self->receive([](const caf::down_msg&) {},
                caf::after(std::chrono::seconds(30)) >>
                    [] {
                      log(log_level::error, "sessions",
                          "the session service did not stop within 30 s");
                    });
  run.service = nullptr;
  // Every event the stop wrote is in the feed: the followers get them, then
  // see the queues gone (on a node of a cluster) and go elsewhere. With
  // partitions the feed follows the stream and stays; the stop's events
  // reach it at the follower's next read.
  if (follower_)
    follower_->poke();
  else
    events_->set_live(false);
}

}  // namespace mm::server
