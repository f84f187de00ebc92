// The session service's messages passed on, unchanged, to the service that
// serves them now: the cluster client's (every node, from the game's side).
// Credentials are passed as the game put them: the node's actor port
// replaces them with the connection's identity (port_session_handlers.hpp).
// `target()` gives that service's handle, or null when none serves the
// queues now (a takeover under way, or not known yet): the request is then
// answered with errc::not_owned_here, and the caller retries. Answers go
// straight from the service to the caller (delegation).
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

template <class Self, class Target>
auto session_forwarders(Self self, Target target) {
  auto nobody = [] {
    return make_error(errc::not_owned_here,
                      "no node serves the session queues now (being taken over): retry in a "
                      "moment");
  };
  using owner = session_interfaces::owner;
  return std::make_tuple(
      [=](create_atom a, std::string& queue, session_ticket& t,
          owner& o) -> caf::result<std::uint64_t> {
        if (const auto* to = target())
          return self->delegate(*to, a, std::move(queue), std::move(t), std::move(o));
        return nobody();
      },
      [=](cancel_atom a, std::uint64_t id) -> caf::result<bool> {
        if (const auto* to = target()) return self->delegate(*to, a, id);
        return nobody();
      },
      [=](cancel_atom a, std::uint64_t id, std::string& credential) -> caf::result<bool> {
        if (const auto* to = target()) return self->delegate(*to, a, id, std::move(credential));
        return nobody();
      },
      [=](status_atom a, std::uint64_t id) -> caf::result<ticket_outcome> {
        if (const auto* to = target()) return self->delegate(*to, a, id);
        return nobody();
      },
      [=](info_atom a) -> caf::result<std::vector<session_queue_report>> {
        if (const auto* to = target()) return self->delegate(*to, a);
        return nobody();
      },
      [=](inspect_atom a, std::string& queue, std::uint32_t offset,
          std::uint32_t limit) -> caf::result<std::vector<waiting_ticket_view>> {
        if (const auto* to = target())
          return self->delegate(*to, a, std::move(queue), offset, limit);
        return nobody();
      },
      [=](lobby_atom l, create_atom a, lobby_registration& r) -> caf::result<bool> {
        if (const auto* to = target()) return self->delegate(*to, l, a, std::move(r));
        return nobody();
      },
      [=](lobby_atom l, update_atom a, std::string& id, std::uint32_t players,
          std::string& credential) -> caf::result<bool> {
        if (const auto* to = target())
          return self->delegate(*to, l, a, std::move(id), players, std::move(credential));
        return nobody();
      },
      [=](lobby_atom l, close_atom a, std::string& id,
          std::string& credential) -> caf::result<bool> {
        if (const auto* to = target())
          return self->delegate(*to, l, a, std::move(id), std::move(credential));
        return nobody();
      },
      [=](lobby_atom l, find_atom a, lobby_query& q) -> caf::result<lobby_placement> {
        if (const auto* to = target()) return self->delegate(*to, l, a, std::move(q));
        return nobody();
      },
      [=](lobby_atom l, info_atom a) -> caf::result<lobbies_report> {
        if (const auto* to = target()) return self->delegate(*to, l, a);
        return nobody();
      },
      [=](lobby_atom l, inspect_atom a) -> caf::result<std::vector<lobby_registration>> {
        if (const auto* to = target()) return self->delegate(*to, l, a);
        return nobody();
      },
      [=](backfill_atom b, create_atom a, backfill_registration& r) -> caf::result<backfill_state> {
        if (const auto* to = target()) return self->delegate(*to, b, a, std::move(r));
        return nobody();
      },
      [=](backfill_atom b, update_atom a, backfill_registration& r) -> caf::result<backfill_state> {
        if (const auto* to = target()) return self->delegate(*to, b, a, std::move(r));
        return nobody();
      },
      [=](backfill_atom b, close_atom a, std::string& id,
          std::string& credential) -> caf::result<bool> {
        if (const auto* to = target())
          return self->delegate(*to, b, a, std::move(id), std::move(credential));
        return nobody();
      },
      [=](backfill_atom b, confirm_atom a, seat_change& c) -> caf::result<backfill_state> {
        if (const auto* to = target()) return self->delegate(*to, b, a, std::move(c));
        return nobody();
      },
      [=](backfill_atom b, release_atom a, seat_change& c) -> caf::result<backfill_state> {
        if (const auto* to = target()) return self->delegate(*to, b, a, std::move(c));
        return nobody();
      },
      [=](backfill_atom b, status_atom a, std::string& id,
          std::string& credential) -> caf::result<backfill_state> {
        if (const auto* to = target())
          return self->delegate(*to, b, a, std::move(id), std::move(credential));
        return nobody();
      },
      [=](backfill_atom b, inspect_atom a, std::string& queue,
          std::string& credential) -> caf::result<std::vector<backfill_state>> {
        if (const auto* to = target())
          return self->delegate(*to, b, a, std::move(queue), std::move(credential));
        return nobody();
      },
      [=](backfill_atom b, explain_atom a, std::string& id, std::uint32_t limit,
          std::string& credential) -> caf::result<session::explanation> {
        if (const auto* to = target())
          return self->delegate(*to, b, a, std::move(id), limit, std::move(credential));
        return nobody();
      },
      [=](explain_atom a, std::uint64_t id, std::uint32_t limit,
          std::string& credential) -> caf::result<std::vector<session::explanation>> {
        if (const auto* to = target())
          return self->delegate(*to, a, id, limit, std::move(credential));
        return nobody();
      });
}

}  // namespace mm::actors
