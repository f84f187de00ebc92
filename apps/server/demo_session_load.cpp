#include "demo_session_load.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <random>

#include "mm/engine/random.hpp"

namespace mm::server {

namespace {

using demo_tick_atom = caf::atom_constant<caf::atom("demojoin")>;

struct stream {
  rng r{11};
  // A random start: another node's demo players are other players.
  player_id next_id = 1'000'000'000'000ull + (std::random_device{}() & 0xffffffu) * 1'000'000ull;
  double owed = 0;  // players due but not yet sent (rates below 10/s)
  std::size_t next_queue = 0;
};

double uniform(rng& r) {
  return static_cast<double>(r() >> 11) * 0x1.0p-53;
}

// Mostly solos: 55% 1, 25% 2, 12% 3, 8% 4 (capped at the queue's party size).
std::uint32_t party_size(rng& r, std::uint32_t max) {
  const double u = uniform(r);
  const std::uint32_t n = u < 0.55 ? 1 : u < 0.80 ? 2 : u < 0.92 ? 3 : 4;
  return std::min(n, std::max<std::uint32_t>(max, 1));
}

actors::session_ticket make_party(stream& s, const demo_session_settings& cfg,
                                  std::uint32_t max_party_size) {
  const auto& dc = cfg.datacenters[s.r.below(cfg.datacenters.size())];
  actors::session_ticket t;
  const std::uint32_t n = party_size(s.r, max_party_size);
  for (std::uint32_t i = 0; i < n; ++i) {
    actors::session_player p;
    p.id = s.next_id++;
    // Two uniforms summed: a bell around 1500, from 900 to 2100.
    p.mmr = 900 + 600 * (uniform(s.r) + uniform(s.r));
    p.has_location = true;
    p.latitude = std::clamp(dc.location.latitude + 10 * (uniform(s.r) - 0.5), -89.0, 89.0);
    p.longitude = std::clamp(dc.location.longitude + 10 * (uniform(s.r) - 0.5), -179.0, 179.0);
    t.players.push_back(std::move(p));
  }
  return t;
}

}  // namespace

caf::behavior demo_session_load(caf::event_based_actor* self,
                                actors::session_interfaces::service service,
                                demo_session_settings settings) {
  auto s = std::make_shared<stream>();
  self->send(self, demo_tick_atom::value);
  const auto owner = caf::actor_cast<actors::session_interfaces::owner>(self);
  return {
      [=](demo_tick_atom) {
        self->delayed_send(self, std::chrono::milliseconds(100), demo_tick_atom::value);
        if (settings.datacenters.empty() || settings.queues.empty()) return;
        s->owed += static_cast<double>(settings.players_per_second) / 10.0;
        while (s->owed >= 1) {
          const auto& q = settings.queues[s->next_queue++ % settings.queues.size()];
          actors::session_ticket t = make_party(*s, settings, q.max_party_size);
          s->owed -= static_cast<double>(t.players.size());
          self->request(service, std::chrono::seconds(5), actors::create_atom::value, q.name,
                        std::move(t), owner)
              .then([](std::uint64_t) {}, [](caf::error&) {});
        }
      },
      [](actors::ticket_atom, const actors::ticket_outcome&) {},
  };
}

}  // namespace mm::server
