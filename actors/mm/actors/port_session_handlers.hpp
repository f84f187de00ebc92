// The session service's messages as the actor port serves them: each one
// checked against the identity of the connection it came from (identity.hpp,
// permissions.hpp) and passed on under that identity's credential, whatever
// the peer put in its message. A peer reads and changes only what its
// identity created (tickets, running matches, lobbies); an admin, all.
// Answers go straight from the service to the peer (delegation), except
// where the port must look at the answer first (a ticket's status, a
// queue's page).
//
// `caller()` gives the identity of the message being handled, `target()`
// the service's handle (null while none serves: errc::not_owned_here).
#pragma once

#include <caf/all.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "mm/actors/errors.hpp"
#include "mm/actors/identity.hpp"
#include "mm/actors/interface.hpp"
#include "mm/actors/permissions.hpp"
#include "mm/session/public_id.hpp"

namespace mm::actors {

// The refusal of `op` to `who`.
inline caf::error refused(operation op, const caller_identity& who) {
  return make_error(errc::forbidden, std::string(permission_of(op).name) + ": needs role " +
                                         std::string(to_string(needed(op))) + "; '" + who.name +
                                         "' has role " + std::string(to_string(who.granted)));
}

inline caf::error no_session_service() {
  return make_error(errc::not_owned_here,
                    "no node serves the session queues now (being taken over): retry in a moment");
}

// `f(who, service)` for a caller whose role allows `op`, while a service
// serves; else the refusal, or errc::not_owned_here.
template <class R, class Caller, class Target, class F>
caf::result<R> as_caller(operation op, const Caller& caller, const Target& target, F&& f) {
  const caller_identity who = caller();
  if (who.granted < needed(op)) return refused(op, who);
  const auto* to = target();
  if (to == nullptr) return no_session_service();
  return f(who, *to);
}

// Answers `request` from the service through `check(who, answer)`, which may
// change the answer or refuse it (an error); for what the port must look at.
template <class T, class Self, class Service, class Check, class... Ts>
caf::result<T> filtered(Self self, const caller_identity& who, const Service& to, Check check,
                        Ts&&... request) {
  auto rp = self->template make_response_promise<T>();
  self->request(to, caf::infinite, std::forward<Ts>(request)...)
      .then(
          [rp, who, check](T& answer) mutable {
            if (auto refusal = check(who, answer))
              rp.deliver(std::move(*refusal));
            else
              rp.deliver(std::move(answer));
          },
          [rp](caf::error& e) mutable { rp.deliver(std::move(e)); });
  return rp;
}

template <class Self, class Caller, class Target>
auto port_session_handlers(Self self, Caller caller, Target target) {
  using owner = session_interfaces::owner;
  using service = session_interfaces::service;
  using who_t = const caller_identity&;
  // Its own tickets; an admin, any (the credential that may is passed on).
  auto cancel = [=](cancel_atom a, std::uint64_t id) -> caf::result<bool> {
    return as_caller<bool>(operation::ticket_cancel, caller, target,
                           [&](who_t who, const service& to) -> caf::result<bool> {
                             if (who.granted == role::admin) return self->delegate(to, a, id);
                             return self->delegate(to, a, id, who.name);
                           });
  };
  return std::make_tuple(
      [=](create_atom a, std::string& queue, session_ticket& t,
          owner& o) -> caf::result<std::uint64_t> {
        return as_caller<std::uint64_t>(
            operation::ticket_create, caller, target, [&](who_t who, const service& to) {
              t.credential = who.name;
              return self->delegate(to, a, std::move(queue), std::move(t), std::move(o));
            });
      },
      cancel, [=](cancel_atom a, std::uint64_t id, std::string&) { return cancel(a, id); },
      // Another identity's ticket is not found, as an unknown id.
      [=](status_atom a, std::uint64_t id) -> caf::result<ticket_outcome> {
        return as_caller<ticket_outcome>(
            operation::ticket_read, caller, target, [&](who_t who, const service& to) {
              const auto mine = [id](who_t w,
                                     const ticket_outcome& o) -> std::optional<caf::error> {
                if (w.granted == role::admin || o.credential == w.name) return std::nullopt;
                return make_error(errc::not_found,
                                  "ticket: no ticket " + session::format_public_id(id));
              };
              return filtered<ticket_outcome>(self, who, to, mine, a, id);
            });
      },
      [=](info_atom a) -> caf::result<std::vector<session_queue_report>> {
        return as_caller<std::vector<session_queue_report>>(
            operation::queue_read, caller, target,
            [&](who_t, const service& to) { return self->delegate(to, a); });
      },
      // Others' waiting tickets come without their ids and players.
      [=](inspect_atom a, std::string& queue, std::uint32_t offset,
          std::uint32_t limit) -> caf::result<std::vector<waiting_ticket_view>> {
        using page = std::vector<waiting_ticket_view>;
        return as_caller<page>(
            operation::queue_read, caller, target, [&](who_t who, const service& to) {
              const auto hide = [](who_t w, page& p) {
                if (w.granted != role::admin)
                  for (auto& v : p)
                    if (v.credential != w.name) {
                      v.ticket = 0;
                      v.players.clear();
                    }
                return std::optional<caf::error>();
              };
              return filtered<page>(self, who, to, hide, a, std::move(queue), offset, limit);
            });
      },
      [=](lobby_atom l, create_atom a, lobby_registration& r) -> caf::result<bool> {
        return as_caller<bool>(operation::lobby_write, caller, target,
                               [&](who_t who, const service& to) {
                                 r.credential = who.name;
                                 return self->delegate(to, l, a, std::move(r));
                               });
      },
      [=](lobby_atom l, update_atom a, std::string& id, std::uint32_t players,
          std::string&) -> caf::result<bool> {
        return as_caller<bool>(
            operation::lobby_write, caller, target, [&](who_t who, const service& to) {
              return self->delegate(to, l, a, std::move(id), players, acting_credential(who));
            });
      },
      [=](lobby_atom l, close_atom a, std::string& id, std::string&) -> caf::result<bool> {
        return as_caller<bool>(
            operation::lobby_write, caller, target, [&](who_t who, const service& to) {
              return self->delegate(to, l, a, std::move(id), acting_credential(who));
            });
      },
      [=](lobby_atom l, find_atom a, lobby_query& q) -> caf::result<lobby_placement> {
        return as_caller<lobby_placement>(operation::lobby_find, caller, target,
                                          [&](who_t who, const service& to) {
                                            q.credential = who.name;
                                            return self->delegate(to, l, a, std::move(q));
                                          });
      },
      [=](lobby_atom l, info_atom a) -> caf::result<lobbies_report> {
        return as_caller<lobbies_report>(
            operation::lobby_read, caller, target,
            [&](who_t, const service& to) { return self->delegate(to, l, a); });
      },
      [=](lobby_atom l, inspect_atom a) -> caf::result<std::vector<lobby_registration>> {
        return as_caller<std::vector<lobby_registration>>(
            operation::lobby_read, caller, target,
            [&](who_t, const service& to) { return self->delegate(to, l, a); });
      },
      // Backfill: registered under the caller's name; acted on as the caller
      // (an admin: on every match).
      [=](backfill_atom b, create_atom a, backfill_registration& r) -> caf::result<backfill_state> {
        return as_caller<backfill_state>(operation::backfill_write, caller, target,
                                         [&](who_t who, const service& to) {
                                           r.credential = who.name;
                                           return self->delegate(to, b, a, std::move(r));
                                         });
      },
      [=](backfill_atom b, update_atom a, backfill_registration& r) -> caf::result<backfill_state> {
        return as_caller<backfill_state>(operation::backfill_write, caller, target,
                                         [&](who_t who, const service& to) {
                                           r.credential = acting_credential(who);
                                           return self->delegate(to, b, a, std::move(r));
                                         });
      },
      [=](backfill_atom b, close_atom a, std::string& id, std::string&) -> caf::result<bool> {
        return as_caller<bool>(
            operation::backfill_write, caller, target, [&](who_t who, const service& to) {
              return self->delegate(to, b, a, std::move(id), acting_credential(who));
            });
      },
      [=](backfill_atom b, confirm_atom a, seat_change& c) -> caf::result<backfill_state> {
        return as_caller<backfill_state>(operation::backfill_write, caller, target,
                                         [&](who_t who, const service& to) {
                                           c.credential = acting_credential(who);
                                           return self->delegate(to, b, a, std::move(c));
                                         });
      },
      [=](backfill_atom b, release_atom a, seat_change& c) -> caf::result<backfill_state> {
        return as_caller<backfill_state>(operation::backfill_write, caller, target,
                                         [&](who_t who, const service& to) {
                                           c.credential = acting_credential(who);
                                           return self->delegate(to, b, a, std::move(c));
                                         });
      },
      [=](backfill_atom b, status_atom a, std::string& id,
          std::string&) -> caf::result<backfill_state> {
        return as_caller<backfill_state>(
            operation::backfill_read, caller, target, [&](who_t who, const service& to) {
              return self->delegate(to, b, a, std::move(id), acting_credential(who));
            });
      },
      [=](backfill_atom b, inspect_atom a, std::string& queue,
          std::string&) -> caf::result<std::vector<backfill_state>> {
        return as_caller<std::vector<backfill_state>>(
            operation::backfill_read, caller, target, [&](who_t who, const service& to) {
              return self->delegate(to, b, a, std::move(queue), acting_credential(who));
            });
      },
      [=](backfill_atom b, explain_atom a, std::string& id, std::uint32_t limit,
          std::string&) -> caf::result<session::explanation> {
        return as_caller<session::explanation>(
            operation::backfill_read, caller, target, [&](who_t who, const service& to) {
              return self->delegate(to, b, a, std::move(id), limit, acting_credential(who));
            });
      },
      [=](explain_atom a, std::uint64_t id, std::uint32_t limit,
          std::string&) -> caf::result<std::vector<session::explanation>> {
        return as_caller<std::vector<session::explanation>>(
            operation::ticket_read, caller, target, [&](who_t who, const service& to) {
              return self->delegate(to, a, id, limit, acting_credential(who));
            });
      });
}

}  // namespace mm::actors
