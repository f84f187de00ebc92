// A supervisor stands in front of one instance: it speaks the matchmaker
// interface and forwards every message to its current instance, so callers
// keep one handle across restarts. When the instance crashes it is started
// again from its last snapshot, after a backoff that doubles with each crash in
// a row (a crash loop waits, it does not spin). While it is down, requests get
// an error at once, which the client answers by asking other instances.
//
// On a node of a cluster with leases (instance_config::lease_gate), the
// supervisor of every shard of the set exists on every node, dormant: it
// runs its instance only between a lease message (own, at an epoch that
// fences the instance's writes) and a release, and only while the node's
// serving deadline is open. A dormant one answers not_owned_here and passes
// routed queries on, as a member that is down does.
#pragma once

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>

#include "mm/actors/errors.hpp"
#include "mm/actors/instance.hpp"
#include "mm/actors/restart_backoff.hpp"

namespace mm::actors {

// A lease that came while the last instance was still stopping (a node
// that lost its heartbeat joins again and may be given the same shard): it
// starts once that instance is down, or is refused after lease_wait_limit.
// Refusing at once would cost the take a whole round of the lease agent.
struct waiting_lease {
  std::string node;
  std::uint64_t epoch = 0;
  caf::typed_response_promise<bool> promise;
  std::uint64_t number = 0;  // tells its own timeout from an older one's
};

template <class Profile>
struct supervisor_state {
  // Not an aggregate: CAF would otherwise build the state from the actor pointer.
  supervisor_state() = default;
  typename interfaces<Profile>::instance instance;  // invalid while restarting
  instance_config<Profile> config;
  restart_backoff backoff;
  std::uint32_t crashes_in_a_row = 0;
  supervisor_counters counters;
  // The next member of the instance set, told to each new instance.
  typename interfaces<Profile>::set_member next;
  caf::actor_clock::time_point started;
  // Leases: false while dormant (not this node's shard now). Always true
  // without leases.
  bool owned = true;
  // A release waiting for the instance's last snapshot.
  std::optional<caf::typed_response_promise<bool>> releasing;
  std::optional<waiting_lease> waiting;
  std::uint64_t leases_waited = 0;
  // The running instance, for the supervisor's last act: outside the state,
  // which is gone by the time an actor's attached functors run.
  std::shared_ptr<caf::weak_actor_ptr> last_instance = std::make_shared<caf::weak_actor_ptr>();
  static inline const char* name = "mm.supervisor";
};

template <class Profile>
using supervisor_pointer =
    typename interfaces<Profile>::supervisor::template stateful_pointer<supervisor_state<Profile>>;

// Whether the instance may serve now: it runs, and on a leased shard the
// node still owns it and may serve (its deadline is open).
template <class Profile>
bool serving(supervisor_pointer<Profile> self) {
  const auto& st = self->state;
  if (!st.instance) return false;
  return !st.config.lease_gate || (st.owned && st.config.lease_gate->open());
}

// The error for a request the supervisor cannot pass on: the instance is
// restarting, or the shard is not this node's now.
template <class Profile>
caf::error not_serving(supervisor_pointer<Profile> self) {
  const auto& st = self->state;
  if (st.config.lease_gate && (!st.owned || !st.config.lease_gate->open()))
    return make_error(errc::not_owned_here, "matchmaker '" + st.config.id +
                                                "' is not served by this node now: another node "
                                                "of the cluster owns its shard");
  return make_error(errc::instance_down, "matchmaker instance restarting");
}

// How long a lease waits for the instance of an earlier lease to stop: less
// than the cluster node's own wait for the answer (10 s), so the refusal is
// the supervisor's and the node never frees a lease the shard then runs.
inline constexpr std::chrono::seconds lease_wait_limit{5};

template <class Profile>
void start_instance(supervisor_pointer<Profile> self) {
  auto& st = self->state;
  st.instance = self->template spawn<caf::monitored>(instance_actor<Profile>, st.config);
  *st.last_instance = caf::actor_cast<caf::weak_actor_ptr>(st.instance);
  if (st.next) self->send(st.instance, next_atom::value, st.next);
  st.started = self->clock().now();
}

// Stops serving the shard: dormant once its instance is down, which the
// answer waits for. Handed over, the instance writes its last snapshot
// first (the next owner reads it); lost, it stops at once: that write would
// wait on a database the node has lost (up to the store's call deadline),
// the retake of this shard by the node's next incarnation would wait for it,
// and it lands only while nobody has taken the lease yet. (A lost shard's
// next owner starts from the last periodic snapshot, as after a kill.)
template <class Profile>
caf::result<bool> release(supervisor_pointer<Profile> self, bool write_last_snapshot) {
  auto& st = self->state;
  st.owned = false;
  if (st.waiting) {  // released before it started: it never will
    st.waiting->promise.deliver(
        make_error(errc::conflict,
                   "matchmaker '" + st.config.id + "' was released before its lease could start"));
    st.waiting.reset();
  }
  if (!st.instance) return true;  // dormant, or between crash and restart
  if (st.releasing) return make_error(errc::conflict, "already releasing");
  st.releasing = self->template make_response_promise<bool>();
  if (write_last_snapshot)
    self->send_exit(st.instance, caf::exit_reason::user_shutdown);
  else
    self->send_exit(st.instance, make_error(errc::fenced, "matchmaker '" + st.config.id +
                                                              "': its lease was lost"));
  return *st.releasing;
}

// Serves the shard under (node, epoch): its writes fenced by that lease.
template <class Profile>
void start_leased(supervisor_pointer<Profile> self, const std::string& node, std::uint64_t epoch) {
  auto& st = self->state;
  st.config.database.fence = {st.config.id, node, epoch, st.config.lease_idle_limit};
  st.owned = true;
  st.crashes_in_a_row = 0;
  start_instance<Profile>(self);
}

template <class Profile>
typename interfaces<Profile>::supervisor::behavior_type supervisor_actor(
    supervisor_pointer<Profile> self, instance_config<Profile> config, restart_backoff backoff) {
  using model = typename Profile::model_type;
  using query = typename Profile::query_type;
  self->state.config = std::move(config);
  self->state.backoff = backoff;
  self->state.owned = !self->state.config.lease_gate;
  // However the supervisor ends (a kill, which no exit handler sees,
  // included), its instance ends with it, for the same reason: an instance
  // nobody supervises would keep its engine and its scans running.
  self->attach_functor([last = self->state.last_instance](const caf::error& reason) {
    if (auto instance = caf::actor_cast<caf::strong_actor_ptr>(*last))
      instance->enqueue(nullptr, caf::make_message_id(),
                        caf::make_message(caf::exit_msg{caf::actor_addr{}, reason}), nullptr);
  });
  if (self->state.owned) start_instance<Profile>(self);
  self->set_down_handler([=](const caf::down_msg& msg) {
    auto& st = self->state;
    if (msg.source != st.instance.address()) return;
    st.instance = nullptr;
    if (st.releasing) {  // handed over: dormant until the next lease
      st.releasing->deliver(true);
      st.releasing.reset();
      if (st.waiting) {  // a lease taken meanwhile starts now
        auto w = std::move(*st.waiting);
        st.waiting.reset();
        start_leased<Profile>(self, w.node, w.epoch);
        w.promise.deliver(true);
      }
      return;
    }
    if (msg.reason == caf::exit_reason::normal || msg.reason == caf::exit_reason::user_shutdown) {
      self->quit(msg.reason);
      return;
    }
    if (!st.owned) return;  // released while it crashed: not restarted
    const auto uptime = self->clock().now() - st.started;
    if (uptime >= st.backoff.reset_after) st.crashes_in_a_row = 0;
    ++st.crashes_in_a_row;
    const auto delay = backoff_delay(st.backoff, st.crashes_in_a_row);
    log(log_level::error, "matchmaker",
        "matchmaker '" + st.config.id + "' crashed (" + self->system().render(msg.reason) +
            "); restarting in " + std::to_string(delay.count()) + " ms from its last snapshot");
    self->delayed_send(self, delay, restart_atom::value);
  });
  self->set_exit_handler([=](const caf::exit_msg& msg) {
    // Stopping the supervisor stops its instance gracefully (final snapshot).
    if (self->state.instance) self->send_exit(self->state.instance, msg.reason);
    self->quit(msg.reason);
  });
  auto down = [=] { return not_serving<Profile>(self); };
  return {
      [=](find_atom a, match_request<query>& r) -> caf::result<match_reply<model>> {
        if (!serving<Profile>(self)) return down();
        return self->delegate(self->state.instance, a, std::move(r));
      },
      [=](find_atom a, std::vector<match_request<query>>& batch)
          -> caf::result<std::vector<match_reply<model>>> {
        if (!serving<Profile>(self)) return down();
        return self->delegate(self->state.instance, a, std::move(batch));
      },
      // A routed query: to the instance; while it is down, on to the next
      // member, or answered for the set when this was the last one to ask.
      [=](find_atom a, match_request<query>& r,
          set_route route) -> caf::result<match_reply<model>> {
        auto& st = self->state;
        if (serving<Profile>(self)) return self->delegate(st.instance, a, std::move(r), route);
        if (route.hops_left > 0 && st.next) {
          ++st.counters.routed.passed_on;
          --route.hops_left;
          return self->delegate(st.next, a, std::move(r), route);
        }
        if (route.someone_said_none) {
          ++st.counters.routed.none_found;
          return match_reply<model>{};  // NoneFound: those that answered found none
        }
        ++st.counters.routed.unanswered;
        return down();
      },
      [=](next_atom a, typename interfaces<Profile>::set_member next) {
        auto& st = self->state;
        st.next = std::move(next);
        if (st.instance) self->send(st.instance, a, st.next);
      },
      [=](update_atom a, const player_update<model>& u) {
        if (!serving<Profile>(self))
          ++self->state.counters.updates_dropped;
        else
          self->send(self->state.instance, a, u);
      },
      [=](update_atom a, std::vector<player_update<model>>& batch) {
        if (!serving<Profile>(self))
          self->state.counters.updates_dropped += batch.size();
        else
          self->send(self->state.instance, a, std::move(batch));
      },
      [=](enroll_atom a, player_id id) -> caf::result<bool> {
        if (!serving<Profile>(self)) return down();
        return self->delegate(self->state.instance, a, id);
      },
      [=](remove_atom a, player_id id) -> caf::result<bool> {
        if (!serving<Profile>(self)) return down();
        return self->delegate(self->state.instance, a, id);
      },
      [=](info_atom a) -> caf::result<instance_info> {
        if (!serving<Profile>(self)) return down();
        // The instance's figures plus the supervisor's own.
        auto rp = self->template make_response_promise<instance_info>();
        self->request(self->state.instance, caf::infinite, a)
            .then(
                [=](instance_info& i) mutable {
                  i.supervisor = self->state.counters;
                  rp.deliver(std::move(i));
                },
                [=](caf::error& e) mutable { rp.deliver(std::move(e)); });
        return rp;
      },
      [=](player_atom a, player_id id) -> caf::result<player_info> {
        if (!serving<Profile>(self)) return down();
        return self->delegate(self->state.instance, a, id);
      },
      [=](inspect_atom a, std::uint32_t b, std::uint32_t off,
          std::uint32_t lim) -> caf::result<std::vector<model>> {
        if (!serving<Profile>(self)) return down();
        return self->delegate(self->state.instance, a, b, off, lim);
      },
      [=](top_atom a, std::uint32_t n) -> caf::result<std::vector<model>> {
        if (!serving<Profile>(self)) return down();
        return self->delegate(self->state.instance, a, n);
      },
      [=](rebalance_atom a) -> caf::result<rebalance_report> {
        if (!serving<Profile>(self)) return down();
        return self->delegate(self->state.instance, a);
      },
      [=](clear_atom a) -> caf::result<bool> {
        if (!serving<Profile>(self)) return down();
        return self->delegate(self->state.instance, a);
      },
      [=](configure_atom a, profile_change<Profile>& change) -> caf::result<bool> {
        // Kept for the next run, served here or not.
        self->state.config.profile = change.profile;
        if (!self->state.instance) return true;
        return self->delegate(self->state.instance, a, std::move(change));
      },
      [=](explain_atom a, const match_request<query>& r,
          std::uint32_t max_retries) -> caf::result<query_explanation> {
        if (!serving<Profile>(self)) return down();
        return self->delegate(self->state.instance, a, r, max_retries);
      },
      [=](restart_atom) {
        auto& st = self->state;
        if (!st.owned || st.instance) return;  // released meanwhile, or owned again
        ++st.counters.restarts;
        start_instance<Profile>(self);
      },
      [=](lease_atom, const std::string& node, std::uint64_t epoch) -> caf::result<bool> {
        auto& st = self->state;
        if (!st.config.lease_gate)
          return make_error(errc::invalid_argument,
                            "matchmaker '" + st.config.id + "' is not a leased shard");
        if (st.releasing && !st.waiting) {  // its instance is stopping: wait for it
          auto promise = self->template make_response_promise<bool>();
          st.waiting = waiting_lease{node, epoch, promise, ++st.leases_waited};
          self->delayed_send(self, lease_wait_limit, lease_wait_atom::value, st.leases_waited);
          return promise;
        }
        if (st.instance)
          return make_error(errc::conflict, "matchmaker '" + st.config.id +
                                                "' is still running under an earlier lease");
        start_leased<Profile>(self, node, epoch);
        return true;
      },
      [=](lease_wait_atom, std::uint64_t number) {
        auto& st = self->state;
        if (!st.waiting || st.waiting->number != number) return;  // started meanwhile
        st.waiting->promise.deliver(make_error(
            errc::conflict, "matchmaker '" + st.config.id +
                                "' is still running under an earlier lease: its instance did "
                                "not stop within " +
                                std::to_string(lease_wait_limit.count()) + " s"));
        st.waiting.reset();
      },
      [=](lease_atom, hand_over_atom) { return release<Profile>(self, true); },
      [=](lease_atom, lease_lost_atom) { return release<Profile>(self, false); },
  };
}

}  // namespace mm::actors
