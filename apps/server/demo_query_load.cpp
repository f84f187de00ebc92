#include "demo_query_load.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>

#include "mm/engine/log.hpp"
#include "mm/engine/synthetic_players.hpp"

namespace mm::server {

void fill_demo_table(player_store& db, std::int64_t players) {
  if (players <= 0 || db.count_players() > 0) return;
  say("server",
      "matchmakerd: writing " + std::to_string(players) + " synthetic players into " + db.where());
  rng r(2026);
  const std::size_t chunk = 10'000;
  for (std::int64_t done = 0; done < players; done += chunk) {
    const auto n = static_cast<std::size_t>(std::min<std::int64_t>(chunk, players - done));
    db.upsert_players(make_players(synthetic_population{}, n, static_cast<player_id>(done) + 1, r));
  }
}

namespace {
using load_tick_atom = caf::atom_constant<caf::atom("loadtick")>;
}

caf::behavior demo_query_load(caf::event_based_actor* self,
                              actors::interfaces<generic_profile>::client client,
                              std::int64_t per_second, std::uint64_t players) {
  const std::uint64_t max_id = std::max<std::uint64_t>(players, 1);
  const auto per_tick = std::max<std::int64_t>(1, per_second / 10);
  auto r = std::make_shared<rng>(7);
  self->send(self, load_tick_atom::value);
  return {[=](load_tick_atom) {
    self->delayed_send(self, std::chrono::milliseconds(100), load_tick_atom::value);
    for (std::int64_t i = 0; i < per_tick; ++i) {
      const player_id attacker = 1 + r->below(max_id);
      match_request<generic_query> req{make_query(synthetic_population{}, attacker, *r),
                                       static_cast<std::uint32_t>(r->below(4)),
                                       {}};
      self->request(client, std::chrono::seconds(1), actors::find_atom::value, std::move(req))
          .then([](const match_reply<generic_model>&) {}, [](caf::error&) {});
    }
  }};
}

}  // namespace mm::server
