// Queries from threads that are not actors (the HTTP server's network thread),
// answered by callback, without a blocked thread per query. One event-based
// actor holds a set_router and asks the instance set as a game actor would
// (docs/design.md, Instances); each answer, or a timeout error, is handed to
// the query's callback on one of CAF's threads. So a query
// costs one message to the bridge and the set's own routing: no scoped actor
// per request, no thread parked on a condition variable.
//
// Invariant: every callback given to find() is called exactly once: with the
// set's answer, with the request's timeout error when no member answers, or
// with `request_receiver_down` when the bridge stopped before asking.
#pragma once

#include <algorithm>
#include <caf/all.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "mm/actors/router.hpp"

namespace mm::actors {

// A callback called once: with the answer, or, when the last copy goes
// unanswered (the bridge stopped with the query still in its mailbox), with
// `request_receiver_down`.
template <class Answer>
class call_once {
 public:
  explicit call_once(std::function<void(Answer)> f)
      : state_(std::make_shared<state>(std::move(f))) {}
  void operator()(Answer a) const {
    if (auto f = std::exchange(state_->f, nullptr)) f(std::move(a));
  }

 private:
  struct state {
    explicit state(std::function<void(Answer)> g) : f(std::move(g)) {}
    state(const state&) = delete;
    state& operator=(const state&) = delete;
    ~state() {
      if (f) f(Answer{caf::make_error(caf::sec::request_receiver_down)});
    }
    std::function<void(Answer)> f;
  };
  std::shared_ptr<state> state_;
};

template <class Profile>
struct bridge_query {
  match_request<typename Profile::query_type> request;
  call_once<caf::expected<match_reply<typename Profile::model_type>>> done;
};

}  // namespace mm::actors

// A bridge query carries a callback, so it never leaves the process: CAF may
// pass it between its own actors without serializing it.
namespace caf {
template <class Profile>
struct allowed_unsafe_message_type<mm::actors::bridge_query<Profile>> : std::true_type {};
}  // namespace caf

namespace mm::actors {

using bridge_sweep_atom = caf::atom_constant<caf::atom("brsweep")>;

template <class Profile>
class query_bridge {
 public:
  using model = typename Profile::model_type;
  using query = typename Profile::query_type;
  using matchmaker = typename interfaces<Profile>::matchmaker;
  using answer = caf::expected<match_reply<model>>;
  using callback = std::function<void(answer)>;

  query_bridge(caf::actor_system& sys, std::vector<matchmaker> set,
               std::chrono::milliseconds timeout, std::uint64_t seed)
      : actor_(sys.spawn(bridge_actor, set_router<Profile>(std::move(set), seed),
                         caf::timespan(timeout))) {}
  ~query_bridge() { caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown); }
  query_bridge(const query_bridge&) = delete;
  query_bridge& operator=(const query_bridge&) = delete;

  caf::actor_system& system() const { return actor_->home_system(); }

  // Thread-safe and never blocks. `done` runs on a CAF thread: it must not
  // block either (hand the answer on, as the HTTP server does).
  void find(match_request<query> request, callback done) {
    caf::anon_send(actor_,
                   bridge_query<Profile>{std::move(request), call_once<answer>(std::move(done))});
  }

 private:
  // Deadlines are the bridge's own, checked by one sweep every eighth of the
  // timeout while queries are owed: a CAF request with a timeout costs a
  // round trip through CAF's clock thread when it is sent and another when
  // the timeout falls due, answered or not (measured: docs/performance.md,
  // "HTTP queries without a waiting thread"). So a query is answered at the
  // latest between `timeout` and 1.125 × `timeout` after it came. The queries
  // owed are bounded by the callers (the HTTP server: one request per
  // connection, a batch of at most max_batch_queries within its body limit).
  struct state {
    set_router<Profile> router;
    caf::timespan timeout{};
    std::uint64_t next = 0;
    std::unordered_map<std::uint64_t, call_once<answer>> owed;
    std::deque<std::pair<std::uint64_t, caf::actor_clock::time_point>> deadlines;  // oldest first
    bool sweeping = false;
    static inline const char* name = "mm.query_bridge";
  };
  using bridge_self = caf::stateful_actor<state>;

  static void answer_query(bridge_self* self, std::uint64_t seq, answer a) {
    const auto it = self->state.owed.find(seq);
    if (it == self->state.owed.end()) return;  // timed out already
    const call_once<answer> done = std::move(it->second);
    self->state.owed.erase(it);
    done(std::move(a));
  }

  static caf::behavior bridge_actor(bridge_self* self, set_router<Profile> router,
                                    caf::timespan timeout) {
    self->state.router = std::move(router);
    self->state.timeout = timeout;
    const auto period = std::max<caf::timespan>(timeout / 8, std::chrono::milliseconds(1));
    return {
        [self, period](bridge_query<Profile>& q) {
          auto& st = self->state;
          const std::uint64_t seq = st.next++;
          st.owed.emplace(seq, q.done);
          st.deadlines.emplace_back(seq, self->clock().now() + st.timeout);
          if (!st.sweeping) {
            st.sweeping = true;
            self->delayed_send(self, period, bridge_sweep_atom::value);
          }
          // A member's answer lost to a crash leaves CAF's response handler
          // behind (tens of bytes); the sweep still answers the caller.
          st.router.find(self, caf::infinite, std::move(q.request))
              .then([self, seq](match_reply<model>& r) { answer_query(self, seq, std::move(r)); },
                    [self, seq](caf::error& e) { answer_query(self, seq, std::move(e)); });
        },
        [self, period](bridge_sweep_atom) {
          auto& st = self->state;
          const auto now = self->clock().now();
          while (!st.deadlines.empty() && st.deadlines.front().second <= now) {
            answer_query(self, st.deadlines.front().first,
                         caf::make_error(caf::sec::request_timeout));
            st.deadlines.pop_front();
          }
          st.sweeping = !st.deadlines.empty();
          if (st.sweeping) self->delayed_send(self, period, bridge_sweep_atom::value);
        },
    };
  }

  caf::actor actor_;
};

}  // namespace mm::actors
