// The matchmaking engine: one instance's whole in-memory state and every
// operation on it (SPEC §4-§8). Plain C++, single-threaded by contract: the actor
// that owns an engine is the only caller, so nothing here locks.
#pragma once

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "bucket_pool.hpp"
#include "exclusion_set.hpp"
#include "game_profile.hpp"
#include "introspection.hpp"
#include "membership_filter.hpp"
#include "mmr_strategy.hpp"
#include "options.hpp"
#include "sizing.hpp"

namespace mm {

template <game_profile Profile>
class engine {
 public:
  using model_type = typename Profile::model_type;
  using query_type = typename Profile::query_type;
  using request_type = match_request<query_type>;
  using response_type = match_response<model_type>;
  using pool_type = bucket_pool<model_type, id_of_model<Profile>>;

  // Throws config_error when the options are unusable with this profile.
  explicit engine(options o, Profile p = Profile{})
      : opt_(checked(std::move(o))),
        profile_(std::move(p)),
        rng_(opt_.random_seed ? opt_.random_seed : std::random_device{}()),
        mmr_(opt_.initial_mmr_low, opt_.initial_mmr_high, opt_.mmr_bucket_count),
        strategies_(profile_.make_strategies()),
        samples_(opt_.buckets_rebalance_sample_count,
                 static_cast<std::uint32_t>(strategies_.size())) {
    if (strategies_.size() > max_extra_strategies)
      throw config_error("a game profile may add at most " +
                         std::to_string(max_extra_strategies) + " strategies");
    for (std::size_t i = 0; i < strategies_.size(); ++i) {
      traits_.push_back({strategies_[i]->kind(), strategies_[i]->hard()});
      for (std::size_t j = 0; j < i; ++j)
        if (strategies_[j]->name() == strategies_[i]->name())
          throw config_error("two strategies are named '" + strategies_[i]->name() + "'");
    }
  }

  const options& opts() const { return opt_; }
  const Profile& profile() const { return profile_; }
  const mmr_strategy& mmr() const { return mmr_; }
  const pool_type& pool() const { return pool_; }
  const engine_stats& stats() const { return stats_; }

  // ---- Queries (SPEC §6) --------------------------------------------------

  response_type find_match(const request_type& req) {
    response_type res;
    const query_type& q = req.query;
    const player_id attacker = Profile::attacker_of(q);
    const double attack_mmr = Profile::mmr_of(q);
    if (attacker == invalid_player) return invalid(res, "attacker id 0 is invalid");
    if (!std::isfinite(attack_mmr)) return invalid(res, "attack MMR is not finite");
    if (req.excluded_player_ids.size() > opt_.max_excluded_ids)
      return invalid(res, "too many excluded ids (see max_excluded_ids)");

    excluded_.assign(attacker, req.excluded_player_ids);
    const label_tuple labels = labels_of(q);
    bucket_order<pool_type> order(pool_, labels, mmr_.position_in_slice(attack_mmr) >= 0.5,
                                  traits_, rng_, order_scratch_);
    two_lane_walk<pool_type> walk(pool_, order, rng_);

    const model_type* best = nullptr;
    std::uint32_t best_bucket = 0, possible = 0, tested = 0, bucket_index = 0;
    float best_quality = 0;
    while (tested < opt_.matching_max_search && possible < opt_.matching_candidate_amount) {
      const model_type* m = walk.template next<model_type>(bucket_index);
      if (!m) break;
      if (excluded_.contains(Profile::id_of(*m))) continue;
      ++tested;
      const match_verdict v = profile_.match(q, *m, req.num_retries);
      if (!v.possible) continue;
      ++possible;
      if (!best || v.quality > best_quality) {
        best = m;
        best_quality = v.quality;
        best_bucket = bucket_index;
      }
    }
    res.players_tested = tested;

    if (best) {
      res.type = match_type::success;
      res.best_candidate_id = Profile::id_of(*best);
      res.quality = best_quality;
      const double gap = std::abs(attack_mmr - Profile::mmr_of(*best));
      ++stats_.mmr_gap_counts[mmr_gap_slot(gap)];
      stats_.mmr_gap_sum += gap;
      if (opt_.return_model_in_response) res.model = *best;
      auto& b = pool_.at(best_bucket).slots;
      if (threshold_reached(opt_.player_remove_after_candidate_offer, b.fill())) {
        b.erase(res.best_candidate_id);
        ++stats_.removed_after_offer;
        ++filter_stale_;
      }
      ++stats_.queries_success;
      return res;
    }
    // Fake opponents only where the caller allows one: an instance set asks
    // for it at the last instance of its fallback, so a real opponent held by
    // any instance wins over a bot.
    if (opt_.enable_fake_opponents && req.allow_fake_opponent) {
      if (auto fake = profile_.fake_opponent(q)) {
        res.type = match_type::fake_opponent;
        res.best_candidate_id = Profile::id_of(*fake);
        res.model = *fake;
        ++stats_.queries_fake;
        return res;
      }
    }
    res.type = match_type::none_found;
    ++stats_.queries_none_found;
    return res;
  }

  // The "why no match" tool: the request tried with retries from its own
  // num_retries up to max_retries until one succeeds, walking as find_match does but changing nothing (no
  // removal after the offer, no statistics, no fake opponent). The rejected
  // candidates of the last try come back nearest in MMR first, with the reason
  // the match rule (or the request) gave.
  query_explanation explain(const request_type& req, std::uint32_t max_retries = 9,
                            std::size_t max_rejected = 10) {
    query_explanation out;
    const query_type& q = req.query;
    const player_id attacker = Profile::attacker_of(q);
    const double attack_mmr = Profile::mmr_of(q);
    if (attacker == invalid_player) out.error = "attacker id 0 is invalid";
    else if (!std::isfinite(attack_mmr)) out.error = "attack MMR is not finite";
    else if (req.excluded_player_ids.size() > opt_.max_excluded_ids)
      out.error = "too many excluded ids (see max_excluded_ids)";
    if (!out.error.empty()) return out;

    out.players_cached = pool_.players();
    excluded_.assign(attacker, req.excluded_player_ids);
    const label_tuple labels = labels_of(q);
    max_retries = std::max(max_retries, req.num_retries);
    for (std::uint32_t retries = req.num_retries; retries <= max_retries; ++retries) {
      const bool last_chance = retries == max_retries;
      bucket_order<pool_type> order(pool_, labels, mmr_.position_in_slice(attack_mmr) >= 0.5,
                                    traits_, rng_, order_scratch_);
      two_lane_walk<pool_type> walk(pool_, order, rng_);
      query_try t;
      t.retries = retries;
      std::vector<bool> walked(pool_.size());
      std::vector<rejected_candidate> rejected;
      std::uint32_t excluded_seen = 0, bucket_index = 0;
      const model_type* best = nullptr;
      while (t.players_tested < opt_.matching_max_search &&
             t.possible < opt_.matching_candidate_amount) {
        const model_type* m = walk.template next<model_type>(bucket_index);
        if (!m) break;
        walked[bucket_index] = true;
        const player_id id = Profile::id_of(*m);
        if (excluded_.contains(id)) {
          ++excluded_seen;
          rejected.push_back({id, Profile::mmr_of(*m), bucket_index,
                              id == attacker ? "the attacker itself" : "excluded by the request"});
          continue;
        }
        ++t.players_tested;
        const match_verdict v = profile_.match(q, *m, retries);
        if (!v.possible) {
          rejected.push_back({id, Profile::mmr_of(*m), bucket_index, rejection_reason(q, *m, retries)});
          continue;
        }
        ++t.possible;
        if (!best || v.quality > t.quality) {
          best = m;
          t.quality = v.quality;
        }
      }
      if (best) {
        t.type = match_type::success;
        t.best_candidate_id = Profile::id_of(*best);
        t.mmr_gap = std::abs(attack_mmr - Profile::mmr_of(*best));
      }
      out.tries.push_back(t);
      if (best || last_chance) {
        out.buckets_walked = static_cast<std::uint32_t>(std::count(walked.begin(), walked.end(), true));
        out.excluded_seen = excluded_seen;
        // Buckets a hard label keeps out of every order of this query.
        bucket_order<pool_type> every(pool_, labels, false, traits_, rng_, order_scratch_);
        std::uint32_t ordered = 0;
        while (every.next()) ++ordered;
        out.buckets_never_walked = pool_.size() - ordered;
        const auto nearer = [&](const rejected_candidate& a, const rejected_candidate& b) {
          return std::abs(a.mmr - attack_mmr) < std::abs(b.mmr - attack_mmr);
        };
        std::stable_sort(rejected.begin(), rejected.end(), nearer);
        if (rejected.size() > max_rejected) rejected.resize(max_rejected);
        out.rejected = std::move(rejected);
        break;
      }
    }
    return out;
  }

  // ---- Updates (SPEC §7) --------------------------------------------------

  // Player state update. No models: the player is no longer a valid target (in
  // multiple-entries mode this is ignored: removal there is explicit). An
  // unknown player is inserted unless its bucket is above
  // player_ignore_update_insert. The models are sizing samples as well, so an
  // engine fed by updates alone is sized too.
  update_result update(player_id id, std::span<const model_type> models) {
    return counted(apply_models(id, models, /*force_insert=*/false, /*sample=*/true));
  }
  update_result update(player_id id, const std::optional<model_type>& m) {
    return update(id, m ? std::span<const model_type>(&*m, 1) : std::span<const model_type>{});
  }

  // Explicit enrolment of one player: its entries become `models` (one per
  // bucket in multiple-entries mode), inserted whatever the insert threshold
  // says. Not a sizing sample: an operator's choice says nothing of the
  // player base.
  update_result enroll(std::span<const model_type> models) {
    if (models.empty()) return counted({update_outcome::rejected, 0, "no model to enroll"});
    return counted(apply_models(Profile::id_of(models[0]), models, /*force_insert=*/true,
                                /*sample=*/false));
  }
  update_result enroll(const model_type& m) { return enroll(std::span<const model_type>(&m, 1)); }

  // One cached entry from a snapshot, put back as it was: into its own bucket
  // (created with the layout of the snapshot when restore_layout() gave one),
  // beside the player's other entries in multiple-entries mode. Not a sample.
  update_result restore_entry(const model_type& m) {
    const player_id id = Profile::id_of(m);
    update_result r = check_model(id, m);
    if (r.outcome == update_outcome::rejected) return counted(r);
    if (!opt_.allow_multiple_entries_per_player) return counted(place(m, /*force_insert=*/true));
    const label_tuple t = labels_of(m);
    if (const auto b = pool_.find(t); b && pool_.at(*b).slots.contains(id)) {
      pool_.at(*b).slots.insert(m);
      return counted({update_outcome::updated});
    }
    const auto b = bucket_for(t);
    return counted(b ? insert_into(*b, m) : refused_no_capacity());
  }

  // Explicit removal: every entry of the player leaves the cache.
  update_result remove(player_id id) {
    update_result r = remove_all(id);
    count(r);
    return r;
  }

  // A stored player row (from the scan): through the model factory, into the
  // sizing samples and the cache. A malformed row is counted, never fatal.
  update_result apply_row(const player_row& row) {
    ++stats_.rows_applied;
    if (row.id == invalid_player) return malformed_row("player id 0 is invalid");
    if (!std::isfinite(row.mmr)) return malformed_row("MMR is not finite");
    if (row.is_bot && !opt_.scan_includes_bots) return counted({update_outcome::no_op});
    row_models_.clear();
    switch (profile_.make_models(row, row_models_)) {
      case row_verdict::malformed: {
        if constexpr (explains_malformed_rows<Profile>)
          report_row(row.id, profile_.explain_malformed(row));
        return malformed_row("the model factory rejected the row");
      }
      case row_verdict::not_eligible: return remove(row.id);
      case row_verdict::eligible: break;
    }
    for (const model_type& m : row_models_) {
      if (Profile::id_of(m) != row.id || !std::isfinite(Profile::mmr_of(m)))
        return malformed_row("the model factory returned a model of another id or bad MMR");
    }
    if (row_models_.empty()) return remove(row.id);
    // The scan always inserts, whatever player_ignore_update_insert says: that
    // threshold is for state updates of unknown players; replace-on-insert of
    // scanned rows is how the sample of the player base stays fresh.
    return counted(apply_models(row.id, row_models_, /*force_insert=*/true, /*sample=*/true));
  }

  // Rows of one database scan, applied in one step on the owner's thread. Rows
  // the reader could not decode arrive as a count.
  void apply_scan(std::span<const player_row> rows, std::uint64_t unreadable_rows) {
    ++stats_.scans;
    apply_rows(rows, unreadable_rows);
  }
  // Rows read some other way (the sizing sample of a cold start).
  void apply_rows(std::span<const player_row> rows, std::uint64_t unreadable_rows) {
    stats_.rows_malformed += unreadable_rows;
    for (const player_row& row : rows) apply_row(row);
  }

  // Players the next scan should fetch (SPEC §7): min + (max - min) * mean over
  // buckets of (1 - density)^2; the max while there are no buckets.
  std::uint32_t scan_fetch_count() const {
    const double lo = opt_.database_scan_min_fetch, hi = opt_.database_scan_max_fetch;
    if (pool_.size() == 0) return opt_.database_scan_max_fetch;
    double sum = 0;
    for (std::uint32_t b = 0; b < pool_.size(); ++b) {
      const double sparse = 1.0 - pool_.at(b).slots.density();
      sum += sparse * sparse;
    }
    return static_cast<std::uint32_t>(lo + (hi - lo) * sum / static_cast<double>(pool_.size()));
  }

  // ---- Sizing (SPEC §8) ----------------------------------------------------

  void add_sample(const model_type& m) {
    const double mmr = Profile::mmr_of(m);
    if (!std::isfinite(mmr)) return;
    samples_.push(static_cast<float>(mmr), labels_of(m));
    ++stats_.samples_taken;
  }

  bool enough_data() const { return samples_.enough_data(); }

  // True when a rebalance should not wait for its interval: there are enough
  // samples and either the buckets were never sized, or the samples have grown
  // tenfold since the sizing in force was made (a first sizing from ~1,000
  // samples is redone at ~10,000, then ~100,000...). Cheap: callers ask after
  // every scan and update batch.
  bool rebalance_due_early() const {
    if (!samples_.enough_data()) return false;
    if (last_rebalance_ms_ == 0 || sizing_.empty()) return true;
    return samples_.size() >= 10 * std::max<std::uint64_t>(sizing_.sample_count, 1);
  }
  std::size_t sample_count() const { return samples_.size(); }
  std::size_t sample_memory_bytes() const { return samples_.memory_bytes(); }
  const sizing_model& sizing() const { return sizing_; }
  std::int64_t last_rebalance_unix_ms() const { return last_rebalance_ms_; }

  // Re-derives the MMR range and the sizing model from the samples, then resizes,
  // relabels and prunes buckets. Players lost to collisions are counted.
  rebalance_report rebalance(std::int64_t now_unix_ms) {
    rebalance_report r;
    r.samples = samples_.size();
    r.buckets_before = pool_.size();
    r.players_before = pool_.players();
    if (!samples_.enough_data()) {
      r.reason = "not enough samples: " + std::to_string(samples_.size()) + " of more than " +
                 std::to_string(std::min<std::size_t>(samples_.capacity() / 10, 1000)) +
                 " needed";
      return r;
    }
    const auto range = mmr_.rebalance(samples_.mmrs(), opt_.mmr_range_low_percentile,
                                      opt_.mmr_range_high_percentile);
    for (std::uint32_t s = 0; s < strategies_.size(); ++s)
      strategies_[s]->rebalance(samples_.extra_column(s));
    set_sizing(measure_sizing(now_unix_ms));
    rebuild(range.changed, r);
    r.mmr_range_changed = range.changed;
    return finish_rebalance(now_unix_ms, r);
  }

  // Resizes the buckets to the current sizing model without new samples: after a
  // restore whose player_cache_size differs from the persisted one (capacities
  // are the model's shares of the cache size in force).
  rebalance_report resize_to_sizing(std::int64_t now_unix_ms) {
    rebalance_report r;
    r.samples = samples_.size();
    r.buckets_before = pool_.size();
    r.players_before = pool_.players();
    rebuild(/*relabel=*/false, r);
    return finish_rebalance(now_unix_ms, r);
  }

  // Back to the state of a new engine (stats aside): no players, no samples,
  // no sizing model, the initial MMR range, fresh strategies.
  void reset() {
    pool_.clear();
    samples_.clear();
    set_sizing({});
    mmr_.set_range(opt_.initial_mmr_low, opt_.initial_mmr_high);
    strategies_ = profile_.make_strategies();
    last_rebalance_ms_ = 0;
    rebuild_filter();
  }

  // Drops every cached player; the sizing model, MMR range and samples stay.
  void clear() {
    pool_.clear();
    planned_present_ = 0;
    rebuild_filter();
  }

  // ---- Labels ----------------------------------------------------------------

  label_tuple labels_of(const model_type& m) const { return labels_for(m); }
  label_tuple labels_of(const query_type& q) const { return labels_for(q); }
  std::vector<std::string> describe(const label_tuple& t) const {
    std::vector<std::string> out;
    out.push_back("mmr#" + std::to_string(t.mmr_index));
    for (std::uint32_t s = 0; s < t.extra_count; ++s)
      out.push_back(strategies_[s]->describe(t.extra[s]));
    return out;
  }

  // ---- Introspection (SPEC §10) -----------------------------------------------

  engine_info info() const {
    engine_info i;
    i.name = opt_.name;
    i.players = pool_.players();
    i.capacity = pool_.capacity();
    i.overall_fill = i.capacity ? static_cast<double>(i.players) / i.capacity : 0.0;
    i.bucket_count = pool_.size();
    for (std::uint32_t b = 0; b < pool_.size(); ++b) i.buckets.push_back(bucket_view(b));
    i.mmr_low = mmr_.low();
    i.mmr_high = mmr_.high();
    i.samples = samples_.size();
    i.enough_data_for_rebalance = samples_.enough_data();
    i.last_rebalance_unix_ms = last_rebalance_ms_;
    i.memory_bytes =
        samples_.memory_bytes() + present_.memory_bytes() + i.capacity * sizeof(model_type);
    i.stats = stats_;
    i.row_reports.assign(row_reports_.begin(), row_reports_.end());
    return i;
  }

  bucket_info bucket_view(std::uint32_t b) const {
    const auto& e = pool_.at(b);
    return {b,
            describe(e.labels),
            mmr_.slice_low(e.labels.mmr_index),
            mmr_.slice_high(e.labels.mmr_index),
            e.slots.count(),
            e.slots.capacity(),
            e.slots.fill()};
  }

  player_info player(player_id id) const {
    player_info p;
    if (id == invalid_player) return p;
    for (std::uint32_t b = 0; b < pool_.size(); ++b) {
      if (const model_type* m = pool_.at(b).slots.find(id)) {
        p.participating = true;
        p.mmr = Profile::mmr_of(*m);
        p.buckets.push_back(b);
      }
    }
    if (!p.participating) return p;
    std::uint64_t at_or_below = 0, all = 0;
    for_each_player([&](const model_type& m) {
      ++all;
      if (Profile::mmr_of(m) <= p.mmr) ++at_or_below;
    });
    p.percentile = static_cast<double>(at_or_below) / all;
    return p;
  }

  // One page of a bucket's players, MMR descending; empty for an unknown bucket.
  std::vector<model_type> inspect_bucket(std::uint32_t b, std::uint32_t offset,
                                         std::uint32_t limit) const {
    std::vector<model_type> all;
    if (b >= pool_.size()) return all;
    pool_.at(b).slots.for_each([&](const model_type& m) { all.push_back(m); });
    std::sort(all.begin(), all.end(), by_mmr_descending);
    if (offset >= all.size()) return {};
    const auto end = std::min<std::size_t>(all.size(), std::size_t{offset} + limit);
    return {all.begin() + offset, all.begin() + static_cast<std::ptrdiff_t>(end)};
  }

  std::vector<model_type> top_by_mmr(std::uint32_t n) const {
    std::vector<const model_type*> all;
    for_each_player([&](const model_type& m) { all.push_back(&m); });
    const std::size_t k = std::min<std::size_t>(n, all.size());
    std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k), all.end(),
                      [](const model_type* a, const model_type* b) {
                        return by_mmr_descending(*a, *b);
                      });
    std::vector<model_type> out;
    for (std::size_t i = 0; i < k; ++i) out.push_back(*all[i]);
    return out;
  }

  template <class F>
  void for_each_player(F&& f) const {
    for (std::uint32_t b = 0; b < pool_.size(); ++b) pool_.at(b).slots.for_each(f);
  }

  // ---- Persistence seams (the snapshot codec lives with the store) ----------

  // Up to `max` cached entries, taken from every bucket in proportion to its count.
  std::vector<model_type> proportional_sample(std::uint32_t max) const {
    std::vector<model_type> out;
    const std::uint64_t total = pool_.players();
    if (total == 0 || max == 0) return out;
    const double share = std::min(1.0, static_cast<double>(max) / total);
    double carry = 0;
    for (std::uint32_t b = 0; b < pool_.size(); ++b) {
      const auto& slots = pool_.at(b).slots;
      carry += slots.count() * share;
      auto quota = static_cast<std::uint64_t>(carry);
      carry -= quota;
      slots.for_each([&](const model_type& m) {
        if (quota > 0 && out.size() < max) {
          out.push_back(m);
          --quota;
        }
      });
    }
    return out;
  }

  void restore_sizing(sizing_model s, std::int64_t last_rebalance_unix_ms) {
    mmr_.set_range(s.mmr_low, s.mmr_high);
    set_sizing(std::move(s));
    last_rebalance_ms_ = last_rebalance_unix_ms;
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
  // so every restored player finds the slot it had. Layouts beyond the
  // capacity limit, of a size under the minimum, or repeated are skipped
  // (their players then go to buckets created as usual).
  void restore_layout(std::span<const bucket_layout> layouts) {
    for (const bucket_layout& l : layouts) {
      // A tuple this engine's strategies cannot have made (another profile's,
      // or a crafted snapshot's) is skipped: describe() and the walk index the
      // strategies by the tuple's labels.
      if (l.labels.extra_count != strategies_.size() || l.labels.mmr_index >= opt_.mmr_bucket_count)
        continue;
      if (pool_.find(l.labels) || l.capacity < opt_.bucket_min_size ||
          pool_.capacity() + l.capacity > capacity_limit())
        continue;
      pool_.create(l.labels, l.capacity, l.seed, rng_);
    }
    recount_planned();
  }

  // The most bucket capacity this engine ever holds, whatever the labels:
  // player_cache_size plus a tenth. Rebalances plan at most player_cache_size;
  // the tenth is room for buckets within 10% of their plan (not rehashed) and
  // for tuples first seen between rebalances. A new tuple that finds no room
  // is not cached until a rebalance gives it a share (counted in
  // stats().inserts_refused_capacity).
  std::uint64_t capacity_limit() const {
    return std::uint64_t{opt_.player_cache_size} + opt_.player_cache_size / 10;
  }
  // The capacity a bucket of this tuple is created with, before the limit.
  std::uint32_t planned_capacity(const label_tuple& t) const {
    const std::uint32_t c = plan_.capacity_of(t);
    return c ? c : opt_.bucket_initial_size;
  }

  // (strategy name, state bytes), the MMR strategy first under the name "mmr".
  std::vector<std::pair<std::string, std::string>> strategy_states() const {
    std::vector<std::pair<std::string, std::string>> out{{"mmr", mmr_.save_state()}};
    for (auto& s : strategies_) out.emplace_back(s->name(), s->save_state());
    return out;
  }
  // Restores one strategy's state by name; false when no strategy has that name.
  // Throws std::runtime_error when the bytes cannot be read.
  bool restore_strategy_state(const std::string& name, const std::string& bytes) {
    if (name == "mmr") {
      mmr_.load_state(bytes);
      return true;
    }
    for (auto& s : strategies_)
      if (s->name() == name) {
        s->load_state(bytes);
        return true;
      }
    return false;
  }

 private:
  // Model or query: both have an MMR and a label per strategy.
  template <class T>
  label_tuple labels_for(const T& x) const {
    label_tuple t;
    t.mmr_index = mmr_.index_of(Profile::mmr_of(x));
    t.extra_count = static_cast<std::uint32_t>(strategies_.size());
    for (std::uint32_t s = 0; s < t.extra_count; ++s) t.extra[s] = strategies_[s]->label_of(x);
    return t;
  }

  rebalance_report& finish_rebalance(std::int64_t now_unix_ms, rebalance_report& r) {
    last_rebalance_ms_ = now_unix_ms;
    ++stats_.rebalances;
    stats_.players_lost_in_rebalance += r.players_lost;
    r.performed = true;
    r.mmr_low = mmr_.low();
    r.mmr_high = mmr_.high();
    r.buckets_after = pool_.size();
    r.players_after = pool_.players();
    r.capacity_after = pool_.capacity();
    return r;
  }

  std::string rejection_reason(const query_type& q, const model_type& m,
                               std::uint32_t retries) const {
    if constexpr (explains_rejections<Profile>) return profile_.explain_rejection(q, m, retries);
    else return "the match rule rejected it";
  }

  static options checked(options o) {
    validate(o, {Profile::multiple_models_per_player, Profile::has_fake_opponents});
    return o;
  }

  static bool by_mmr_descending(const model_type& a, const model_type& b) {
    const double ma = Profile::mmr_of(a), mb = Profile::mmr_of(b);
    return ma != mb ? ma > mb : Profile::id_of(a) < Profile::id_of(b);
  }

  response_type& invalid(response_type& res, std::string_view why) {
    res.type = match_type::invalid_request;
    res.error = why;
    ++stats_.queries_invalid;
    return res;
  }

  // Keeps the latest few explanations of unusable rows for introspection.
  void report_row(player_id id, std::string why) {
    if (row_reports_.size() == max_row_reports) row_reports_.erase(row_reports_.begin());
    row_reports_.push_back("player " + std::to_string(id) + ": " + std::move(why));
  }
  static constexpr std::size_t max_row_reports = 10;

  update_result malformed_row(std::string_view why) {
    ++stats_.rows_malformed;
    return counted({update_outcome::rejected, 0, why});
  }

  update_result counted(update_result r) {
    count(r);
    return r;
  }

  void count(const update_result& r) {
    stats_.evictions += r.evicted;
    switch (r.outcome) {
      case update_outcome::inserted: ++stats_.updates_inserted; break;
      case update_outcome::updated: ++stats_.updates_updated; break;
      case update_outcome::bucket_changed: ++stats_.updates_bucket_changed; break;
      case update_outcome::removed: ++stats_.updates_removed; break;
      case update_outcome::no_op: ++stats_.updates_no_op; break;
      case update_outcome::rejected: ++stats_.updates_rejected; break;
    }
  }

  static update_result check_model(player_id id, const model_type& m) {
    if (id == invalid_player) return {update_outcome::rejected, 0, "player id 0 is invalid"};
    if (Profile::id_of(m) != id)
      return {update_outcome::rejected, 0, "the model's id differs from the update's"};
    if (!std::isfinite(Profile::mmr_of(m)))
      return {update_outcome::rejected, 0, "MMR is not finite"};
    return {};
  }

  // Buckets holding `id`, into held_. There is no per-player directory (memory per
  // player is the budget): the membership filter rules out most players the
  // cache does not hold, and otherwise each bucket's one possible slot is
  // probed, starting with the bucket of `near` and its MMR neighbours, where an
  // updated player usually still is.
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
      for (const label_tuple& t : {*near, near->with_mmr_index(m + 1),
                                   near->with_mmr_index(m > 0 ? m - 1 : m + 1)}) {
        const auto b = pool_.find(t);
        if (!b || std::find(probed, probed + probed_count, *b) != probed + probed_count)
          continue;
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
    present_.reset(std::max<std::uint64_t>(opt_.player_cache_size,
                                           pool_.players() + pool_.players() / 4));
    for_each_player([&](const model_type& m) { present_.add(Profile::id_of(m)); });
    filter_stale_ = 0;
  }


  // The bucket of a tuple, created when there is none; nothing when a new
  // bucket would take the engine past capacity_limit(). A tuple the plan does
  // not know leaves room for the planned buckets that do not exist yet (pruned
  // while empty), so a sized tuple always gets its bucket back.
  std::optional<std::uint32_t> bucket_for(const label_tuple& t) {
    if (const auto b = pool_.find(t)) return b;
    const std::uint32_t planned = plan_.capacity_of(t);
    std::uint64_t free = capacity_limit();
    free -= std::min(free, pool_.capacity());
    if (!planned) free -= std::min(free, plan_.total() - planned_present_);
    const auto capacity = static_cast<std::uint32_t>(
        std::min<std::uint64_t>(planned ? planned : opt_.bucket_initial_size, free));
    if (capacity < std::max(opt_.bucket_min_size, 1u)) return std::nullopt;
    planned_present_ += planned;
    return pool_.create(t, capacity, rng_);
  }

  // Planned capacity of the planned buckets that exist (see bucket_for).
  void recount_planned() {
    planned_present_ = 0;
    for (std::uint32_t b = 0; b < pool_.size(); ++b)
      planned_present_ += plan_.capacity_of(pool_.at(b).labels);
  }

  update_result refused_no_capacity() {
    ++stats_.inserts_refused_capacity;
    return {update_outcome::no_op};
  }

  void set_sizing(sizing_model s) {
    sizing_ = std::move(s);
    plan_ = capacity_plan(sizing_, opt_);
    recount_planned();
  }

  // Every update, enrolment and scanned row: the models are checked, sampled
  // when asked, and placed.
  update_result apply_models(player_id id, std::span<const model_type> models, bool force_insert,
                             bool sample) {
    if (models.empty())
      return opt_.allow_multiple_entries_per_player ? update_result{update_outcome::no_op}
                                                    : remove_all(id);
    for (const model_type& m : models) {
      update_result r = check_model(id, m);
      if (r.outcome == update_outcome::rejected) return r;
    }
    if (sample)
      for (const model_type& m : models) add_sample(m);
    return opt_.allow_multiple_entries_per_player ? update_multi(id, models, force_insert)
                                                  : place(models[0], force_insert);
  }

  // Single-entry placement: update in place, move, or insert.
  update_result place(const model_type& m, bool force_insert) {
    const player_id id = Profile::id_of(m);
    const label_tuple t = labels_of(m);
    const auto target = pool_.find(t);
    locate(id, &t, /*all=*/false);
    if (!held_.empty()) {
      if (target && held_[0] == *target) {
        pool_.at(*target).slots.insert(m);
        return {update_outcome::updated};
      }
      pool_.at(held_[0]).slots.erase(id);
      // The target bucket is already known: only create one when there is none.
      const auto destination = target ? target : bucket_for(t);
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
    const auto destination = target ? target : bucket_for(t);
    return destination ? insert_into(*destination, m) : refused_no_capacity();
  }

  update_result remove_all(player_id id) {
    if (id == invalid_player) return {update_outcome::rejected, 0, "player id 0 is invalid"};
    locate(id, nullptr, /*all=*/opt_.allow_multiple_entries_per_player);
    for (std::uint32_t b : held_) pool_.at(b).slots.erase(id);
    if (!held_.empty()) ++filter_stale_;
    return {held_.empty() ? update_outcome::no_op : update_outcome::removed};
  }

  // Multiple entries: at most one entry per bucket; the player's entries become
  // exactly the buckets of the new models (the first model wins a shared bucket).
  // An empty `models` never comes here (removal is explicit in this mode).
  update_result update_multi(player_id id, std::span<const model_type> models,
                             bool force_insert) {
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
      const auto destination = b ? b : bucket_for(t);
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

  sizing_model measure_sizing(std::int64_t now_unix_ms) const {
    sizing_model s;
    s.mmr_low = mmr_.low();
    s.mmr_high = mmr_.high();
    s.player_cache_size = opt_.player_cache_size;
    s.sample_count = samples_.size();
    s.computed_at_unix_ms = now_unix_ms;
    std::unordered_map<label_tuple, std::uint64_t, label_tuple_hash> counts;
    const auto mmrs = samples_.mmrs();
    for (std::size_t i = 0; i < mmrs.size(); ++i) {
      label_tuple t;
      t.mmr_index = mmr_.index_of(mmrs[i]);
      t.extra_count = static_cast<std::uint32_t>(strategies_.size());
      for (std::uint32_t k = 0; k < t.extra_count; ++k)
        t.extra[k] = samples_.extra(i, k);
      ++counts[t];
    }
    for (auto& [t, n] : counts) s.ratios.emplace(t, static_cast<double>(n) / mmrs.size());
    return s;
  }

  // After the sizing model changed: buckets whose wanted capacity moved by 10% or
  // more are resized; when the MMR range moved, every player is relabelled into
  // fresh buckets. Empty buckets are pruned either way. Planned buckets are
  // kept first; a bucket the plan does not know stays only while it fits under
  // capacity_limit(), otherwise its players go back through bucket_for.
  void rebuild(bool relabel, rebalance_report& r) {
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
        r.players_lost += e->slots.resize(want, rng_);
        ++r.buckets_resized;
      }
      if (e->slots.count() == 0) {
        ++r.buckets_pruned;
        continue;
      }
      pool_.adopt(std::move(e));
    }
    recount_planned();
    // Insertion order decides who survives a collision: shuffle so no bucket or
    // slot position is favoured.
    std::shuffle(displaced.begin(), displaced.end(), rng_);
    for (const model_type& m : displaced) {
      const auto b = bucket_for(labels_of(m));
      r.players_lost += b ? insert_into(*b, m).evicted : (refused_no_capacity(), 1u);
    }
    recount_planned();
    rebuild_filter();
    if (relabel) r.buckets_resized = pool_.size();
  }

  options opt_;
  Profile profile_;
  rng rng_;
  mmr_strategy mmr_;
  std::vector<std::unique_ptr<strategy<Profile>>> strategies_;
  std::vector<strategy_traits> traits_;
  pool_type pool_;
  membership_filter present_{opt_.player_cache_size};
  std::uint64_t filter_stale_ = 0;  // evicted or removed ids still in the filter
  sample_fifo samples_;
  sizing_model sizing_;
  capacity_plan plan_;  // derived from sizing_ (set_sizing keeps them together)
  std::uint64_t planned_present_ = 0;  // see recount_planned()
  std::int64_t last_rebalance_ms_ = 0;
  engine_stats stats_;

  // Scratch storage reused across calls so the hot paths do not allocate.
  exclusion_set excluded_;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> order_scratch_;
  std::vector<std::uint32_t> held_;
  std::vector<std::pair<label_tuple, const model_type*>> targets_;
  std::vector<model_type> row_models_;
  std::vector<std::string> row_reports_;
};

}  // namespace mm
