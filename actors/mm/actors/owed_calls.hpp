// Callbacks called once, and the books of a bridge that owes them answers
// (query_bridge.hpp, session_bridge.cpp): a bridge is an actor that serves
// callers who are not actors, each of whom must get exactly one answer, at
// the latest a timeout.
#pragma once

#include <caf/all.hpp>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <unordered_map>
#include <utility>

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

// The calls a bridge owes an answer, each with a deadline of the bridge's
// own: a sweep every `period` (an eighth of the timeout) while any is owed
// answers those past their deadline with `request_timeout`, so each is
// answered between `timeout` and timeout + period after it came. A CAF
// request with a timeout costs a message through CAF's clock thread when it
// is sent and another when the timeout falls due, answered or not
// (docs/performance.md, "HTTP queries without a waiting thread"); a call
// owed here costs a map entry and a deque slot. The calls owed are bounded
// by the bridge's callers (the HTTP server: one request per connection).
template <class Answer>
class owed_calls {
 public:
  using time_point = caf::actor_clock::time_point;

  // Books `done` until `deadline` (no earlier than the last one booked);
  // returns its number. `start_sweep` is called when no sweep runs: the
  // bridge sends itself its sweep message after `period`.
  template <class StartSweep>
  std::uint64_t owe(call_once<Answer> done, time_point deadline, StartSweep start_sweep) {
    const std::uint64_t seq = next_++;
    owed_.emplace(seq, std::move(done));
    deadlines_.emplace_back(seq, deadline);
    if (!sweeping_) {
      sweeping_ = true;
      start_sweep();
    }
    return seq;
  }

  // The call `seq`'s answer, unless the sweep gave it its timeout already.
  void answer(std::uint64_t seq, Answer a) {
    const auto it = owed_.find(seq);
    if (it == owed_.end()) return;
    const call_once<Answer> done = std::move(it->second);
    owed_.erase(it);
    done(std::move(a));
  }

  // Answers every call past its deadline with its timeout; true while calls
  // are still owed (the bridge sends itself the next sweep).
  bool sweep(time_point now) {
    while (!deadlines_.empty() && deadlines_.front().second <= now) {
      answer(deadlines_.front().first, Answer{caf::make_error(caf::sec::request_timeout)});
      deadlines_.pop_front();
    }
    sweeping_ = !deadlines_.empty();
    return sweeping_;
  }

 private:
  std::uint64_t next_ = 0;
  std::unordered_map<std::uint64_t, call_once<Answer>> owed_;
  std::deque<std::pair<std::uint64_t, time_point>> deadlines_;  // oldest first
  bool sweeping_ = false;
};

}  // namespace mm::actors
