// Queries from threads that are not actors (the HTTP server's network thread),
// answered by callback, without a blocked thread per query. One event-based
// actor holds a set_router and asks the instance set as a game actor would
// (docs/design.md, Instances); each answer, or a timeout error, is handed to
// the query's callback on one of CAF's threads. No scoped actor per request,
// no thread parked on a condition variable.
//
// Batching without asking: a query is put in the bridge's inbox, and only
// the query that finds the inbox empty sends the bridge a message. The
// queries that come before the bridge has taken that message go with it, as
// one batch through the set (batch_route.hpp). A lone query costs one message
// to the bridge and the set's routing, as before; under load a burst costs
// one hand-off to a CAF thread and one batch, not one of each per query.
//
// Answered where it arrives: given the engine slots of the set's members
// (engine_slot.hpp, matchmakerd's own instances), a single query is first
// routed through the slots on the calling thread, member after member as the
// set would route it, and answered there: no hand-off to a CAF thread and
// back. Where a slot is busy (its instance is applying a scan, say) or closed
// (restarting, or not this node's shard now), the query goes on through the
// bridge's actor from that member, as if the earlier members had been asked
// by it. Batches always go through the actor: their work is not short.
//
// Invariant: every callback given to find() is called exactly once: with the
// set's answer, with the request's timeout error when no member answers, or
// with `request_receiver_down` when the bridge stopped before asking (at the
// latest when the query_bridge is destroyed, which drops its inbox).
#pragma once

#include <algorithm>
#include <atomic>
#include <caf/all.hpp>
#include <chrono>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include "mm/actors/batch_route.hpp"
#include "mm/actors/engine_slot.hpp"
#include "mm/actors/owed_calls.hpp"
#include "mm/actors/router.hpp"
#include "mm/engine/stable_hash.hpp"

namespace mm::actors {

template <class Profile>
struct bridge_query {
  match_request<typename Profile::query_type> request;
  call_once<caf::expected<match_reply<typename Profile::model_type>>> done;
  // A query that members were asked already on the caller's thread: the
  // member asked first, and how many found none before a busy one.
  bool continued = false;
  std::uint32_t first = 0, hop = 0;
};

// The queries threads hand to the bridge, taken by the bridge's actor.
template <class Profile>
struct bridge_inbox {
  std::mutex mutex;
  std::vector<bridge_query<Profile>> queries;  // in the order given
  // The answers of the queries the bridge's actor routed as batches (an
  // HTTP batch, and the rest of a query a busy slot passed on), by type: a
  // member does not count a batch's answers as routed, the bridge does.
  routed_answers batches;
};

using bridge_sweep_atom = caf::atom_constant<caf::atom("brsweep")>;
using bridge_take_atom = caf::atom_constant<caf::atom("brtake")>;

template <class Profile>
class query_bridge {
 public:
  using model = typename Profile::model_type;
  using query = typename Profile::query_type;
  using matchmaker = typename interfaces<Profile>::matchmaker;
  using answer = caf::expected<match_reply<model>>;
  using callback = std::function<void(answer)>;

  using slot_list = std::vector<std::shared_ptr<engine_slot<Profile>>>;

  // `slots`: the engine slots of the members of `set`, in its order, to
  // answer single queries on the calling thread; empty: always the actor.
  query_bridge(caf::actor_system& sys, std::vector<matchmaker> set,
               std::chrono::milliseconds timeout, std::uint64_t seed, slot_list slots = {})
      : slots_(slots.size() == set.size() ? std::move(slots) : slot_list{}),
        seed_(mix64(seed)),
        inbox_(std::make_shared<bridge_inbox<Profile>>()),
        actor_(sys.spawn(bridge_actor, set_router<Profile>(std::move(set), seed),
                         caf::timespan(timeout), inbox_)) {}
  ~query_bridge() { caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown); }
  query_bridge(const query_bridge&) = delete;
  query_bridge& operator=(const query_bridge&) = delete;

  caf::actor_system& system() const { return actor_->home_system(); }

  // Thread-safe and never blocks. `done` runs on the calling thread (the
  // query answered through the slots, before find() returns) or on a CAF
  // thread: it must not block either (hand the answer on, as the HTTP server
  // does).
  void find(match_request<query> request, callback done) {
    bridge_query<Profile> q{std::move(request), call_once<answer>(std::move(done))};
    if (!slots_.empty() && answered_here(q)) return;
    put([&](auto& queries) { queries.push_back(std::move(q)); });
  }

  // Single queries answered on the calling thread (for the server's counters
  // and the tests).
  std::uint64_t answered_inline() const { return answered_inline_.load(); }
  // The final answers of the queries routed as batches by the bridge's actor.
  routed_answers batch_answers() const {
    std::lock_guard lock(inbox_->mutex);
    return inbox_->batches;
  }

  // Several queries at once (an HTTP batch): each answered as find()
  // answers it, every `dones[i]` called once.
  void find_many(std::vector<match_request<query>> requests, std::vector<callback> dones) {
    put([&](auto& queries) {
      for (std::size_t i = 0; i < requests.size(); ++i)
        queries.push_back({std::move(requests[i]), call_once<answer>(std::move(dones[i]))});
    });
  }

 private:
  // Deadlines are the bridge's own (owed_calls.hpp): a query is answered at
  // the latest between `timeout` and 1.125 × `timeout` after it came. The
  // queries owed are bounded by the callers (the HTTP server: one request
  // per connection, a batch of at most max_batch_queries within its body
  // limit).
  struct state {
    set_router<Profile> router;
    caf::timespan timeout{};
    owed_calls<answer> owed;
    std::shared_ptr<bridge_inbox<Profile>> inbox;  // its counts of batch answers
    static inline const char* name = "mm.query_bridge";
  };
  using bridge_self = caf::stateful_actor<state>;

  // Adds to the inbox; the first queries into an empty inbox call the bridge.
  template <class Add>
  void put(Add add) {
    bool call = false;
    {
      std::lock_guard lock(inbox_->mutex);
      const bool was_empty = inbox_->queries.empty();
      add(inbox_->queries);
      call = was_empty && !inbox_->queries.empty();
    }
    if (call) caf::anon_send(actor_, bridge_take_atom::value);
  }

  static void answer_query(bridge_self* self, std::uint64_t seq, answer a) {
    self->state.owed.answer(seq, std::move(a));
  }

  // Books the query as owed, with its deadline; returns its sequence number.
  static std::uint64_t owe(bridge_self* self, caf::timespan period, call_once<answer> done) {
    return self->state.owed.owe(std::move(done), self->clock().now() + self->state.timeout, [=] {
      self->delayed_send(self, period, bridge_sweep_atom::value);
    });
  }

  // Asks the set for a batch; one query goes alone, as a game's would. A
  // member's answer lost to a crash leaves CAF's response handler behind
  // (tens of bytes); the sweep still answers the callers.
  static void ask(bridge_self* self, caf::timespan period,
                  std::vector<bridge_query<Profile>> batch) {
    auto& st = self->state;
    if (batch.size() == 1) {
      const std::uint64_t seq = owe(self, period, std::move(batch[0].done));
      st.router.find(self, caf::infinite, std::move(batch[0].request))
          .then([self, seq](match_reply<model>& r) { answer_query(self, seq, std::move(r)); },
                [self, seq](caf::error& e) { answer_query(self, seq, std::move(e)); });
      return;
    }
    std::vector<std::uint64_t> seqs;
    std::vector<match_request<query>> requests;
    seqs.reserve(batch.size());
    requests.reserve(batch.size());
    for (auto& q : batch) {
      seqs.push_back(owe(self, period, std::move(q.done)));
      requests.push_back(std::move(q.request));
    }
    ask_batch(self, std::move(requests), std::move(seqs), st.router.pick_first_index(), 0);
  }

  // Routes `requests` (owed as `seqs`) through the set from member `first`,
  // `hop` members on (those before it found none for them).
  static void ask_batch(bridge_self* self, std::vector<match_request<query>> requests,
                        std::vector<std::uint64_t> seqs, std::size_t first, std::size_t hop) {
    auto job = std::make_shared<batch_route<Profile>>(std::move(requests), first);
    job->someone_said_none = hop > 0;
    route_batch<Profile>(self, self->state.router.members(), job, hop, caf::duration(caf::infinite),
                         [self, job, seqs = std::move(seqs)](const caf::error& e) {
                           // On an error, only the open queries have no answer.
                           std::vector<char> failed(seqs.size(), 0);
                           if (e)
                             for (const std::uint32_t i : job->open) failed[i] = 1;
                           {
                             auto& inbox = *self->state.inbox;
                             std::lock_guard lock(inbox.mutex);
                             for (std::size_t i = 0; i < seqs.size(); ++i)
                               if (failed[i])
                                 ++inbox.batches.unanswered;
                               else
                                 inbox.batches.count(job->replies[i].type);
                           }
                           for (std::size_t i = 0; i < seqs.size(); ++i)
                             if (failed[i])
                               answer_query(self, seqs[i], e);
                             else
                               answer_query(self, seqs[i], std::move(job->replies[i]));
                         });
  }

  static caf::behavior bridge_actor(bridge_self* self, set_router<Profile> router,
                                    caf::timespan timeout,
                                    std::shared_ptr<bridge_inbox<Profile>> inbox) {
    self->state.router = std::move(router);
    self->state.timeout = timeout;
    self->state.inbox = inbox;
    const auto period = std::max<caf::timespan>(timeout / 8, std::chrono::milliseconds(1));
    return {
        // Everything in the inbox now: the query that sent this message and
        // those given since, in batches of at most max_batch_queries.
        [self, period, inbox](bridge_take_atom) {
          std::vector<bridge_query<Profile>> taken;
          {
            std::lock_guard lock(inbox->mutex);
            taken.swap(inbox->queries);
          }
          // The queries that members were asked on the caller's thread go on
          // each from where it stopped; the rest in batches.
          std::vector<bridge_query<Profile>> fresh;
          fresh.reserve(taken.size());
          for (auto& q : taken) {
            if (!q.continued) {
              fresh.push_back(std::move(q));
              continue;
            }
            std::vector<std::uint64_t> seq{owe(self, period, std::move(q.done))};
            ask_batch(self, {std::move(q.request)}, std::move(seq), q.first, q.hop);
          }
          taken = std::move(fresh);
          for (std::size_t from = 0; from < taken.size(); from += max_batch_queries) {
            const std::size_t to = std::min(taken.size(), from + max_batch_queries);
            ask(self, period,
                std::vector<bridge_query<Profile>>(
                    std::make_move_iterator(taken.begin() + static_cast<std::ptrdiff_t>(from)),
                    std::make_move_iterator(taken.begin() + static_cast<std::ptrdiff_t>(to))));
          }
        },
        [self, period](bridge_sweep_atom) {
          if (self->state.owed.sweep(self->clock().now()))
            self->delayed_send(self, period, bridge_sweep_atom::value);
        },
    };
  }

  // Routes q through the slots from a member picked as the router picks
  // (uniformly); true when a member answered it finally here. Else q is
  // marked to go on through the actor from the member that was busy.
  bool answered_here(bridge_query<Profile>& q) {
    const auto n = static_cast<std::uint32_t>(slots_.size());
    const std::uint64_t draw = mix64(seed_ ^ draws_.fetch_add(1, std::memory_order_relaxed));
    q.first = static_cast<std::uint32_t>(draw % n);
    const bool fake_allowed = q.request.allow_fake_opponent;
    for (std::uint32_t hop = 0; hop < n; ++hop) {
      const bool last = hop + 1 == n;
      q.request.allow_fake_opponent = last && fake_allowed;  // only the last may make one
      auto reply = slots_[(q.first + hop) % n]->try_find(q.request, last);
      q.request.allow_fake_opponent = fake_allowed;
      if (!reply) {
        q.continued = true;
        q.hop = hop;
        return false;
      }
      if (last || reply->type != match_type::none_found) {
        answered_inline_.fetch_add(1, std::memory_order_relaxed);
        q.done(std::move(*reply));
        return true;
      }
    }
    return true;  // not reached: the last member's answer is final
  }

  const slot_list slots_;
  const std::uint64_t seed_;
  std::atomic<std::uint64_t> draws_{0}, answered_inline_{0};
  std::shared_ptr<bridge_inbox<Profile>> inbox_;  // before actor_: the actor is given it
  caf::actor actor_;
};

}  // namespace mm::actors
