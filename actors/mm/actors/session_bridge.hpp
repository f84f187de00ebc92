// The session service for threads that are not actors (the HTTP server's),
// answered by callback, with no thread waiting. One event-based actor asks
// the service and hands each answer (or the request's timeout error) to its
// callback on one of CAF's threads.
//
// Tickets created through the bridge are owned by it: when one leaves its
// queue the bridge is told, and every long-poll of that ticket is answered
// at once. A long-poll of a ticket someone else owns (a game actor) is
// checked again every `recheck` until it leaves or its wait ends. At the end
// of its wait a long-poll is answered with the ticket's state then.
//
// Invariant: every callback is called exactly once (call_once,
// query_bridge.hpp): with the answer, an error, or request_receiver_down
// when the bridge stopped first. Long-polls owed are bounded by the callers
// (the HTTP server: one per connection).
#pragma once

#include <atomic>
#include <caf/all.hpp>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>

#include "mm/actors/interface.hpp"
#include "mm/actors/query_bridge.hpp"
#include "mm/actors/session_switch.hpp"

namespace mm::actors {

// Work for the bridge's actor: a request to the service, with its callback.
struct session_bridge_call {
  std::function<void(caf::event_based_actor*, const session_interfaces::service&)> run;
};

}  // namespace mm::actors

namespace caf {
template <>
struct allowed_unsafe_message_type<mm::actors::session_bridge_call> : std::true_type {};
}  // namespace caf

namespace mm::actors {

class session_bridge {
 public:
  template <class T>
  using callback = std::function<void(caf::expected<T>)>;

  // With `here` (the node's session partitions, session_switch.hpp), a
  // status the running partition's books can give at once is given on the calling
  // thread, without the hand-off to a CAF thread and back.
  session_bridge(caf::actor_system& sys, session_interfaces::service service,
                 std::chrono::milliseconds timeout,
                 std::chrono::milliseconds recheck = std::chrono::seconds(1),
                 std::shared_ptr<const session_partitions> here = nullptr);
  ~session_bridge();
  session_bridge(const session_bridge&) = delete;
  session_bridge& operator=(const session_bridge&) = delete;

  caf::actor_system& system() const { return actor_->home_system(); }

  // Any request of the service interface: its answer of type R. Thread-safe,
  // never blocks; `done` runs on a CAF thread and must not block.
  template <class R, class... Ts>
  void ask(callback<R> done, Ts... xs) {
    call_once<caf::expected<R>> once(std::move(done));
    const auto timeout = timeout_;
    caf::anon_send(
        actor_, session_bridge_call{[once, timeout, xs...](caf::event_based_actor* self,
                                                           const session_interfaces::service& svc) {
          self->request(svc, timeout, xs...)
              .then([once](R& r) { once(std::move(r)); },
                    [once](caf::error& e) { once(std::move(e)); });
        }});
  }

  // The same, for a thread that may block (not a CAF thread): waits for the
  // answer or the request's timeout.
  template <class R, class... Ts>
  caf::expected<R> wait_for(Ts... xs) {
    auto got = std::make_shared<std::promise<caf::expected<R>>>();
    auto answered = got->get_future();
    ask<R>([got](caf::expected<R> x) { got->set_value(std::move(x)); }, xs...);
    return answered.get();
  }

  // A ticket owned by the bridge: its id.
  void create(std::string queue, session_ticket ticket, callback<std::uint64_t> done);

  // The ticket's state; while it waits, up to `wait` for it to leave. With a
  // credential, a ticket of another credential is answered at once as one
  // that does not exist (errc::not_found). A ticket the books of `here`
  // hold that has left, or that waits when `wait` is 0, is answered before
  // this returns, on the calling thread (the rest on a CAF thread).
  void status(std::uint64_t ticket, std::chrono::milliseconds wait,
              std::optional<std::string> credential, callback<ticket_outcome> done);

  // Answers every long-poll now, and every later one without waiting (the
  // server is stopping).
  void release_waiters();

  // Runs `work` on the bridge's actor after `delay` (0: as soon as it can).
  // It must not block. Work still waiting when the bridge stops never runs.
  void run_later(std::chrono::milliseconds delay, std::function<void()> work);

  // The node's session partitions (none when not given).
  const session_partitions* partitions() const { return here_.get(); }

  // Statuses answered on the calling thread from the books of `here`.
  std::uint64_t answered_here() const { return answered_here_.load(); }

 private:
  caf::actor actor_;
  std::chrono::milliseconds timeout_;
  std::shared_ptr<const session_partitions> here_;
  std::atomic<std::uint64_t> answered_here_{0};
};

}  // namespace mm::actors
