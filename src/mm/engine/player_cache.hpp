// Where every cached player sits, and the bookkeeping that keeps memory
// bounded: the buckets, the membership filter that finds a player without a
// per-player directory, and the capacity plan of the sizing model. The engine
// decides *what* happens to a player (labels, thresholds, samples, counters);
// this class decides *where* (which bucket, created or not, who is evicted).
// Labels come computed by the caller, so nothing here knows the strategies.
//
// Invariants:
//  - the total capacity never exceeds capacity_limit() (player_cache_size
//    plus a tenth), whatever the labels (docs/design.md, Sizing);
//  - every cached id is in the membership filter (ids removed since its last
//    rebuild may still be there: "stale", counted in filter_stale_);
//  - in single-entry mode a player is in at most one bucket; in
//    multiple-entries mode in at most one slot per bucket.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "mm/engine/bucket_pool.hpp"
#include "mm/engine/game_profile.hpp"
#include "mm/engine/introspection.hpp"
#include "mm/engine/membership_filter.hpp"
#include "mm/engine/options.hpp"
#include "mm/engine/random.hpp"
#include "mm/engine/sizing.hpp"

namespace mm {

template <game_profile Profile>
class player_cache {
 public:
  using model_type = typename Profile::model_type;
  using pool_type = bucket_pool<model_type, id_of_model<Profile>>;

  // The random generator of the calls that take one is the engine's: bucket
  // seeds, resizes and shuffles draw from the same sequence as the queries,
  // so one seed repeats a whole run.
  explicit player_cache(const options& o) : opt_(o), present_(o.player_cache_size) {}

  const pool_type& pool() const { return pool_; }
  std::uint64_t players() const { return pool_.players(); }
  std::uint64_t filter_memory_bytes() const { return present_.memory_bytes(); }
  // Inserts refused because a new bucket would pass capacity_limit().
  std::uint64_t inserts_refused_capacity() const { return refused_; }

  template <class F>
  void for_each_player(F&& f) const {
    for (std::uint32_t b = 0; b < pool_.size(); ++b) pool_.at(b).slots.for_each(f);
  }

  // ---- Placement ----------------------------------------------------------

  // Single-entry mode: update in place, move to the bucket of `t`, or insert
  // (unless `force_insert` is off and that bucket is above
  // player_ignore_update_insert).
  update_result place(const model_type& m, const label_tuple& t, bool force_insert, rng& random) {
    const player_id id = Profile::id_of(m);
    const auto target = pool_.find(t);
    locate(id, &t, /*all=*/false);
    if (!held_.empty()) {
      if (target && held_[0] == *target) {
        pool_.at(*target).slots.insert(m);
        return {update_outcome::updated};
      }
      pool_.at(held_[0]).slots.erase(id);
      // The target bucket is already known: only create one when there is none.
      const auto destination = target ? target : bucket_for(t, random);
      if (!destination) {
        ++filter_stale_;  // no longer cached, still in the membership filter
        refused_no_capacity();
        return {update_outcome::removed};
      }
      update_result r = insert_into(*destination, m);
      r.outcome = update_outcome::bucket_changed;
      return r;
    }
    if (!force_insert && target &&
        threshold_reached(opt_.player_ignore_update_insert, pool_.at(*target).slots.fill()))
      return {update_outcome::no_op};
    const auto destination = target ? target : bucket_for(t, random);
    return destination ? insert_into(*destination, m) : refused_no_capacity();
  }

  // Multiple-entries mode: at most one entry per bucket; the player's entries
  // become exactly the buckets of `models` (the first model wins a shared
  // bucket). `labels_of(model)` gives a model's tuple. `models` is never empty
  // here (removal is explicit in this mode).
  template <class Labeler>
  update_result place_all(player_id id, std::span<const model_type> models, Labeler&& labels_of,
                          bool force_insert, rng& random) {
    locate(id, nullptr, /*all=*/true);
    const bool was_cached = !held_.empty();
    targets_.clear();
    for (const model_type& m : models) {
      const label_tuple t = labels_of(m);
      if (std::none_of(targets_.begin(), targets_.end(),
                       [&](const auto& x) { return x.first == t; }))
        targets_.emplace_back(t, &m);
    }
    bool changed = false;
    for (std::uint32_t b : held_) {
      const bool kept = std::any_of(targets_.begin(), targets_.end(),
                                    [&](const auto& x) { return x.first == pool_.at(b).labels; });
      if (!kept) {
        pool_.at(b).slots.erase(id);
        changed = true;
      }
    }
    update_result r{was_cached ? update_outcome::updated : update_outcome::no_op};
    for (const auto& [t, m] : targets_) {
      const auto b = pool_.find(t);
      if (b && pool_.at(*b).slots.contains(id)) {
        pool_.at(*b).slots.insert(*m);
        continue;
      }
      if (!force_insert && !was_cached && b &&
          threshold_reached(opt_.player_ignore_update_insert, pool_.at(*b).slots.fill()))
        continue;
      const auto destination = b ? b : bucket_for(t, random);
      if (!destination) {
        refused_no_capacity();
        continue;
      }
      r.evicted += insert_into(*destination, *m).evicted;
      changed = true;
      if (!was_cached) r.outcome = update_outcome::inserted;
    }
    if (was_cached && changed) r.outcome = update_outcome::bucket_changed;
    return r;
  }

  // Multiple-entries mode, from a snapshot: one entry put back into the bucket
  // of `t`, beside the player's other entries.
  update_result restore_one_of_many(const model_type& m, const label_tuple& t, rng& random) {
    if (const auto b = pool_.find(t); b && pool_.at(*b).slots.contains(Profile::id_of(m))) {
      pool_.at(*b).slots.insert(m);
      return {update_outcome::updated};
    }
    const auto b = bucket_for(t, random);
    return b ? insert_into(*b, m) : refused_no_capacity();
  }

  // Every entry of the player leaves the cache.
  update_result remove_all(player_id id) {
    if (id == invalid_player) return {update_outcome::rejected, 0, "player id 0 is invalid"};
    locate(id, nullptr, /*all=*/opt_.allow_multiple_entries_per_player);
    for (std::uint32_t b : held_) pool_.at(b).slots.erase(id);
    if (!held_.empty()) ++filter_stale_;
    return {held_.empty() ? update_outcome::no_op : update_outcome::removed};
  }

  // A query's winner leaves its bucket (player_remove_after_candidate_offer).
  void remove_offered(std::uint32_t bucket, player_id id) {
    pool_.at(bucket).slots.erase(id);
    ++filter_stale_;
  }

  // Drops every cached player; the plan stays.
  void clear() {
    pool_.clear();
    planned_present_ = 0;
    rebuild_filter();
  }

  // ---- Capacity -----------------------------------------------------------

  // The most bucket capacity this cache ever holds, whatever the labels:
  // player_cache_size plus a tenth. Rebalances plan at most player_cache_size;
  // the tenth is room for buckets within 10% of their plan (not rehashed) and
  // for tuples first seen between rebalances. A new tuple that finds no room
  // is not cached until a rebalance gives it a share (counted in
  // engine_stats::inserts_refused_capacity).
  std::uint64_t capacity_limit() const {
    return std::uint64_t{opt_.player_cache_size} + opt_.player_cache_size / 10;
  }
  // The capacity a bucket of this tuple is created with, before the limit.
  std::uint32_t planned_capacity(const label_tuple& t) const {
    const std::uint32_t c = plan_.capacity_of(t);
    return c ? c : opt_.bucket_initial_size;
  }

  void set_plan(capacity_plan p) {
    plan_ = std::move(p);
    recount_planned();
  }

  // The buckets as they are (labels, capacity, slot seed), for a snapshot.
  std::vector<bucket_layout> layout() const {
    std::vector<bucket_layout> out;
    out.reserve(pool_.size());
    for (std::uint32_t b = 0; b < pool_.size(); ++b) {
      const auto& e = pool_.at(b);
      out.push_back({e.labels, e.slots.capacity(), e.slots.seed()});
    }
    return out;
  }

  // Creates the buckets of a snapshot's layout before its players come back,
  // so every restored player finds the slot it had. `usable(tuple)` says
  // whether the engine's strategies could have made a tuple (another
  // profile's, or a crafted snapshot's, could not). Layouts beyond the
  // capacity limit, of a size under the smallest (smallest_bucket), or repeated are skipped
  // (their players then go to buckets created as usual).
  template <class Usable>
  void restore_layout(std::span<const bucket_layout> layouts, Usable&& usable, rng& random) {
    for (const bucket_layout& l : layouts) {
      if (!usable(l.labels)) continue;
      if (pool_.find(l.labels) || l.capacity < smallest_bucket(l.labels) ||
          pool_.capacity() + l.capacity > capacity_limit())
        continue;
      pool_.create(l.labels, l.capacity, l.seed, random);
    }
    recount_planned();
  }

  // After the plan changed: buckets whose wanted capacity moved by 10% or more
  // are resized; with `relabel`, every player is labelled again
  // (`labels_of(model)`) into fresh buckets. Empty buckets are pruned either
  // way. Planned buckets are kept first; a bucket the plan does not know
  // stays only while it fits under capacity_limit(), otherwise its players go
  // back through bucket_for. Players lost to collisions are counted in `r`.
  template <class Labeler>
  void rebuild(bool relabel, Labeler&& labels_of, rebalance_report& report, rng& random) {
    std::vector<model_type> displaced;
    auto released = pool_.release();
    std::stable_partition(released.begin(), released.end(),
                          [&](const auto& e) { return plan_.capacity_of(e->labels) != 0; });
    for (auto& e : released) {
      const bool planned = plan_.capacity_of(e->labels) != 0;
      if (relabel || (!planned && pool_.capacity() + e->slots.capacity() > capacity_limit())) {
        e->slots.for_each([&](const model_type& m) { displaced.push_back(m); });
        continue;
      }
      const std::uint32_t want = planned_capacity(e->labels);
      if (worth_resizing(e->slots.capacity(), want)) {
        report.players_lost += e->slots.resize(want, random);
        ++report.buckets_resized;
      }
      if (e->slots.count() == 0) {
        ++report.buckets_pruned;
        continue;
      }
      pool_.adopt(std::move(e));
    }
    recount_planned();
    // Insertion order decides who survives a collision: shuffle so no bucket or
    // slot position is favoured.
    std::shuffle(displaced.begin(), displaced.end(), random);
    for (const model_type& m : displaced) {
      const auto b = bucket_for(labels_of(m), random);
      report.players_lost += b ? insert_into(*b, m).evicted : (refused_no_capacity(), 1u);
    }
    recount_planned();
    rebuild_filter();
    if (relabel) report.buckets_resized = pool_.size();
  }

 private:
  // Buckets holding `id`, into held_. There is no per-player directory (memory
  // per player is the budget): the membership filter rules out most players
  // the cache does not hold, and otherwise each bucket's one possible slot is
  // probed, starting with the bucket of `near` and its MMR neighbours, where
  // an updated player usually still is.
  void locate(player_id id, const label_tuple* near, bool all) {
    held_.clear();
    if (!present_.may_contain(id)) return;
    std::uint32_t probed[3];
    std::uint32_t probed_count = 0;
    auto probe = [&](std::uint32_t b) {
      if (!pool_.at(b).slots.contains(id)) return false;
      held_.push_back(b);
      return !all;
    };
    if (near) {
      const std::uint32_t m = near->mmr_index;
      for (const label_tuple& t :
           {*near, near->with_mmr_index(m + 1), near->with_mmr_index(m > 0 ? m - 1 : m + 1)}) {
        const auto b = pool_.find(t);
        if (!b || std::find(probed, probed + probed_count, *b) != probed + probed_count) continue;
        probed[probed_count++] = *b;
        if (probe(*b)) return;
      }
    }
    for (std::uint32_t b = 0; b < pool_.size(); ++b) {
      if (std::find(probed, probed + probed_count, b) != probed + probed_count) continue;
      if (probe(b)) return;
    }
  }

  // Every insert goes through here, so the membership filter sees every id.
  //
  // Evicted and removed players stay in the filter ("stale"); an update for one
  // of them probes every bucket. The filter is rebuilt from the cache once the
  // stale ids reach 1/32 of the cache size: a rebuild reads every slot once
  // (sequentially), about 32 slot reads per eviction, while a stale hit costs a
  // random read in every bucket; with evicted players coming back, as they do
  // in a scan, rarer rebuilds measured slower (docs/performance.md).
  update_result insert_into(std::uint32_t b, const model_type& m) {
    if (present_.needs_rebuild() || filter_stale_ > opt_.player_cache_size / 32 + 1024)
      rebuild_filter();
    present_.add(Profile::id_of(m));
    const bucket_insert ins = pool_.at(b).slots.insert(m);
    const bool evicted = ins.what == bucket_insert::replaced;
    filter_stale_ += evicted;
    return {update_outcome::inserted, evicted ? 1u : 0u};
  }

  // Sized from the cache size, not from the players held at the moment of the
  // rebuild: the memory per player must not depend on when the last rebuild
  // happened (2x the players held rounded a 1M cache's filter up to 4 MiB).
  void rebuild_filter() {
    present_.reset(
        std::max<std::uint64_t>(opt_.player_cache_size, pool_.players() + pool_.players() / 4));
    for_each_player([&](const model_type& m) { present_.add(Profile::id_of(m)); });
    filter_stale_ = 0;
  }

  // The bucket of a tuple, created when there is none; nothing when a new
  // bucket would take the cache past capacity_limit(). A tuple the plan does
  // not know leaves room for the planned buckets that do not exist yet (pruned
  // while empty), so a sized tuple always gets its bucket back.
  std::optional<std::uint32_t> bucket_for(const label_tuple& t, rng& random) {
    if (const auto b = pool_.find(t)) return b;
    const std::uint32_t planned = plan_.capacity_of(t);
    std::uint64_t free = capacity_limit();
    free -= std::min(free, pool_.capacity());
    if (!planned) free -= std::min(free, plan_.total() - planned_present_);
    const auto capacity = static_cast<std::uint32_t>(
        std::min<std::uint64_t>(planned ? planned : opt_.bucket_initial_size, free));
    if (capacity < smallest_bucket(t)) return std::nullopt;
    planned_present_ += planned;
    return pool_.create(t, capacity, random);
  }

  // The smallest bucket of a tuple: bucket_min_size, or its plan when the
  // plan gives it less (capacity_plan::planned_floor); never 0.
  std::uint32_t smallest_bucket(const label_tuple& t) const {
    const std::uint32_t planned = plan_.capacity_of(t);
    return std::max(planned ? std::min(planned, opt_.bucket_min_size) : opt_.bucket_min_size, 1u);
  }

  // Planned capacity of the planned buckets that exist (see bucket_for).
  void recount_planned() {
    planned_present_ = 0;
    for (std::uint32_t b = 0; b < pool_.size(); ++b)
      planned_present_ += plan_.capacity_of(pool_.at(b).labels);
  }

  update_result refused_no_capacity() {
    ++refused_;
    return {update_outcome::no_op};
  }

  options opt_;
  std::uint64_t refused_ = 0;
  pool_type pool_;
  membership_filter present_;
  std::uint64_t filter_stale_ = 0;  // evicted or removed ids still in the filter
  capacity_plan plan_;
  std::uint64_t planned_present_ = 0;  // see recount_planned()

  // Scratch storage reused across calls so the update path does not allocate.
  std::vector<std::uint32_t> held_;
  std::vector<std::pair<label_tuple, const model_type*>> targets_;
};

}  // namespace mm
