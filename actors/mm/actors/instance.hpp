// A matchmaker instance: one actor owning one engine and one database worker.
// The engine sits in an engine slot (engine_slot.hpp): the actor holds the
// slot's mutex for every use (eng()), and the only other user, the query
// bridge on the HTTP network thread, answers single queries through it when
// the mutex is free and the slot open (after the restore, before the stop).
// Self-re-arming timers drive the scan, the rebalance and the snapshot
// (docs/design.md); database work runs on the worker and its results are
// applied here. At most one scan is in flight. A graceful exit writes a final
// snapshot.
#pragma once

#include <caf/all.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "mm/actors/db_worker.hpp"
#include "mm/actors/engine_slot.hpp"
#include "mm/actors/errors.hpp"
#include "mm/actors/interface.hpp"
#include "mm/cluster/serving_deadline.hpp"
#include "mm/engine/engine.hpp"
#include "mm/engine/log.hpp"
#include "mm/storage/snapshot.hpp"

namespace mm::actors {

template <class Profile>
struct instance_config {
  std::string id;  // instance id: the key of its state row
  options opts;
  Profile profile;
  db_worker_config database;
  bool detached_worker = true;  // false on the deterministic test scheduler
  // How long a scan may take before it is given up (and another may start).
  std::chrono::milliseconds scan_timeout{60'000};
  // When set, the instance's engine lives in slots->slots[database.shard_index],
  // where the query bridge answers HTTP queries on the network thread
  // (engine_slot.hpp); else in a slot of its own that nothing else reads.
  std::shared_ptr<engine_slots<Profile>> slots;
  // Set on a node of a cluster with leases: the supervisor starts dormant
  // and runs the instance only while the node holds the shard's lease and
  // its serving deadline is open (supervisor.hpp).
  std::shared_ptr<const cluster::serving_deadline> lease_gate;
  // How long the database lets a fenced write's transaction sit idle
  // (write_fence::idle_limit).
  std::chrono::milliseconds lease_idle_limit{1000};
  // Set to record the traffic (matchmakerd's record_queries): the observer
  // of each engine the instance starts, by its shard index
  // (engine_observer.hpp).
  std::function<std::shared_ptr<engine_observer<Profile>>(std::uint32_t shard)> observe;
};

template <class Profile>
struct instance_state {
  // Not an aggregate: CAF would otherwise build the state from the actor pointer.
  instance_state() = default;
  instance_state(const instance_state&) = delete;
  instance_state& operator=(const instance_state&) = delete;
  // The run's engine goes with the state (CAF destroys it when the actor
  // exits, a crash included).
  ~instance_state() {
    if (slot) slot->retire(generation);
  }
  // Where the engine lives; every use goes through eng(), which holds the
  // slot's mutex for the statement (or the scope of the returned object).
  std::shared_ptr<engine_slot<Profile>> slot;
  std::uint64_t generation = 0;
  typename engine_slot<Profile>::locked eng() { return slot->lock(); }
  instance_config<Profile> config;
  db_worker worker;
  bool scan_in_flight = false;
  bool restore_done = false;
  instance_counters counters;
  bool stopping = false;  // the last snapshot is being written
  // Where a routed query goes when this instance finds none (invalid: nowhere,
  // this instance answers for the set).
  typename interfaces<Profile>::set_member next;
  // Updates that arrive before the snapshot is restored wait here: the restore
  // replaces the cache, and they must not be lost under it.
  std::vector<player_update<typename Profile::model_type>> pending_updates;
  // The wall clock at start and the actor clock then: times written to
  // snapshots move with the actor clock, so the deterministic test scheduler's
  // virtual time drives the rebalance schedule as real time does in a server.
  std::int64_t wall_at_start_unix_ms = 0;
  caf::actor_clock::time_point clock_at_start;
  static inline const char* name = "mm.instance";
};

inline std::int64_t wall_unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

template <class Profile>
using instance_pointer =
    typename interfaces<Profile>::instance::template stateful_pointer<instance_state<Profile>>;

template <class Profile>
std::int64_t now_unix_ms(instance_pointer<Profile> self) {
  const auto& st = self->state;
  return st.wall_at_start_unix_ms + std::chrono::duration_cast<std::chrono::milliseconds>(
                                        self->clock().now() - st.clock_at_start)
                                        .count();
}

// Encodes a snapshot here (it reads the engine) and has the worker write it;
// `done` runs once the write is done or failed.
template <class Profile>
void write_snapshot(instance_pointer<Profile> self, std::function<void()> done = {}) {
  auto& st = self->state;
  // Not before the stored snapshot is read back: the cache is still empty
  // then, and would overwrite the warm one (a shard handed over and stopped
  // again at once did). Nothing this instance holds is newer than the stored
  // one yet: the updates it waits with are in the player table.
  if (!st.restore_done) {
    if (done) done();
    return;
  }
  const auto started = std::chrono::steady_clock::now();
  stored_state s{now_unix_ms<Profile>(self), snapshot_version,
                 encode_snapshot(take_snapshot(*st.eng()))};
  const std::int64_t at = s.persisted_at_unix_ms;
  self->request(st.worker, std::chrono::seconds(30), save_atom::value, st.config.id, std::move(s))
      .then(
          [=](std::uint64_t bytes) {
            auto& c = self->state.counters;
            c.state_bytes = bytes;
            c.last_snapshot_unix_ms = at;
            c.last_snapshot_seconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
            ++c.snapshots_written;
            if (done) done();
          },
          [=](caf::error& e) {
            ++self->state.counters.snapshot_failures;
            log(log_level::error, "matchmaker",
                "matchmaker '" + self->state.config.id +
                    "': snapshot not written: " + self->system().render(e));
            if (done) done();
          });
}

// The first sizing comes as soon as there are enough samples, and the next ones
// early while the samples grow tenfold (engine::rebalance_due_early), not only
// every rebalance interval.
template <class Profile>
void rebalance_if_due_early(instance_pointer<Profile> self) {
  const auto eng = self->state.eng();
  if (!eng->rebalance_due_early()) return;
  if (eng->rebalance(now_unix_ms<Profile>(self)).performed) write_snapshot<Profile>(self);
}

// The rebalance tick is armed for the moment the interval since the last
// rebalance ends, persisted across restarts: a service restarted more often
// than the interval still rebalances on time.
template <class Profile>
void arm_rebalance_tick(instance_pointer<Profile> self) {
  const auto interval =
      std::chrono::milliseconds(self->state.config.opts.buckets_rebalance_interval);
  const std::int64_t last = self->state.eng()->last_rebalance_unix_ms();
  auto delay = interval;
  if (last > 0) {
    const auto since = std::chrono::milliseconds(now_unix_ms<Profile>(self) - last);
    if (since >= interval)
      delay = std::chrono::milliseconds(0);
    else if (since.count() >= 0)
      delay = interval - since;
  }
  self->delayed_send(self, delay, rebalance_tick_atom::value);
}

template <class Profile>
void start_scan(instance_pointer<Profile> self) {
  auto& st = self->state;
  if (st.scan_in_flight) return;  // the previous scan is still running: skip this tick
  st.scan_in_flight = true;
  const std::uint32_t requested = st.eng()->scan_fetch_count();
  self->request(st.worker, st.config.scan_timeout, scan_atom::value, requested,
                st.config.opts.database_scan_batch_size)
      .then(
          [=](scan_result& res) {
            auto& s = self->state;
            s.scan_in_flight = false;
            auto& c = s.counters;
            c.last_scan_seconds = res.seconds;
            c.last_scan_unix_ms = now_unix_ms<Profile>(self);
            if (c.ready_unix_ms == 0) c.ready_unix_ms = c.last_scan_unix_ms;
            c.last_scan_requested = requested;
            c.last_scan_found = static_cast<std::uint32_t>(res.rows.size() + res.unreadable);
            c.scan_seconds_total += res.seconds;
            c.scan_rows_requested_total += requested;
            c.scan_rows_found_total += c.last_scan_found;
            s.eng()->apply_scan(res.rows, res.unreadable);
            if (!res.reports.empty()) s.counters.scan_reports = std::move(res.reports);
            rebalance_if_due_early<Profile>(self);
          },
          [=](caf::error& e) {
            auto& s = self->state;
            s.scan_in_flight = false;
            ++s.counters.scan_errors;
            log(log_level::warning, "matchmaker",
                "matchmaker '" + s.config.id + "': scan failed: " + self->system().render(e));
          });
}

// A cold start (no sizing model) reads a sample spread over the whole table
// before the first scan and sizes the buckets from it (player_scanner::sample).
template <class Profile>
void take_sizing_sample(instance_pointer<Profile> self) {
  auto& st = self->state;
  const options& o = st.config.opts;
  if (!o.enable_database_scan || o.sizing_sample_rows == 0 || !st.eng()->sizing().empty()) return;
  const std::uint32_t wanted = std::min(o.sizing_sample_rows, o.buckets_rebalance_sample_count);
  self->request(st.worker, st.config.scan_timeout, sample_atom::value, wanted)
      .then(
          [=](scan_result& res) {
            auto& s = self->state;
            s.eng()->apply_rows(res.rows, res.unreadable);
            if (!res.reports.empty()) s.counters.scan_reports = std::move(res.reports);
            log(log_level::info, "matchmaker",
                "matchmaker '" + s.config.id + "': sizing sample of " +
                    std::to_string(res.rows.size()) + " rows in " + std::to_string(res.seconds) +
                    " s");
            rebalance_if_due_early<Profile>(self);
          },
          [=](caf::error& e) {
            ++self->state.counters.scan_errors;
            log(log_level::warning, "matchmaker",
                "matchmaker '" + self->state.config.id +
                    "': sizing sample failed (the scans will size): " + self->system().render(e));
          });
}

template <class Profile>
void finish_restore(instance_pointer<Profile> self) {
  auto& s = self->state;
  s.restore_done = true;
  if (!s.config.opts.enable_database_scan && s.counters.ready_unix_ms == 0)
    s.counters.ready_unix_ms = now_unix_ms<Profile>(self);  // no scan is coming
  for (const auto& u : s.pending_updates)
    s.eng()->update(u.id, std::span<const typename Profile::model_type>(u.models));
  s.pending_updates = {};
  arm_rebalance_tick<Profile>(self);
  rebalance_if_due_early<Profile>(self);
  take_sizing_sample<Profile>(self);
  s.slot->open(s.generation);
}

template <class Profile>
void restore(instance_pointer<Profile> self) {
  auto& st = self->state;
  self->request(st.worker, caf::infinite, load_atom::value, st.config.id)
      .then(
          [=](bool found, stored_state& stored) {
            auto& s = self->state;
            if (!found) {
              finish_restore<Profile>(self);
              return;
            }
            const shard owned{s.config.database.shard_count, s.config.database.shard_index};
            const auto r = restore_stored(*s.eng(), stored, now_unix_ms<Profile>(self), owned);
            if (r.restored) {
              s.counters.ready_unix_ms = now_unix_ms<Profile>(self);
              log(log_level::info, "matchmaker",
                  "matchmaker '" + s.config.id + "': restored " + std::to_string(r.players) +
                      " players from its snapshot" +
                      (r.other_shard ? " (left out " + std::to_string(r.other_shard) +
                                           " that another instance owns now)"
                                     : std::string()));
            } else {
              self->request(s.worker, caf::infinite, set_aside_atom::value, s.config.id, r.problem,
                            now_unix_ms<Profile>(self))
                  .then([](bool) {}, [](caf::error&) {});
              log_set_aside(s.config.id, stored, r.problem);
            }
            finish_restore<Profile>(self);
          },
          [=](caf::error& e) {
            finish_restore<Profile>(self);
            log(log_level::error, "matchmaker",
                "matchmaker '" + self->state.config.id +
                    "': snapshot not read, starting empty: " + self->system().render(e));
          });
}

template <class Profile>
typename interfaces<Profile>::instance::behavior_type instance_actor(
    instance_pointer<Profile> self, instance_config<Profile> config) {
  using model = typename Profile::model_type;
  auto& st = self->state;
  st.wall_at_start_unix_ms = wall_unix_ms();
  st.clock_at_start = self->clock().now();
  st.slot = config.slots ? config.slots->slots.at(config.database.shard_index)
                         : std::make_shared<engine_slot<Profile>>();
  auto fresh = std::make_unique<engine<Profile>>(config.opts, config.profile);
  if (config.observe) fresh->set_observer(config.observe(config.database.shard_index));
  st.generation = st.slot->install(std::move(fresh), config.lease_gate);
  st.config = std::move(config);
  const options& o = st.config.opts;
  st.worker =
      st.config.detached_worker
          ? self->template spawn<caf::detached + caf::linked>(db_worker_actor, st.config.database)
          : self->template spawn<caf::linked>(db_worker_actor, st.config.database);
  restore<Profile>(self);
  if (o.enable_database_scan)
    self->delayed_send(self, o.database_scan_first_delay, scan_tick_atom::value);
  self->delayed_send(self, o.state_snapshot_interval, snapshot_tick_atom::value);
  // The rebalance tick is armed once the restore told when the last one was.
  // A graceful stop writes a final snapshot and stops once it is written (or
  // failed): a node that hands its shard over frees the lease only then, so
  // the next owner reads it. A stop for a lost lease (reason mm.fenced)
  // writes nothing: the write would be refused or wait on an unreachable
  // database (supervisor.hpp, release). The worker, linked, stops with the
  // instance.
  self->set_exit_handler([=](const caf::exit_msg& msg) {
    if (self->state.stopping) return;
    self->state.stopping = true;
    self->state.slot->close(self->state.generation);
    const caf::error reason = msg.reason;
    if (error_code_of(reason) == errc::fenced) {
      self->quit(reason);
      return;
    }
    write_snapshot<Profile>(self, [=] { self->quit(reason); });
  });
  return {
      [=](find_atom, const match_request<typename Profile::query_type>& req) {
        return match_reply<model>::from(self->state.eng()->find_match(req));
      },
      // A query on its way through the set. Taken by reference: the request is
      // moved on, not copied, when it travels to the next member.
      [=](find_atom a, match_request<typename Profile::query_type>& req,
          set_route route) -> caf::result<match_reply<model>> {
        auto& s = self->state;
        const bool last = route.hops_left == 0 || !s.next;
        req.allow_fake_opponent = last && route.fake_allowed;
        auto reply = match_reply<model>::from(s.eng()->find_match(req));
        if (last || reply.type != match_type::none_found) {
          s.counters.routed.count(reply.type);
          return reply;
        }
        --route.hops_left;
        route.someone_said_none = true;
        return self->delegate(s.next, a, std::move(req), route);
      },
      [=](find_atom, const std::vector<match_request<typename Profile::query_type>>& batch)
          -> caf::result<std::vector<match_reply<model>>> {
        if (batch.size() > max_batch_queries) return batch_too_large(batch.size());
        std::vector<match_reply<model>> out;
        out.reserve(batch.size());
        const auto eng = self->state.eng();
        for (const auto& req : batch) out.push_back(match_reply<model>::from(eng->find_match(req)));
        return out;
      },
      [=](next_atom, typename interfaces<Profile>::set_member next) {
        self->state.next = std::move(next);
      },
      [=](update_atom, const player_update<model>& u) {
        auto& s = self->state;
        if (!s.restore_done) {
          s.pending_updates.push_back(u);
          return;
        }
        s.eng()->update(u.id, std::span<const model>(u.models));
        rebalance_if_due_early<Profile>(self);
      },
      [=](update_atom, std::vector<player_update<model>>& batch) {
        auto& s = self->state;
        if (!s.restore_done) {
          for (auto& u : batch) s.pending_updates.push_back(std::move(u));
          return;
        }
        const auto eng = s.eng();
        for (const auto& u : batch) eng->update(u.id, std::span<const model>(u.models));
        rebalance_if_due_early<Profile>(self);
      },
      [=](remove_atom, player_id id) {
        return self->state.eng()->remove(id).outcome == update_outcome::removed;
      },
      [=](enroll_atom, player_id id) -> caf::result<bool> {
        auto& s = self->state;
        auto rp = self->template make_response_promise<bool>();
        self->request(s.worker, caf::infinite, fetch_atom::value, id)
            .then(
                [=](bool found, const player_row& row) mutable {
                  if (!found) {
                    rp.deliver(false);
                    return;
                  }
                  std::vector<model> models;
                  if (self->state.eng()->profile().make_models(row, models) !=
                      row_verdict::eligible) {
                    rp.deliver(false);
                    return;
                  }
                  const auto r = self->state.eng()->enroll(std::span<const model>(models));
                  rp.deliver(r.outcome != update_outcome::rejected &&
                             r.outcome != update_outcome::no_op);
                },
                [=](caf::error& e) mutable { rp.deliver(std::move(e)); });
        return rp;
      },
      [=](info_atom) {
        auto& s = self->state;
        instance_counters counters = s.counters;
        counters.routed += s.slot->routed();  // answered on other threads
        return instance_info{s.eng()->info(), std::move(counters), {}};
      },
      [=](player_atom, player_id id) { return self->state.eng()->player(id); },
      [=](inspect_atom, std::uint32_t bucket, std::uint32_t offset, std::uint32_t limit) {
        return self->state.eng()->inspect_bucket(bucket, offset,
                                                 std::min<std::uint32_t>(limit, 10'000));
      },
      [=](top_atom, std::uint32_t n) {
        return self->state.eng()->top_by_mmr(std::min<std::uint32_t>(n, 10'000));
      },
      [=](rebalance_atom) {
        auto report = self->state.eng()->rebalance(now_unix_ms<Profile>(self));
        if (report.performed) write_snapshot<Profile>(self);
        return report;
      },
      [=](configure_atom, profile_change<Profile>& change) -> caf::result<bool> {
        auto& s = self->state;
        try {
          s.eng()->set_profile(change.profile, change.rebuild);
        } catch (const mm::error& e) {
          return make_error(e.code(), e.what());
        }
        s.config.profile = std::move(change.profile);
        if (change.rebuild) {
          write_snapshot<Profile>(self);
          if (s.config.opts.enable_database_scan) start_scan<Profile>(self);
        }
        return true;
      },
      [=](clear_atom) {
        self->state.eng()->clear();
        write_snapshot<Profile>(self);
        if (self->state.config.opts.enable_database_scan) start_scan<Profile>(self);
        return true;
      },
      [=](explain_atom, const match_request<typename Profile::query_type>& req,
          std::uint32_t max_retries) {
        return self->state.eng()->explain(req, std::min<std::uint32_t>(max_retries, 100));
      },
      [=](scan_tick_atom) {
        self->delayed_send(self, self->state.config.opts.database_scan_tick, scan_tick_atom::value);
        start_scan<Profile>(self);
      },
      [=](snapshot_tick_atom) {
        self->delayed_send(self, self->state.config.opts.state_snapshot_interval,
                           snapshot_tick_atom::value);
        write_snapshot<Profile>(self);
      },
      [=](rebalance_tick_atom) {
        auto& s = self->state;
        const std::int64_t now = now_unix_ms<Profile>(self),
                           last = s.eng()->last_rebalance_unix_ms();
        const auto interval = std::chrono::milliseconds(s.config.opts.buckets_rebalance_interval);
        if (last == 0 || now - last >= interval.count()) {
          if (!s.eng()->rebalance(now).performed) {  // not enough samples yet
            self->delayed_send(self, interval, rebalance_tick_atom::value);
            return;
          }
          write_snapshot<Profile>(self);
        }
        arm_rebalance_tick<Profile>(self);  // an early or asked-for one moved the next
      },
  };
}

}  // namespace mm::actors
