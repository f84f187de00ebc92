// Automatic batching of single queries to one node (docs/api.md, "Batching
// without asking for it"), used inside the game's cluster client.
//
// A game sends one query when a player taps "attack"; over the network each
// query is then a message of its own, and the node pays its per-message cost
// (decoding, the port guard, two actor hops) for every one. A batch pays it
// once for up to max_batch_queries queries, but a game does not batch by hand.
// So, per node:
//
// - nothing in flight to the node: the query is sent at once, alone. A quiet
//   game waits for nothing;
// - something in flight: the query waits, with the others that arrive, until
//   the node answers what is in flight; then they all go as one batch. A busy
//   game gets batches as large as its load, and each waits at most one round
//   trip for the one before.
//
// One message in flight, not two: allowing two made smaller batches and
// cost the server 7.4 µs a query instead of 5.6, for less throughput
// (mm_reference_bench, docs/performance.md).
//
// Deadlines: the messages go without a CAF request timeout (in CAF 0.17 each
// one costs two trips through the clock thread, a wake-up of its own per
// query); the owner calls fail_in_flight from one timer of its own instead,
// and a message unanswered for `timeout` fails then (between one and two
// timeouts after it was sent, with a timer every `timeout`), with the
// queries queued behind it. Its late answer, if it ever comes, is dropped.
//
// Invariants: at most one message in flight per node, except when the queue
// reaches max_batch_queries (it is sent at once: the queue never holds more);
// every query gets exactly one answer through its `done`: the node's reply,
// or the error of the message it went in (overdue, a node that went away).
// A batch's replies keep the order of its queries, and a query in a batch is
// answered as it would be alone (match_reply, InvalidRequest included).
#pragma once

#include <caf/all.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "mm/actors/errors.hpp"
#include "mm/actors/interface.hpp"
#include "mm/actors/messages.hpp"

namespace mm::actors {

template <class Profile>
struct query_coalescer {
  using request_type = match_request<typename Profile::query_type>;
  using reply_type = match_reply<typename Profile::model_type>;
  // Called once with the query's reply, or with the error of its message.
  using done_fn = std::function<void(caf::expected<reply_type>)>;

  // A message sent to the node and not answered yet.
  struct message {
    std::uint64_t seq = 0;
    caf::actor_clock::time_point sent_at;
    std::vector<done_fn> dones;  // one per query, in the message's order
  };

  std::vector<request_type> queued;  // waiting for the message in flight
  std::vector<done_fn> queued_done;  // the same order
  std::vector<message> in_flight;    // usually none or one
  std::uint64_t next_seq = 1;
  std::uint64_t batches = 0;          // batch messages made of queued queries
  std::uint64_t batched_queries = 0;  // queries sent in them
};

template <class Profile>
using coalescer_ptr = std::shared_ptr<query_coalescer<Profile>>;

template <class Profile, class Self, class Node>
void send_queued(Self* self, const coalescer_ptr<Profile>& c, const Node& node);

// Takes message `seq` out of the in-flight list; nothing when it is not
// there (it was failed as overdue, or with its node).
template <class Profile>
std::optional<typename query_coalescer<Profile>::message> take_in_flight(
    query_coalescer<Profile>& c, std::uint64_t seq) {
  for (auto it = c.in_flight.begin(); it != c.in_flight.end(); ++it)
    if (it->seq == seq) {
      auto m = std::move(*it);
      c.in_flight.erase(it);
      return m;
    }
  return std::nullopt;
}

// Once nothing is in flight, the queries queued meanwhile go.
template <class Profile, class Self, class Node>
void send_if_idle(Self* self, const coalescer_ptr<Profile>& c, const Node& node) {
  if (c->in_flight.empty() && !c->queued.empty()) send_queued<Profile>(self, c, node);
}

// Sends `payload` (one query or a batch) for the queries of `dones`.
template <class Profile, class Self, class Node, class Payload>
void send_message(Self* self, const coalescer_ptr<Profile>& c, const Node& node, Payload payload,
                  std::vector<typename query_coalescer<Profile>::done_fn> dones) {
  using reply_type = typename query_coalescer<Profile>::reply_type;
  const std::uint64_t seq = c->next_seq++;
  c->in_flight.push_back({seq, self->clock().now(), std::move(dones)});
  auto fail = [self, c, node, seq](caf::error& e) {
    auto m = take_in_flight(*c, seq);
    if (!m) return;
    send_if_idle<Profile>(self, c, node);
    for (auto& done : m->dones) done(e);
  };
  if constexpr (std::is_same_v<Payload,
                               std::vector<typename query_coalescer<Profile>::request_type>>) {
    self->request(node, caf::infinite, find_atom::value, std::move(payload))
        .then(
            [self, c, node, seq](std::vector<reply_type>& got) {
              auto m = take_in_flight(*c, seq);
              if (!m) return;
              send_if_idle<Profile>(self, c, node);
              for (std::size_t i = 0; i < m->dones.size(); ++i) {
                if (i < got.size())
                  m->dones[i](std::move(got[i]));
                else  // a node that answers short is treated as one that failed
                  m->dones[i](make_error(errc::instance_down, "the node's batch reply has " +
                                                                  std::to_string(got.size()) +
                                                                  " answers for " +
                                                                  std::to_string(m->dones.size())));
              }
            },
            fail);
  } else {
    self->request(node, caf::infinite, find_atom::value, std::move(payload))
        .then(
            [self, c, node, seq](reply_type& r) {
              auto m = take_in_flight(*c, seq);
              if (!m) return;
              send_if_idle<Profile>(self, c, node);
              m->dones.front()(std::move(r));
            },
            fail);
  }
}

// Sends every queued query: one alone, more as one batch.
template <class Profile, class Self, class Node>
void send_queued(Self* self, const coalescer_ptr<Profile>& c, const Node& node) {
  auto requests = std::move(c->queued);
  auto dones = std::move(c->queued_done);
  c->queued.clear();
  c->queued_done.clear();
  if (requests.size() == 1) {
    send_message<Profile>(self, c, node, std::move(requests[0]), std::move(dones));
    return;
  }
  ++c->batches;
  c->batched_queries += requests.size();
  send_message<Profile>(self, c, node, std::move(requests), std::move(dones));
}

// Asks `node` for one query through its coalescer `c`; `done` gets the answer.
template <class Profile, class Self, class Node>
void coalesced_find(Self* self, const coalescer_ptr<Profile>& c, const Node& node,
                    typename query_coalescer<Profile>::request_type req,
                    typename query_coalescer<Profile>::done_fn done) {
  if (c->in_flight.empty()) {
    std::vector<typename query_coalescer<Profile>::done_fn> dones;
    dones.push_back(std::move(done));
    send_message<Profile>(self, c, node, std::move(req), std::move(dones));
    return;
  }
  c->queued.push_back(std::move(req));
  c->queued_done.push_back(std::move(done));
  if (c->queued.size() >= max_batch_queries) send_queued<Profile>(self, c, node);
}

// Fails the messages in flight that were sent `timeout` or more ago (or all
// of them, with `all`: their node went away) with `why`, and with them the
// queries queued behind them: they waited on a node that does not answer.
// Returns whether messages are still in flight.
template <class Profile, class Self>
bool fail_in_flight(Self* self, const coalescer_ptr<Profile>& c, std::chrono::milliseconds timeout,
                    bool all, const caf::error& why) {
  const auto now = self->clock().now();
  std::vector<typename query_coalescer<Profile>::done_fn> failed;
  for (auto it = c->in_flight.begin(); it != c->in_flight.end();) {
    if (all || now - it->sent_at >= timeout) {
      for (auto& d : it->dones) failed.push_back(std::move(d));
      it = c->in_flight.erase(it);
    } else {
      ++it;
    }
  }
  if (!failed.empty()) {
    for (auto& d : c->queued_done) failed.push_back(std::move(d));
    c->queued.clear();
    c->queued_done.clear();
  }
  for (auto& d : failed) d(why);
  return !c->in_flight.empty();
}

}  // namespace mm::actors
