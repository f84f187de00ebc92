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
// Invariants: at most one message in flight per node, except when the queue
// reaches max_batch_queries (it is sent at once: the queue never holds more);
// every query gets exactly one answer through its `done`: the node's reply,
// or the error of the message it went in (a timeout, a node that went away).
// A batch's replies keep the order of its queries, and a query in a batch is
// answered as it would be alone (match_reply, InvalidRequest included).
#pragma once

#include <caf/all.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "mm/actors/errors.hpp"
#include "mm/actors/messages.hpp"

namespace mm::actors {

template <class Profile>
struct query_coalescer {
  using request_type = match_request<typename Profile::query_type>;
  using reply_type = match_reply<typename Profile::model_type>;
  // Called once with the query's reply, or with the error of its message.
  using done_fn = std::function<void(caf::expected<reply_type>)>;

  std::vector<request_type> queued;   // waiting for the message in flight
  std::vector<done_fn> queued_done;   // the same order
  std::uint32_t in_flight = 0;        // messages sent to the node, not answered yet
  std::uint64_t batches = 0;          // batch messages made of queued queries
  std::uint64_t batched_queries = 0;  // queries sent in them
};

template <class Profile>
using coalescer_ptr = std::shared_ptr<query_coalescer<Profile>>;

template <class Profile, class Self, class Node>
void send_queued(Self* self, coalescer_ptr<Profile> c, const Node& node,
                 std::chrono::milliseconds timeout);

// A message to the node was answered: the queries queued meanwhile go now.
template <class Profile, class Self, class Node>
void message_answered(Self* self, const coalescer_ptr<Profile>& c, const Node& node,
                      std::chrono::milliseconds timeout) {
  --c->in_flight;
  if (c->in_flight == 0 && !c->queued.empty()) send_queued<Profile>(self, c, node, timeout);
}

template <class Profile, class Self, class Node>
void send_alone(Self* self, coalescer_ptr<Profile> c, const Node& node,
                std::chrono::milliseconds timeout,
                typename query_coalescer<Profile>::request_type req,
                typename query_coalescer<Profile>::done_fn done) {
  using reply_type = typename query_coalescer<Profile>::reply_type;
  ++c->in_flight;
  self->request(node, timeout, find_atom::value, std::move(req))
      .then(
          [=](reply_type& r) {
            message_answered<Profile>(self, c, node, timeout);
            done(std::move(r));
          },
          [=](caf::error& e) {
            message_answered<Profile>(self, c, node, timeout);
            done(std::move(e));
          });
}

// Sends every queued query: one alone, more as one batch.
template <class Profile, class Self, class Node>
void send_queued(Self* self, coalescer_ptr<Profile> c, const Node& node,
                 std::chrono::milliseconds timeout) {
  using reply_type = typename query_coalescer<Profile>::reply_type;
  using done_fn = typename query_coalescer<Profile>::done_fn;
  auto requests = std::move(c->queued);
  auto dones = std::make_shared<std::vector<done_fn>>(std::move(c->queued_done));
  c->queued.clear();
  c->queued_done.clear();
  if (requests.size() == 1) {
    send_alone<Profile>(self, c, node, timeout, std::move(requests[0]), std::move((*dones)[0]));
    return;
  }
  ++c->in_flight;
  ++c->batches;
  c->batched_queries += requests.size();
  self->request(node, timeout, find_atom::value, std::move(requests))
      .then(
          [=](std::vector<reply_type>& got) {
            message_answered<Profile>(self, c, node, timeout);
            for (std::size_t i = 0; i < dones->size(); ++i) {
              if (i < got.size())
                (*dones)[i](std::move(got[i]));
              else  // a node that answers short is treated as one that failed
                (*dones)[i](make_error(errc::instance_down,
                                       "the node's batch reply has " + std::to_string(got.size()) +
                                           " answers for " + std::to_string(dones->size())));
            }
          },
          [=](caf::error& e) {
            message_answered<Profile>(self, c, node, timeout);
            for (auto& done : *dones) done(e);
          });
}

// Asks `node` for one query through its coalescer `c`; `done` gets the answer.
template <class Profile, class Self, class Node>
void coalesced_find(Self* self, const coalescer_ptr<Profile>& c, const Node& node,
                    std::chrono::milliseconds timeout,
                    typename query_coalescer<Profile>::request_type req,
                    typename query_coalescer<Profile>::done_fn done) {
  if (c->in_flight == 0) {
    send_alone<Profile>(self, c, node, timeout, std::move(req), std::move(done));
    return;
  }
  c->queued.push_back(std::move(req));
  c->queued_done.push_back(std::move(done));
  if (c->queued.size() >= max_batch_queries) send_queued<Profile>(self, c, node, timeout);
}

}  // namespace mm::actors
