#include "mm/actors/session_lobbies_actor.hpp"

#include <algorithm>
#include <map>

#include "mm/actors/errors.hpp"
#include "mm/engine/error.hpp"

namespace mm::actors {

namespace {

session::time_ms now_of(session_lobbies_pointer self) {
  return std::chrono::duration_cast<session::time_ms>(self->clock().now() - self->state.epoch);
}

session::find_lobby_request to_request(const lobby_query& q) {
  session::find_lobby_request r;
  r.modes = q.modes;
  r.party_size = q.party_size;
  if (!q.region.empty()) r.region = q.region;
  for (const auto& n : q.rtt_ms) r.rtt_ms.emplace_back(n.name, n.value);
  if (q.has_location) r.location = session::geo_point{q.latitude, q.longitude};
  r.prevent_auto_create = q.prevent_auto_create;
  r.owner = q.credential;
  return r;
}

lobbies_report report_of(const session_lobbies_state& st) {
  lobbies_report r;
  r.found = st.found;
  r.created = st.created;
  r.closed_idle = st.closed_idle;
  r.full = st.full;
  const auto& dcs = st.registry->latency().datacenters();
  std::map<std::size_t, lobby_datacenter_report> by_dc;
  for (const auto& [id, l] : st.registry->lobbies()) {
    ++r.lobbies;
    r.players += l.players;
    r.seats += l.max_players;
    auto& d = by_dc[l.datacenter];
    d.datacenter = dcs[l.datacenter].name;
    ++d.lobbies;
    d.players += l.players;
    d.seats += l.max_players;
  }
  for (auto& [i, d] : by_dc) r.by_datacenter.push_back(std::move(d));
  return r;
}

// True when `credential` (not an admin's "") may not touch lobby `id`: the
// lobby exists and is another credential's.
bool foreign(const session::lobby_registry& registry, const std::string& id,
             const std::string& credential) {
  if (credential.empty()) return false;
  const session::lobby* l = registry.get(id);
  return l != nullptr && l->owner != credential;
}

// Runs a registry call; its mm::error becomes the reply's error.
template <class F>
auto guarded(F&& f) -> caf::result<decltype(f())> {
  try {
    return f();
  } catch (const mm::error& e) {
    return make_error(e.code(), e.what());
  }
}

}  // namespace

std::vector<lobby_registration> lobby_list(const session::lobby_registry& registry) {
  std::vector<lobby_registration> out;
  const auto& dcs = registry.latency().datacenters();
  for (const auto& [id, l] : registry.lobbies())
    out.push_back({l.id, l.mode, dcs[l.datacenter].name, l.max_players, l.players,
                   l.created_by_find, l.owner});
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.id < b.id; });
  return out;
}

session_interfaces::lobbies_actor::behavior_type session_lobbies_actor(
    session_lobbies_pointer self, session_lobbies_config config) {
  auto& st = self->state;
  st.epoch = self->clock().now();
  st.idle_check = config.idle_check;
  st.registry =
      std::make_unique<session::lobby_registry>(config.latency, config.lobbies, config.seed);
  for (const auto& l : config.restored) {
    try {
      st.registry->register_lobby(l.id, l.mode, l.datacenter, l.max_players, l.players,
                                  session::time_ms(0), l.credential);
    } catch (const mm::error&) {
      // Its datacenter or size no longer fits the config: its server registers it again.
    }
  }
  self->delayed_send(self, st.idle_check, lobby_atom::value, session_tick_atom::value);
  return {
      [self](lobby_atom, create_atom, const lobby_registration& l) -> caf::result<bool> {
        return guarded([&] {
          self->state.registry->register_lobby(l.id, l.mode, l.datacenter, l.max_players, l.players,
                                               now_of(self), l.credential);
          return true;
        });
      },
      [self](lobby_atom, update_atom, const std::string& id, std::uint32_t players,
             const std::string& credential) -> caf::result<bool> {
        auto& registry = *self->state.registry;
        if (foreign(registry, id, credential))
          return make_error(errc::not_found, "id: no lobby '" + id.substr(0, 128) + "'");
        return guarded([&] {
          registry.update(id, players, now_of(self));
          return true;
        });
      },
      [self](lobby_atom, close_atom, const std::string& id, const std::string& credential) {
        auto& registry = *self->state.registry;
        return !foreign(registry, id, credential) && registry.close(id);
      },
      [self](lobby_atom, find_atom, const lobby_query& q) -> caf::result<lobby_placement> {
        auto& s = self->state;
        try {
          const session::find_lobby_result r = s.registry->find(to_request(q), now_of(self));
          ++s.found;
          s.created += r.created ? 1 : 0;
          return lobby_placement{r.lobby_id, s.registry->latency().datacenters()[r.datacenter].name,
                                 r.created, r.players};
        } catch (const mm::error& e) {
          s.full += e.code() == errc::no_available_lobby ? 1 : 0;
          return make_error(e.code(), e.what());
        }
      },
      [self](lobby_atom, info_atom) { return report_of(self->state); },
      [self](lobby_atom, inspect_atom) { return lobby_list(*self->state.registry); },
      [self](lobby_atom, session_tick_atom) {
        auto& s = self->state;
        s.closed_idle += s.registry->close_idle(now_of(self)).size();
        self->delayed_send(self, s.idle_check, lobby_atom::value, session_tick_atom::value);
      },
  };
}

}  // namespace mm::actors
