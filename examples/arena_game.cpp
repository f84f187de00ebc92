// The asynchronous attack-target lookup end to end, on actors: player actors
// attack (ask the matchmaker for a defender), fight (an Elo update of both
// sides) and push their new state, while the matchmaker's instances scan the
// player table. Defenders are offline: only their stored state takes part.
// When nothing fits, the matchmaker answers with a fake opponent (a bot).
//
//   mm_example_arena [attackers] [attacks each] [database]
#include <caf/all.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "mm/actors/generic_actors.hpp"
#include "mm/actors/registration.hpp"
#include "mm/engine/synthetic_players.hpp"
#include "mm/storage/player_table.hpp"

namespace {
using namespace mm;
using namespace mm::actors;
using client_t = client_interface<generic_profile>::type;
using done_atom = caf::atom_constant<caf::atom("done")>;

struct attacker_report {
  std::uint32_t success = 0, fake = 0, none = 0, failed = 0;
  double gap_sum = 0;
  float start_mmr = 0, end_mmr = 0;
};

// Elo: the expected score of a against b, and the K-factor step.
double expected_score(double a, double b) {
  return 1.0 / (1.0 + std::pow(10.0, (b - a) / 400.0));
}
constexpr double k_factor = 32;

using attack_atom = caf::atom_constant<caf::atom("attack")>;

struct attacker_state {
  attacker_state() = default;  // not an aggregate: CAF would build it from the actor pointer
  generic_model me;
  attacker_report report;
  rng dice;
  static inline const char* name = "arena.attacker";
};

// A player actor: attacks `attacks` times, one after the other (each attack is
// a message to itself, so nothing is held across attacks), then reports.
caf::behavior attacker(caf::stateful_actor<attacker_state>* self, client_t mm, generic_model me,
                       std::uint32_t attacks, caf::actor collector, std::uint64_t seed) {
  self->state.me = me;
  self->state.report.start_mmr = me.mmr;
  self->state.dice.reseed(seed);
  self->send(self, attack_atom::value, attacks);
  return {
      [=](attack_atom, std::uint32_t left) {
        auto& st = self->state;
        if (left == 0) {
          const attacker_report& r = st.report;
          self->send(collector, done_atom::value, r.success, r.fake, r.none, r.failed, r.gap_sum,
                     r.start_mmr, st.me.mmr);
          self->quit();
          return;
        }
        match_request<generic_query> req;
        req.query = generic_query{st.me.id(), st.me.mmr, st.me.attributes};
        self->request(mm, std::chrono::seconds(5), find_atom::value, req)
            .then(
                [=](const match_reply<generic_model>& r) {
                  auto& s = self->state;
                  const bool real = r.type == match_type::success;
                  if (real || r.type == match_type::fake_opponent) {
                    // The fight: the attacker wins with its Elo expectation.
                    const double e = expected_score(s.me.mmr, r.model.mmr);
                    const double won = s.dice.unit() < e ? 1.0 : 0.0;
                    const auto delta = static_cast<float>(k_factor * (won - e));
                    s.report.gap_sum += std::abs(s.me.mmr - r.model.mmr);
                    s.me.mmr += delta;
                    // The new states go back to the matchmaker: the attacker's
                    // own, and the defender's (a bot has no state to push).
                    self->send(mm, update_atom::value,
                               player_update<generic_model>{s.me.id(), {s.me}});
                    if (real) {
                      generic_model defender = r.model;
                      defender.mmr -= delta;
                      self->send(mm, update_atom::value,
                                 player_update<generic_model>{defender.id(), {defender}});
                      ++s.report.success;
                    } else {
                      ++s.report.fake;
                    }
                  } else {
                    ++s.report.none;
                  }
                  self->send(self, attack_atom::value, left - 1);
                },
                [=](caf::error&) {
                  ++self->state.report.failed;
                  self->send(self, attack_atom::value, left - 1);
                });
      },
  };
}
}  // namespace

int main(int argc, char** argv) try {
  const std::uint32_t attackers = argc > 1 ? static_cast<std::uint32_t>(std::atoi(argv[1])) : 200;
  const std::uint32_t attacks = argc > 2 ? static_cast<std::uint32_t>(std::atoi(argv[2])) : 50;
  const std::string path = argc > 3 ? argv[3] : "demo-data/arena.db";
  if (!std::filesystem::path(path).parent_path().empty())
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());

  // The game's player table: 50,000 players, of whom `attackers` come online.
  rng r(1);
  const auto rows = make_players(synthetic_population{}, 50'000, 1, r);
  {
    database db(path);
    if (count_players(db) == 0) upsert_players(db, rows);
  }

  caf::actor_system_config cfg;
  cfg.set("logger.verbosity", caf::atom("quiet"));
  add_message_types<generic_profile>(cfg, "generic");
  caf::actor_system sys{cfg};

  instance_config<generic_profile> base;
  base.id = "arena";
  base.opts.player_cache_size = 20'000;
  base.opts.enable_fake_opponents = true;
  base.opts.database_scan_first_delay = std::chrono::milliseconds(0);
  base.opts.database_scan_tick = std::chrono::milliseconds(200);
  base.opts.database_scan_max_fetch = 4096;
  base.profile = generic_profile(demo_profile_config());
  base.database.path = path;
  auto set = spawn_instance_set<generic_profile>(sys, 2, base);
  client_t mm = spawn_client<generic_profile>(sys, set, std::uint64_t{3});

  caf::scoped_actor self{sys};
  // Let the first scans fill the caches before the players come online.
  for (auto& inst : set)
    for (int attempt = 0; attempt < 100; ++attempt) {
      std::uint64_t players = 0;
      self->request(inst, std::chrono::seconds(5), info_atom::value)
          .receive([&](const instance_info& i) { players = i.engine.players; }, [](caf::error&) {});
      if (players > 1000) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }

  for (std::uint32_t i = 0; i < attackers; ++i) {
    const auto& row = rows[i * (rows.size() / attackers)];
    std::vector<generic_model> me;
    base.profile.make_models(row, me);
    sys.spawn(attacker, mm, me.at(0), attacks, caf::actor{self}, std::uint64_t{i + 1});
  }
  attacker_report total;
  double drift = 0;
  std::uint32_t finished = 0;
  self->receive_for(finished,
                    attackers)([&](done_atom, std::uint32_t s, std::uint32_t f, std::uint32_t n,
                                   std::uint32_t failed, double gaps, float start, float end) {
    total.success += s;
    total.fake += f;
    total.none += n;
    total.failed += failed;
    total.gap_sum += gaps;
    drift += std::abs(end - start);
  });
  const std::uint32_t all = total.success + total.fake + total.none + total.failed;
  std::printf(
      "%u attackers x %u attacks: %u fights against stored players, %u against bots "
      "(fake opponents), %u found nothing, %u failed\n",
      attackers, attacks, total.success, total.fake, total.none, total.failed);
  std::printf("mean MMR gap attacker-defender %.1f; mean rating change per attacker %.1f\n",
              total.gap_sum / std::max(1u, total.success + total.fake),
              drift / std::max(1u, attackers));
  self->send_exit(mm, caf::exit_reason::user_shutdown);
  for (auto& inst : set) self->send_exit(inst, caf::exit_reason::user_shutdown);
  return all == attackers * attacks && total.failed == 0 ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "mm_example_arena: %s\n", e.what());
  return 1;
}
