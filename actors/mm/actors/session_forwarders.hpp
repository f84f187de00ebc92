// The session service's messages passed on, unchanged, to the service that
// serves them now: the cluster client's (every node, from the game's side).
// Credentials are passed as the game put them: the node's actor port
// replaces them with the connection's identity (port_session_handlers.hpp).
// `session_forwarders`: `target()` gives that service's handle, or null when
// none serves the queues now (a takeover under way, or not known yet): the
// request is then answered with errc::not_owned_here, and the caller
// retries. Answers go straight from the service to the caller (delegation).
// `session_handlers` takes any other way to pass them on (the cluster
// client's relay over the nodes that run partitions of the queues).
//
// The handlers come as a tuple, for a behavior that adds its own:
//   std::apply([&](auto... s) { return behavior_type{own..., s...}; },
//              session_forwarders(self, target));
#pragma once

#include <caf/all.hpp>
#include <string>
#include <tuple>

#include "mm/actors/errors.hpp"
#include "mm/actors/interface.hpp"

namespace mm::actors {

// The answer type of a handler, for its pass.
template <class T>
struct answer_of {
  using type = T;
};

// The session service's handlers, each handing its message, unchanged, to
// `pass(answer_of<T>{}, xs...)`, which returns the caf::result<T> to answer.
template <class Pass>
auto session_handlers(Pass pass) {
  using owner = session_interfaces::owner;
  return std::make_tuple(
      [=](create_atom a, std::string& queue, session_ticket& t,
          owner& o) -> caf::result<std::uint64_t> {
        return pass(answer_of<std::uint64_t>{}, a, std::move(queue), std::move(t), std::move(o));
      },
      [=](cancel_atom a, std::uint64_t id) -> caf::result<bool> {
        return pass(answer_of<bool>{}, a, id);
      },
      [=](cancel_atom a, std::uint64_t id, std::string& credential) -> caf::result<bool> {
        return pass(answer_of<bool>{}, a, id, std::move(credential));
      },
      [=](status_atom a, std::uint64_t id) -> caf::result<ticket_outcome> {
        return pass(answer_of<ticket_outcome>{}, a, id);
      },
      [=](info_atom a) -> caf::result<std::vector<session_queue_report>> {
        return pass(answer_of<std::vector<session_queue_report>>{}, a);
      },
      [=](inspect_atom a, std::string& queue, std::uint32_t offset,
          std::uint32_t limit) -> caf::result<std::vector<waiting_ticket_view>> {
        return pass(answer_of<std::vector<waiting_ticket_view>>{}, a, std::move(queue), offset,
                    limit);
      },
      [=](lobby_atom l, create_atom a, lobby_registration& r) -> caf::result<bool> {
        return pass(answer_of<bool>{}, l, a, std::move(r));
      },
      [=](lobby_atom l, update_atom a, std::string& id, std::uint32_t players,
          std::string& credential) -> caf::result<bool> {
        return pass(answer_of<bool>{}, l, a, std::move(id), players, std::move(credential));
      },
      [=](lobby_atom l, close_atom a, std::string& id,
          std::string& credential) -> caf::result<bool> {
        return pass(answer_of<bool>{}, l, a, std::move(id), std::move(credential));
      },
      [=](lobby_atom l, find_atom a, lobby_query& q) -> caf::result<lobby_placement> {
        return pass(answer_of<lobby_placement>{}, l, a, std::move(q));
      },
      [=](lobby_atom l, info_atom a) -> caf::result<lobbies_report> {
        return pass(answer_of<lobbies_report>{}, l, a);
      },
      [=](lobby_atom l, inspect_atom a) -> caf::result<std::vector<lobby_registration>> {
        return pass(answer_of<std::vector<lobby_registration>>{}, l, a);
      },
      [=](backfill_atom b, create_atom a, backfill_registration& r) -> caf::result<backfill_state> {
        return pass(answer_of<backfill_state>{}, b, a, std::move(r));
      },
      [=](backfill_atom b, update_atom a, backfill_registration& r) -> caf::result<backfill_state> {
        return pass(answer_of<backfill_state>{}, b, a, std::move(r));
      },
      [=](backfill_atom b, close_atom a, std::string& id,
          std::string& credential) -> caf::result<bool> {
        return pass(answer_of<bool>{}, b, a, std::move(id), std::move(credential));
      },
      [=](backfill_atom b, confirm_atom a, seat_change& c) -> caf::result<backfill_state> {
        return pass(answer_of<backfill_state>{}, b, a, std::move(c));
      },
      [=](backfill_atom b, release_atom a, seat_change& c) -> caf::result<backfill_state> {
        return pass(answer_of<backfill_state>{}, b, a, std::move(c));
      },
      [=](backfill_atom b, status_atom a, std::string& id,
          std::string& credential) -> caf::result<backfill_state> {
        return pass(answer_of<backfill_state>{}, b, a, std::move(id), std::move(credential));
      },
      [=](backfill_atom b, inspect_atom a, std::string& queue,
          std::string& credential) -> caf::result<std::vector<backfill_state>> {
        return pass(answer_of<std::vector<backfill_state>>{}, b, a, std::move(queue),
                    std::move(credential));
      },
      [=](backfill_atom b, explain_atom a, std::string& id, std::uint32_t limit,
          std::string& credential) -> caf::result<session::explanation> {
        return pass(answer_of<session::explanation>{}, b, a, std::move(id), limit,
                    std::move(credential));
      },
      [=](explain_atom a, std::uint64_t id, std::uint32_t limit,
          std::string& credential) -> caf::result<std::vector<session::explanation>> {
        return pass(answer_of<std::vector<session::explanation>>{}, a, id, limit,
                    std::move(credential));
      });
}

// The handlers, each passing its message unchanged (delegation) to the
// service `target()` gives, or answering not_owned_here when it gives none.
template <class Self, class Target>
auto session_forwarders(Self self, Target target) {
  return session_handlers([self, target](auto answer, auto&&... xs) {
    using result = caf::result<typename decltype(answer)::type>;
    if (const auto* to = target())
      return result(self->delegate(*to, std::forward<decltype(xs)>(xs)...));
    return result(make_error(errc::not_owned_here,
                             "no node serves the session queues now (being taken over): retry in "
                             "a moment"));
  });
}

}  // namespace mm::actors
