// The matchmaking engine: one instance's whole in-memory state and every
// operation on it (docs/design.md). Plain C++, single-threaded by contract: the actor
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

#include "mm/engine/bucket_pool.hpp"
#include "mm/engine/candidate_search.hpp"
#include "mm/engine/engine_observer.hpp"
#include "mm/engine/exclusion_set.hpp"
#include "mm/engine/game_profile.hpp"
#include "mm/engine/introspection.hpp"
#include "mm/engine/model_check.hpp"
#include "mm/engine/options.hpp"
#include "mm/engine/player_cache.hpp"
#include "mm/engine/sizing.hpp"
#include "mm/strategies/mmr_strategy.hpp"

namespace mm {

template <game_profile Profile>
class engine {
 public:
  using model_type = typename Profile::model_type;
  using query_type = typename Profile::query_type;
  using request_type = match_request<query_type>;
  using response_type = match_response<model_type>;
  using pool_type = typename player_cache<Profile>::pool_type;

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
      throw config_error("a game profile may add at most " + std::to_string(max_extra_strategies) +
                         " strategies");
    for (std::size_t i = 0; i < strategies_.size(); ++i) {
      traits_.push_back({strategies_[i]->kind(), strategies_[i]->hard()});
      for (std::size_t j = 0; j < i; ++j)
        if (strategies_[j]->name() == strategies_[i]->name())
          throw config_error("two strategies are named '" + strategies_[i]->name() + "'");
    }
  }

  const options& opts() const { return opt_; }
  const Profile& profile() const { return profile_; }

  // A new profile: without `rebuild` bucketing as the old one (only how a
  // candidate is judged changes); with it the engine starts over as a new one
  // (stats and observer kept; a scan refills it). Throws config_error, unchanged.
  void set_profile(Profile p, bool rebuild) {
    if (!rebuild) {
      profile_ = std::move(p);
      return;
    }
    engine fresh(opt_, std::move(p));
    fresh.stats_ = stats_;
    fresh.observer_ = observer_;
    *this = std::move(fresh);
  }
  const mmr_strategy& mmr() const { return mmr_; }
  const pool_type& pool() const { return cache_.pool(); }
  engine_stats stats() const {
    engine_stats s = stats_;
    s.inserts_refused_capacity = cache_.inserts_refused_capacity();
    return s;
  }
  // How each extra strategy compares labels (kind, hard), in label order.
  std::span<const strategy_traits> traits() const { return traits_; }

  // ---- Queries (docs/design.md, Queries) -----------------------------------

  response_type find_match(const request_type& req) {
    response_type res = answer(req);
    if (observer_) observer_->answered(req, res);
    return res;
  }

  // Sees every query answered and every change asked of the cache from now
  // on (engine_observer.hpp); null: none. Not thread-safe: set it before the
  // engine is shared.
  void set_observer(std::shared_ptr<engine_observer<Profile>> o) { observer_ = std::move(o); }

 private:
  response_type answer(const request_type& req) {
    response_type res;
    if (const std::string_view why = request_error(req); !why.empty()) return invalid(res, why);
    const query_type& q = req.query;
    excluded_.assign(Profile::attacker_of(q), req.excluded_player_ids);
    bucket_order<pool_type> order = order_for(q, rng_);
    const auto found = search_candidates(pool(), profile_, q, req.num_retries, order, excluded_,
                                         limits(), rng_, ignore_candidates{});
    res.players_tested = found.tested;

    if (found.best) {
      res.type = match_type::success;
      res.best_candidate_id = Profile::id_of(*found.best);
      res.quality = found.best_quality;
      const double gap = std::abs(Profile::mmr_of(q) - Profile::mmr_of(*found.best));
      ++stats_.mmr_gap_counts[mmr_gap_slot(gap)];
      stats_.mmr_gap_sum += gap;
      if (opt_.return_model_in_response) res.model = *found.best;
      if (threshold_reached(opt_.player_remove_after_candidate_offer,
                            pool().at(found.best_bucket).slots.fill())) {
        cache_.remove_offered(found.best_bucket, res.best_candidate_id);
        ++stats_.removed_after_offer;
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

 public:
  // The "why no match" tool: the request tried with retries from its own
  // num_retries up to max_retries until one succeeds, through the same
  // candidate search as find_match, changing nothing: no removal after the
  // offer, no statistics, no fake opponent, and the walks draw from a copy of
  // the engine's generator, so the queries after it go exactly as they would
  // have. The rejected candidates of the last try come back nearest in MMR
  // first, with the reason the match rule (or the request) gave.
  query_explanation explain(const request_type& req, std::uint32_t max_retries = 9,
                            std::size_t max_rejected = 10);

  // ---- Updates (docs/design.md, Freshness) ---------------------------------

  // Player state update. No models: the player is no longer a valid target (in
  // multiple-entries mode this is ignored: removal there is explicit). An
  // unknown player is inserted unless its bucket is above
  // player_ignore_update_insert. The models are sizing samples as well, so an
  // engine fed by updates alone is sized too.
  update_result update(player_id id, std::span<const model_type> models) {
    if (observer_) observer_->updated(id, models);
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
    if (observer_) observer_->enrolled(models);
    return counted(apply_models(Profile::id_of(models[0]), models, /*force_insert=*/true,
                                /*sample=*/false));
  }
  update_result enroll(const model_type& m) { return enroll(std::span<const model_type>(&m, 1)); }

  // One cached entry from a snapshot, put back as it was: into its own bucket
  // (created with the layout of the snapshot when restore_layout() gave one),
  // beside the player's other entries in multiple-entries mode. Not a sample.
  update_result restore_entry(const model_type& m) {
    const player_id id = Profile::id_of(m);
    update_result r = check_model<Profile>(id, m);
    if (r.outcome == update_outcome::rejected) return counted(r);
    if (!opt_.allow_multiple_entries_per_player)
      return counted(cache_.place(m, labels_of(m), /*force_insert=*/true, rng_));
    return counted(cache_.restore_one_of_many(m, labels_of(m), rng_));
  }

  // Explicit removal: every entry of the player leaves the cache.
  update_result remove(player_id id) {
    if (observer_) observer_->removed(id);
    return counted(cache_.remove_all(id));
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
      case row_verdict::not_eligible:
        return remove(row.id);
      case row_verdict::eligible:
        break;
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
    const std::uint64_t before = pool().players();
    apply_rows(rows, unreadable_rows);
    const std::uint64_t after = pool().players();
    if (!rows.empty())
      scan_yield_ = std::max(min_scan_yield, static_cast<double>(after - std::min(after, before)) /
                                                 static_cast<double>(rows.size()));
    removals_at_last_scan_ = removals();
  }
  // Rows read some other way (the sizing sample of a cold start).
  void apply_rows(std::span<const player_row> rows, std::uint64_t unreadable_rows) {
    stats_.rows_malformed += unreadable_rows;
    for (const player_row& row : rows) apply_row(row);
  }

  // Players the next scan should fetch (docs/design.md, Freshness): the larger
  // of a density term, min + (max - min) * mean over buckets of
  // (1 - density)^2, and a removal term, the players removed since the last
  // scan (state updates, remove, offers) divided by the last scan's yield
  // (players it added to the cache per row read, at least 1/20): that many
  // rows put back about as many players as left. At most max; the max while
  // there are no buckets.
  std::uint32_t scan_fetch_count() const {
    const double lo = opt_.database_scan_min_fetch, hi = opt_.database_scan_max_fetch;
    if (pool().size() == 0) return opt_.database_scan_max_fetch;
    double sum = 0;
    for (std::uint32_t b = 0; b < pool().size(); ++b) {
      const double sparse = 1.0 - pool().at(b).slots.density();
      sum += sparse * sparse;
    }
    const double by_density = lo + (hi - lo) * sum / static_cast<double>(pool().size());
    const double by_removals =
        static_cast<double>(removals() - removals_at_last_scan_) / scan_yield_;
    return static_cast<std::uint32_t>(std::min(hi, std::max(by_density, by_removals)));
  }

  // ---- Sizing (docs/design.md, Sizing) -------------------------------------

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
    r.buckets_before = pool().size();
    r.players_before = pool().players();
    if (!samples_.enough_data()) {
      r.reason = "not enough samples: " + std::to_string(samples_.size()) + " of more than " +
                 std::to_string(std::min<std::size_t>(samples_.capacity() / 10, 1000)) + " needed";
      return r;
    }
    const auto range = mmr_.rebalance(samples_.mmrs(), opt_.mmr_range_low_percentile,
                                      opt_.mmr_range_high_percentile);
    for (std::uint32_t s = 0; s < strategies_.size(); ++s)
      strategies_[s]->rebalance(samples_.extra_column(s));
    set_sizing(measure_sizing(
        samples_, [&](double mmr) { return mmr_.index_of(mmr); },
        static_cast<std::uint32_t>(strategies_.size()), mmr_.low(), mmr_.high(),
        opt_.player_cache_size, now_unix_ms));
    cache_.rebuild(
        range.changed, [&](const model_type& m) { return labels_of(m); }, r, rng_);
    r.mmr_range_changed = range.changed;
    return finish_rebalance(now_unix_ms, r);
  }

  // Resizes the buckets to the current sizing model without new samples: after a
  // restore whose player_cache_size differs from the persisted one (capacities
  // are the model's shares of the cache size in force).
  rebalance_report resize_to_sizing(std::int64_t now_unix_ms) {
    rebalance_report r;
    r.samples = samples_.size();
    r.buckets_before = pool().size();
    r.players_before = pool().players();
    cache_.rebuild(/*relabel=*/false, [&](const model_type& m) { return labels_of(m); }, r, rng_);
    return finish_rebalance(now_unix_ms, r);
  }

  // Back to the state of a new engine (stats aside): no players, no samples,
  // no sizing model, the initial MMR range, fresh strategies.
  void reset() {
    cache_.clear();
    samples_.clear();
    set_sizing({});
    mmr_.set_range(opt_.initial_mmr_low, opt_.initial_mmr_high);
    strategies_ = profile_.make_strategies();
    last_rebalance_ms_ = 0;
  }

  // Drops every cached player; the sizing model, MMR range and samples stay.
  void clear() { cache_.clear(); }

  // ---- Labels ----------------------------------------------------------------

  label_tuple labels_of(const model_type& m) const { return labels_for(m); }
  label_tuple labels_of(const query_type& q) const { return labels_for(q); }
  std::vector<std::string> describe(const label_tuple& t) const;

  // ---- Introspection (docs/design.md, Introspection; engine_introspection.hpp)

  engine_info info() const;
  bucket_info bucket_view(std::uint32_t b) const;
  player_info player(player_id id) const;
  // One page of a bucket's players, MMR descending; empty for an unknown bucket.
  std::vector<model_type> inspect_bucket(std::uint32_t b, std::uint32_t offset,
                                         std::uint32_t limit) const;
  std::vector<model_type> top_by_mmr(std::uint32_t n) const;

  template <class F>
  void for_each_player(F&& f) const {
    cache_.for_each_player(std::forward<F>(f));
  }

  // ---- Persistence seams (the snapshot codec lives with the store) ----------

  // Up to `max` cached entries, taken from every bucket in proportion to its count.
  std::vector<model_type> proportional_sample(std::uint32_t max) const {
    std::vector<model_type> out;
    const std::uint64_t total = pool().players();
    if (total == 0 || max == 0) return out;
    const double share = std::min(1.0, static_cast<double>(max) / total);
    double carry = 0;
    for (std::uint32_t b = 0; b < pool().size(); ++b) {
      const auto& slots = pool().at(b).slots;
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
  std::vector<bucket_layout> layout() const { return cache_.layout(); }
  // Creates the buckets of a snapshot's layout before its players come back
  // (player_cache::restore_layout). A tuple this engine's strategies cannot
  // have made (another profile's, or a crafted snapshot's) is skipped:
  // describe() and the walk index the strategies by the tuple's labels.
  void restore_layout(std::span<const bucket_layout> layouts) {
    cache_.restore_layout(
        layouts,
        [&](const label_tuple& t) {
          return t.extra_count == strategies_.size() && t.mmr_index < opt_.mmr_bucket_count;
        },
        rng_);
  }

  // The most bucket capacity this engine ever holds (player_cache::capacity_limit).
  std::uint64_t capacity_limit() const { return cache_.capacity_limit(); }
  // The capacity a bucket of this tuple is created with, before the limit.
  std::uint32_t planned_capacity(const label_tuple& t) const { return cache_.planned_capacity(t); }

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
    r.buckets_after = pool().size();
    r.players_after = pool().players();
    r.capacity_after = pool().capacity();
    return r;
  }

  // Why a request cannot be served; empty when it can.
  std::string_view request_error(const request_type& req) const {
    if (Profile::attacker_of(req.query) == invalid_player) return "attacker id 0 is invalid";
    if (!std::isfinite(Profile::mmr_of(req.query))) return "attack MMR is not finite";
    if (req.excluded_player_ids.size() > opt_.max_excluded_ids)
      return "too many excluded ids (see max_excluded_ids)";
    return {};
  }

  // The buckets a query visits, nearest first; ties are broken with `r`.
  bucket_order<pool_type> order_for(const query_type& q, rng& r) {
    return bucket_order<pool_type>(pool(), labels_of(q),
                                   mmr_.position_in_slice(Profile::mmr_of(q)) >= 0.5, traits_, r,
                                   order_scratch_);
  }

  search_limits limits() const {
    return {opt_.matching_max_search, opt_.matching_candidate_amount};
  }

  std::string rejection_reason(const query_type& q, const model_type& m,
                               std::uint32_t retries) const {
    if constexpr (explains_rejections<Profile>)
      return profile_.explain_rejection(q, m, retries);
    else
      return "the match rule rejected it";
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
      case update_outcome::inserted:
        ++stats_.updates_inserted;
        break;
      case update_outcome::updated:
        ++stats_.updates_updated;
        break;
      case update_outcome::bucket_changed:
        ++stats_.updates_bucket_changed;
        break;
      case update_outcome::removed:
        ++stats_.updates_removed;
        break;
      case update_outcome::no_op:
        ++stats_.updates_no_op;
        break;
      case update_outcome::rejected:
        ++stats_.updates_rejected;
        break;
    }
  }

  void set_sizing(sizing_model s) {
    sizing_ = std::move(s);
    cache_.set_plan(capacity_plan(sizing_, opt_));
  }

  // Every update, enrolment and scanned row: the models are checked, sampled
  // when asked, and placed.
  update_result apply_models(player_id id, std::span<const model_type> models, bool force_insert,
                             bool sample) {
    if (models.empty())
      return opt_.allow_multiple_entries_per_player ? update_result{update_outcome::no_op}
                                                    : cache_.remove_all(id);
    for (const model_type& m : models) {
      update_result r = check_model<Profile>(id, m);
      if (r.outcome == update_outcome::rejected) return r;
    }
    if (sample)
      for (const model_type& m : models) add_sample(m);
    if (opt_.allow_multiple_entries_per_player)
      return cache_.place_all(
          id, models, [&](const model_type& m) { return labels_of(m); }, force_insert, rng_);
    return cache_.place(models[0], labels_of(models[0]), force_insert, rng_);
  }

  options opt_;
  Profile profile_;
  rng rng_;
  mmr_strategy mmr_;
  std::vector<std::unique_ptr<strategy<Profile>>> strategies_;
  std::vector<strategy_traits> traits_;
  engine_stats stats_;
  player_cache<Profile> cache_{opt_};
  sample_fifo samples_;
  sizing_model sizing_;
  std::int64_t last_rebalance_ms_ = 0;
  std::uint64_t removals_at_last_scan_ = 0;  // removals() when the last scan was applied
  // Players the last scan added to the cache per row it read (scan_fetch_count).
  static constexpr double min_scan_yield = 0.05;
  double scan_yield_ = 1.0;

  // Players that left the cache by an update, a remove or an offer.
  std::uint64_t removals() const { return stats_.updates_removed + stats_.removed_after_offer; }

  // Scratch storage reused across calls so the hot paths do not allocate.
  exclusion_set excluded_;
  std::shared_ptr<engine_observer<Profile>> observer_;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> order_scratch_;
  std::vector<model_type> row_models_;
  std::vector<std::string> row_reports_;
};

}  // namespace mm

#include "mm/engine/engine_introspection.hpp"
