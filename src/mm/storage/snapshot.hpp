// Warm restarts (docs/design.md, Persistence): an engine's persistent state to and from the state
// table. A snapshot holds the sizing model, the cache size it was taken at,
// each strategy's state by name, the last rebalance time and a proportional
// sample of at most database_cache_size cached players.
//
// Restoring never stops the service: a payload that cannot be used is set aside
// in matchmaker_state_rejected with the reason and a timestamp, logged, and the
// engine starts empty (the scan fills it).
#pragma once

#include <chrono>
#include <cmath>
#include <string>

#include "mm/engine/engine.hpp"
#include "mm/engine/log.hpp"
#include "mm/engine/state_codec.hpp"
#include "mm/storage/state_table.hpp"

namespace mm {

template <class Profile>
engine_snapshot<typename Profile::model_type> take_snapshot(const engine<Profile>& e) {
  engine_snapshot<typename Profile::model_type> s;
  s.sizing = e.sizing();
  s.player_cache_size = e.opts().player_cache_size;
  s.last_rebalance_unix_ms = e.last_rebalance_unix_ms();
  s.strategy_states = e.strategy_states();
  s.players = e.proportional_sample(e.opts().database_cache_size);
  s.buckets = e.layout();
  return s;
}

// The players an instance owns in a set of `count` instances: id mod count ==
// index. A restore keeps only those: a snapshot written when the set had
// another size holds players that no scan or update of this instance would
// ever refresh.
struct shard {
  std::uint32_t count = 1, index = 0;
  bool owns(player_id id) const { return count <= 1 || id % count == index; }
};

struct restore_report {
  bool found = false;                           // a snapshot row existed
  bool restored = false;                        // and was applied
  std::string problem;                          // why not, when found but not restored
  std::uint64_t players = 0;                    // cached after the restore
  std::uint64_t other_shard = 0;                // entries left out: another instance owns them
  bool resized = false;                         // player_cache_size changed: buckets were resized
  std::vector<std::string> unknown_strategies;  // states no strategy claimed
};

// Applies a decoded snapshot. A strategy state that cannot be read rejects the
// whole snapshot: the engine is reset and the problem reported.
template <class Profile>
restore_report apply_snapshot(engine<Profile>& e,
                              const engine_snapshot<typename Profile::model_type>& s,
                              std::int64_t now_unix_ms, shard owned = {}) {
  restore_report r;
  r.found = true;
  e.reset();
  try {
    if (!s.sizing.ratios.empty()) e.restore_sizing(s.sizing, s.last_rebalance_unix_ms);
    for (const auto& [name, bytes] : s.strategy_states)
      if (!e.restore_strategy_state(name, bytes)) r.unknown_strategies.push_back(name);
  } catch (const std::exception& ex) {
    e.reset();
    r.problem = std::string("strategy state unusable: ") + ex.what();
    return r;
  }
  // The buckets first, with their slot seeds: every player then finds the slot
  // it had, so nobody is lost to a collision.
  e.restore_layout(s.buckets);
  for (const auto& m : s.players) {
    if (owned.owns(Profile::id_of(m)))
      e.restore_entry(m);
    else
      ++r.other_shard;
  }
  if (s.player_cache_size != e.opts().player_cache_size && !e.sizing().empty()) {
    e.resize_to_sizing(now_unix_ms);
    r.resized = true;
  }
  r.players = e.pool().players();
  r.restored = true;
  return r;
}

struct save_report {
  std::size_t bytes = 0;
  std::size_t players = 0;
  double seconds = 0;
};

template <class Profile>
save_report save_state(database& db, const std::string& instance_id, const engine<Profile>& e,
                       std::int64_t now_unix_ms) {
  const auto start = std::chrono::steady_clock::now();
  const auto snap = take_snapshot(e);
  stored_state st{now_unix_ms, snapshot_version, encode_snapshot(snap)};
  write_state(db, instance_id, st);
  return {st.payload.size(), snap.players.size(),
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
}

// Decodes and applies a stored snapshot; the caller sets it aside when the
// report says found but not restored. Never throws on a bad payload.
template <class Profile>
restore_report restore_stored(engine<Profile>& e, const stored_state& stored,
                              std::int64_t now_unix_ms, shard owned = {}) {
  using model = typename Profile::model_type;
  auto decoded = decode_snapshot<model>(stored.payload, [](const model& m) {
    return Profile::id_of(m) != invalid_player && std::isfinite(Profile::mmr_of(m));
  });
  if (auto* err = std::get_if<decode_error>(&decoded)) {
    restore_report r;
    r.found = true;
    r.problem = err->reason;
    return r;
  }
  return apply_snapshot(e, std::get<engine_snapshot<model>>(decoded), now_unix_ms, owned);
}

inline void log_set_aside(const std::string& instance_id, const stored_state& stored,
                          const std::string& problem) {
  log(log_level::error, "matchmaker",
      "matchmaker '" + instance_id + "': snapshot of " +
          std::to_string(stored.persisted_at_unix_ms) +
          " set aside in matchmaker_state_rejected (" + problem +
          "); starting empty, the scan will fill the cache");
}

// Reads and applies the instance's snapshot. Database errors propagate (the
// caller decides whether to retry); a bad payload does not.
template <class Profile>
restore_report load_state(database& db, const std::string& instance_id, engine<Profile>& e,
                          std::int64_t now_unix_ms, shard owned = {}) {
  const auto stored = read_state(db, instance_id);
  if (!stored) return {};
  restore_report r = restore_stored(e, *stored, now_unix_ms, owned);
  if (!r.restored) {
    set_aside_state(db, instance_id, r.problem, now_unix_ms);
    log_set_aside(instance_id, *stored, r.problem);
  }
  return r;
}

}  // namespace mm
