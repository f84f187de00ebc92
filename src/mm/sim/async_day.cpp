#include "mm/sim/async_day.hpp"

#include <SQLiteCpp/Transaction.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <ext/pb_ds/assoc_container.hpp>
#include <ext/pb_ds/tree_policy.hpp>
#include <limits>
#include <memory>
#include <queue>
#include <type_traits>

#include "mm/engine/generic_engine.hpp"
#include "mm/sim/async_figures.hpp"
#include "mm/storage/player_store.hpp"

namespace mm::sim {
namespace {

// The virtual clock's epoch as the engine sees it (2026-01-01T00:00:00Z):
// its timestamps (rebalances, snapshots) are unix milliseconds.
constexpr std::int64_t epoch_unix_ms = 1'767'225'600'000;
// Players are grouped by longitude into bins of 3.75 degrees (a quarter of an
// hour of local time): the attack rate of a bin follows its local hour.
constexpr std::size_t longitude_bins = 96;
constexpr std::int64_t slot_ms = 60'000;  // attacks are drawn a minute at a time
constexpr std::int64_t fill_every_ms = 600'000;
constexpr std::uint32_t no_bin = std::numeric_limits<std::uint32_t>::max();

struct player {
  double mmr = 0, skill = 0;
  std::array<std::uint32_t, generic_attribute_count> attributes{};
  std::size_t bin = 0;
  std::uint32_t bin_slot = no_bin;  // position in its bin's active list; no_bin: churned
  std::int64_t shield_until = -1;   // -1: no shield
};

// Players eligible for the uniform reference, by (MMR, id): order statistics
// give the number within a window and the k-th of them in O(log n).
using mmr_key = std::pair<double, std::uint32_t>;
using ranked_set =
    __gnu_pbds::tree<mmr_key, __gnu_pbds::null_type, std::less<mmr_key>, __gnu_pbds::rb_tree_tag,
                     __gnu_pbds::tree_order_statistics_node_update>;

struct hour_samples {
  async_hour figures;
  std::vector<double> gaps;
};

class async_day {
 public:
  // `reference`: the same day with every opponent chosen uniformly among the
  // eligible players instead of by the engine (which then sits idle).
  async_day(const async_day_config& c, bool reference)
      : c_(c),
        reference_(reference),
        r_(c.seed ^ 0xa5f1'0000'0000'0001ull),
        end_ms_(static_cast<std::int64_t>(std::llround(c.days * 86'400'000))),
        store_(c.database),
        engine_(with_seed(c.engine, c.seed), generic_profile(c.profile)),
        hours_(static_cast<std::size_t>(std::ceil(c.days * 24))),
        bins_(longitude_bins) {
    for (std::size_t h = 0; h < hours_.size(); ++h)
      hours_[h].figures.hour = static_cast<std::uint32_t>(h);
    double sum = 0;
    for (double v : c.curve.by_local_hour) sum += v;
    mean_curve_ = sum / 24;
    for (const place& p : c.places) place_weight_total_ += p.weight;
  }

  async_day_report run() {
    prepare_table();
    rng joins_rng(c_.seed ^ 0x10'1a5'0000'0002ull);
    const std::int64_t warm_ms = std::chrono::milliseconds(c_.warm_up).count();
    joins_ = schedule_joins(c_.places, c_.curve, c_.joins_per_day,
                            c_.days + static_cast<double>(warm_ms) / 86'400'000, joins_rng,
                            -static_cast<double>(warm_ms) / 1000);
    now_ = -warm_ms;
    take_sizing_sample();
    next_scan_ = -warm_ms + std::chrono::milliseconds(c_.engine.database_scan_first_delay).count();
    for (std::int64_t slot = -warm_ms; slot < end_ms_; slot += slot_ms) {
      churn(slot);
      for (const auto& [at, attacker] : attacks_in(slot)) {
        advance_to(at);
        attack(attacker, at);
      }
    }
    advance_to(end_ms_);
    return finish();
  }

 private:
  static options with_seed(options o, std::uint64_t seed) {
    o.random_seed = seed;
    return o;
  }
  // The hour a moment of the day falls in; the warm-up's figures go nowhere.
  hour_samples& hour_at(std::int64_t ms) {
    if (ms < 0) return warm_up_;
    const auto h = static_cast<std::size_t>(ms / 3'600'000);
    return hours_[std::min(h, hours_.size() - 1)];
  }
  player_id id_of(std::uint32_t p) const { return player_id{p} + 1; }

  using clock = std::chrono::steady_clock;
  // Runs f, adding its wall time to `into`.
  template <class F>
  auto timed(clock::duration& into, F&& f) {
    const auto started = clock::now();
    if constexpr (std::is_void_v<decltype(f())>) {
      f();
      into += clock::now() - started;
    } else {
      auto r = f();
      into += clock::now() - started;
      return r;
    }
  }

  // ---- The table ------------------------------------------------------------

  void prepare_table() {
    auto& sql = store_.db().sql();
    // A throwaway file: durability is not what is simulated.
    store_.db().guarded("prepare the simulation's tables", [&] {
      sql.exec("PRAGMA synchronous=OFF");
      sql.exec("CREATE TABLE IF NOT EXISTS sim_shields (id INTEGER PRIMARY KEY)");
      // What the scan reads: the players without a shield (a game keeps
      // shielded players out of the matchmaker with such a view).
      sql.exec(
          "CREATE VIEW IF NOT EXISTS eligible_players AS SELECT * FROM players "
          "WHERE id NOT IN (SELECT id FROM sim_shields)");
    });
    for (std::uint32_t i = 0; i < c_.players; ++i) {
      const double skill = c_.mmr_mean + c_.skill_stddev * r_.normal();
      // Veterans' MMRs have roughly found their skill.
      add_player(skill + 100 * r_.normal(), skill, random_longitude());
    }
    flush();
    scanner_ = store_.open_scanner({"eligible_players", c_.seed, 1, 0});
  }

  double random_longitude() {
    double pick = r_.unit() * place_weight_total_;
    for (const place& p : c_.places) {
      if (pick < p.weight) return jitter(p.where.longitude);
      pick -= p.weight;
    }
    return jitter(c_.places.back().where.longitude);
  }
  double jitter(double longitude) {
    double lon = longitude + 0.45 * r_.normal();
    if (lon >= 180) lon -= 360;
    if (lon < -180) lon += 360;
    return lon;
  }

  void add_player(double mmr, double skill, double longitude) {
    const auto p = static_cast<std::uint32_t>(players_.size());
    player pl;
    pl.mmr = mmr;
    pl.skill = skill;
    for (std::size_t i = 0; i < generic_attribute_count; ++i)
      if (c_.attribute_values[i] > 1)
        pl.attributes[i] = static_cast<std::uint32_t>(r_.below(c_.attribute_values[i]));
    pl.bin = std::min(longitude_bins - 1,
                      static_cast<std::size_t>((longitude + 180) / 360 * longitude_bins));
    pl.bin_slot = static_cast<std::uint32_t>(bins_[pl.bin].size());
    bins_[pl.bin].push_back(p);
    players_.push_back(pl);
    offers_.push_back(0);
    eligible_.insert({mmr, p});
    dirty_.push_back(p);
  }

  // Writes the players changed since the last flush and the shields that
  // began or ended: what the game would have written by now.
  void flush() {
    if (reference_) {  // the reference day reads no table
      dirty_.clear();
      shields_on_.clear();
      shields_off_.clear();
      return;
    }
    timed(database_time_, [&] { write_changes(); });
  }

  void write_changes() {
    std::vector<player_row> rows;
    rows.reserve(dirty_.size());
    std::sort(dirty_.begin(), dirty_.end());
    dirty_.erase(std::unique(dirty_.begin(), dirty_.end()), dirty_.end());
    for (std::uint32_t p : dirty_) {
      player_row row;
      row.id = id_of(p);
      row.mmr = players_[p].mmr;
      for (std::size_t i = 0; i < generic_attribute_count; ++i)
        row.attributes[i] = players_[p].attributes[i];
      row.updated_at_unix_ms = epoch_unix_ms + now_;
      rows.push_back(std::move(row));
    }
    dirty_.clear();
    for (std::size_t i = 0; i < rows.size(); i += 10'000) {
      const std::size_t n = std::min<std::size_t>(10'000, rows.size() - i);
      store_.upsert_players(std::span<const player_row>(rows.data() + i, n));
    }
    if (shields_on_.empty() && shields_off_.empty()) return;
    auto& sql = store_.db().sql();
    store_.db().guarded("write the shields", [&] {
      SQLite::Transaction t(sql);
      SQLite::Statement on(sql, "INSERT OR IGNORE INTO sim_shields (id) VALUES (?)");
      for (std::uint32_t p : shields_on_) {
        on.bind(1, static_cast<std::int64_t>(id_of(p)));
        on.exec();
        on.reset();
      }
      SQLite::Statement off(sql, "DELETE FROM sim_shields WHERE id = ?");
      for (std::uint32_t p : shields_off_) {
        off.bind(1, static_cast<std::int64_t>(id_of(p)));
        off.exec();
        off.reset();
      }
      t.commit();
    });
    shields_on_.clear();
    shields_off_.clear();
  }

  // ---- The engine's side, as its actor runs it --------------------------------

  void take_sizing_sample() {
    const auto& o = c_.engine;
    if (reference_ || o.sizing_sample_rows == 0) return;
    const auto sample =
        scanner_->sample(std::min(o.sizing_sample_rows, o.buckets_rebalance_sample_count), c_.seed);
    engine_.apply_rows(sample.rows, sample.unreadable);
    rebalance_if_due(now_);
  }

  void rebalance_if_due(std::int64_t now) {
    const std::int64_t interval =
        std::chrono::milliseconds(c_.engine.buckets_rebalance_interval).count();
    const std::int64_t last = engine_.last_rebalance_unix_ms();
    const bool on_time = last != 0 && epoch_unix_ms + now - last >= interval;
    if ((engine_.rebalance_due_early() || on_time) &&
        engine_.rebalance(epoch_unix_ms + now).performed)
      ++rebalances_;
  }

  void scan(std::int64_t now) {
    if (reference_) return;
    flush();
    const std::uint32_t fetch = engine_.scan_fetch_count();
    timed(database_time_,
          [&] { scanner_->scan_into(fetch, c_.engine.database_scan_batch_size, scan_); });
    timed(engine_time_, [&] {
      engine_.apply_scan(scan_.rows, scan_.unreadable);
      rebalance_if_due(now);
    });
    ++scans_;
    rows_scanned_ += scan_.rows.size();
  }

  std::optional<generic_model> model_of(std::uint32_t p) const {
    return generic_model(id_of(p), static_cast<float>(players_[p].mmr), players_[p].attributes);
  }

  // ---- Time ----------------------------------------------------------------

  // Runs everything due up to `t`, in time order: shield ends, joins, scans,
  // the hourly figures and the fill samples.
  void advance_to(std::int64_t t) {
    while (true) {
      const std::int64_t shield = shields_.empty() ? end_ms_ + 1 : shields_.top().first;
      const std::int64_t join = next_join_ < joins_.size()
                                    ? static_cast<std::int64_t>(joins_[next_join_].at_s * 1000)
                                    : end_ms_ + 1;
      const std::int64_t next = std::min({shield, join, next_scan_, next_hour_, next_fill_});
      if (next > t || next > end_ms_) break;
      now_ = next;
      if (next == shield) {
        end_shield(shields_.top().second);
        shields_.pop();
      } else if (next == join) {
        arrive(joins_[next_join_++]);
      } else if (next == next_scan_) {
        scan(next);
        next_scan_ += std::max<std::int64_t>(
            1, std::chrono::milliseconds(c_.engine.database_scan_tick).count());
      } else if (next == next_hour_) {
        close_hour(next);
        next_hour_ += 3'600'000;
      } else {
        sample_fill(next);
        next_fill_ += fill_every_ms;
      }
    }
    now_ = t;
  }

  void arrive(const join& j) {
    add_player(c_.new_player_mmr, c_.mmr_mean + c_.skill_stddev * r_.normal(), j.where.longitude);
    ++hour_at(now_).figures.joins;
  }

  void churn(std::int64_t slot) {
    std::size_t active = 0;
    for (const auto& b : bins_) active += b.size();
    const std::uint64_t n =
        poisson(r_, static_cast<double>(active) * c_.churn_per_day * slot_ms / 86'400'000.0);
    for (std::uint64_t k = 0; k < n && active > 0; ++k, --active) {
      std::uint64_t pick = r_.below(active);
      for (auto& b : bins_) {
        if (pick < b.size()) {
          leave_bin(b[pick]);
          break;
        }
        pick -= b.size();
      }
      ++hour_at(slot).figures.churned;
    }
  }

  void leave_bin(std::uint32_t p) {
    auto& b = bins_[players_[p].bin];
    const std::uint32_t at = players_[p].bin_slot;
    b[at] = b.back();
    players_[b[at]].bin_slot = at;
    b.pop_back();
    players_[p].bin_slot = no_bin;
  }

  // The minute's attacks: each bin's active players attack at the curve's
  // rate for their local hour; times uniform within the minute, in order.
  std::vector<std::pair<std::int64_t, std::uint32_t>> attacks_in(std::int64_t slot) {
    std::vector<double> cumulative(longitude_bins);
    double sum = 0;
    for (std::size_t b = 0; b < longitude_bins; ++b) {
      const double lon = -180 + (static_cast<double>(b) + 0.5) * 360.0 / longitude_bins;
      const double hour = local_hour(static_cast<double>(slot + slot_ms / 2) / 1000, lon);
      sum += static_cast<double>(bins_[b].size()) * c_.curve.at(hour) / mean_curve_;
      cumulative[b] = sum;
    }
    const std::uint64_t n = poisson(r_, sum * c_.attacks_per_player_day * slot_ms / 86'400'000.0);
    std::vector<std::pair<std::int64_t, std::uint32_t>> out;
    for (std::uint64_t k = 0; k < n; ++k) {
      const double pick = r_.unit() * sum;
      const auto b = std::min<std::size_t>(
          longitude_bins - 1,
          static_cast<std::size_t>(std::upper_bound(cumulative.begin(), cumulative.end(), pick) -
                                   cumulative.begin()));
      if (bins_[b].empty()) continue;
      const std::uint32_t attacker = bins_[b][r_.below(bins_[b].size())];
      out.push_back(
          {slot + static_cast<std::int64_t>(r_.below(static_cast<std::uint64_t>(slot_ms))),
           attacker});
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  // ---- An attack -------------------------------------------------------------

  void attack(std::uint32_t a, std::int64_t now) {
    hour_samples& h = hour_at(now);
    ++h.figures.attacks;
    match_request<generic_query> req;
    req.query.attacker = id_of(a);
    req.query.mmr = static_cast<float>(players_[a].mmr);
    req.query.attributes = players_[a].attributes;
    req.num_retries = c_.retries;
    const auto res = reference_ ? uniform_pick(req.query)
                                : timed(engine_time_, [&] { return engine_.find_match(req); });
    switch (res.type) {
      case match_type::success: {
        ++h.figures.success;
        const auto d = static_cast<std::uint32_t>(res.best_candidate_id - 1);
        h.gaps.push_back(std::abs(players_[a].mmr - players_[d].mmr));
        if (now >= 0) ++offers_[d];
        fight(a, d, now);
        break;
      }
      case match_type::fake_opponent:
        ++h.figures.fake;
        if (any_eligible(req.query)) ++h.figures.missed;
        break;
      default:
        ++h.figures.none_found;
        if (any_eligible(req.query)) ++h.figures.missed;
        break;
    }
  }

  // Elo: the winner drawn from the hidden skills, both MMRs moved by K times
  // the surprise; the defender shielded (taken out of the cache by the game's
  // update); the attacker's new MMR pushed to the engine.
  void fight(std::uint32_t a, std::uint32_t d, std::int64_t now) {
    player& pa = players_[a];
    player& pd = players_[d];
    const double p_skill = 1 / (1 + std::pow(10.0, (pd.skill - pa.skill) / 400));
    const double won = r_.unit() < p_skill ? 1.0 : 0.0;
    const double expected = 1 / (1 + std::pow(10.0, (pd.mmr - pa.mmr) / 400));
    const double delta = c_.elo_k * (won - expected);
    set_mmr(a, pa.mmr + delta);
    set_mmr(d, pd.mmr - delta);
    if (pd.shield_until < 0) eligible_.erase({pd.mmr, d});
    pd.shield_until = now + std::chrono::milliseconds(c_.shield).count();
    shields_.push({pd.shield_until, d});
    shields_on_.push_back(d);
    if (reference_) return;
    timed(engine_time_, [&] {
      engine_.update(id_of(d), std::optional<generic_model>());
      if (pa.shield_until < 0) engine_.update(id_of(a), model_of(a));
    });
  }

  void set_mmr(std::uint32_t p, double mmr) {
    player& pl = players_[p];
    if (pl.shield_until < 0) {
      eligible_.erase({pl.mmr, p});
      eligible_.insert({mmr, p});
    }
    pl.mmr = mmr;
    dirty_.push_back(p);
  }

  void end_shield(std::uint32_t p) {
    player& pl = players_[p];
    pl.shield_until = -1;
    shields_off_.push_back(p);
    eligible_.insert({pl.mmr, p});
    // The game's update when the shield ends puts the player back.
    if (!reference_) timed(engine_time_, [&] { engine_.update(id_of(p), model_of(p)); });
  }

  // The reference chooser: one eligible player, every one equally likely:
  // no shield, not the attacker, and a possible match under the game's own
  // rule at the request's widest window (MMR, hard attributes). NoneFound
  // when there is none.
  // Whether player p is a possible opponent for q under the game's own rule
  // at the request's widest window (not the attacker; shields are the
  // caller's: eligible_ holds only players without one).
  bool possible_for(const generic_query& q, std::uint32_t p) const {
    return p != static_cast<std::uint32_t>(q.attacker - 1) &&
           engine_.profile().match(q, *model_of(p), c_.retries).possible;
  }
  // The order-statistic range of eligible_ within q's widest MMR window.
  std::pair<std::size_t, std::size_t> window_of(const generic_query& q) const {
    const double w = engine_.profile().window(c_.retries);
    return {eligible_.order_of_key({q.mmr - w, 0}),
            eligible_.order_of_key({q.mmr + w, std::numeric_limits<std::uint32_t>::max()})};
  }
  // Whether the table holds an opponent the uniform reference could offer.
  bool any_eligible(const generic_query& q) const {
    const auto [lo, hi] = window_of(q);
    auto it = lo < hi ? eligible_.find_by_order(lo) : eligible_.end();
    for (std::size_t i = lo; i < hi; ++i, ++it)
      if (possible_for(q, it->second)) return true;
    return false;
  }

  match_response<generic_model> uniform_pick(const generic_query& q) {
    match_response<generic_model> res;
    const auto eligible = [&](std::uint32_t p) { return possible_for(q, p); };
    // The players within the MMR window, by order statistics.
    const auto [lo, hi] = window_of(q);
    if (hi <= lo) return res;
    // Draws from the window until one is eligible: uniform among the
    // eligible. Where they are too rare to be drawn soon, every one of the
    // window is checked and one of them taken: uniform as well.
    std::optional<std::uint32_t> pick;
    for (int tries = 0; tries < 64 && !pick; ++tries) {
      const std::uint32_t p = eligible_.find_by_order(lo + r_.below(hi - lo))->second;
      if (eligible(p)) pick = p;
    }
    if (!pick) {
      std::vector<std::uint32_t> all;
      auto it = eligible_.find_by_order(lo);
      for (std::size_t i = lo; i < hi; ++i, ++it)
        if (eligible(it->second)) all.push_back(it->second);
      if (all.empty()) return res;
      pick = all[r_.below(all.size())];
    }
    res.type = match_type::success;
    res.best_candidate_id = id_of(*pick);
    return res;
  }

  // ---- Figures ---------------------------------------------------------------

  void close_hour(std::int64_t at) {
    async_hour& f = hour_at(at - 1).figures;
    f.cached = engine_.pool().players();
    f.fill = engine_.pool().capacity() ? static_cast<double>(engine_.pool().players()) /
                                             static_cast<double>(engine_.pool().capacity())
                                       : 0;
    f.shielded = shields_.size();
    f.table_rows = players_.size();
    player_seconds_ += static_cast<double>(players_.size()) * 3600;
  }

  void sample_fill(std::int64_t at) {
    fill_sample s;
    s.at_s = static_cast<double>(at) / 1000;
    const auto& pool = engine_.pool();
    std::vector<double> fills;
    for (std::uint32_t b = 0; b < pool.size(); ++b) fills.push_back(pool.at(b).slots.fill());
    s.buckets = fills.size();
    s.players = pool.players();
    s.overall = pool.capacity()
                    ? static_cast<double>(pool.players()) / static_cast<double>(pool.capacity())
                    : 0;
    if (!fills.empty()) {
      std::sort(fills.begin(), fills.end());
      s.lowest = fills.front();
      s.median = fills[fills.size() / 2];
      s.highest = fills.back();
    }
    fill_.push_back(s);
  }

  async_day_report finish() {
    flush();
    async_day_report out;
    std::vector<double> all_gaps;
    async_hour& t = out.totals;
    t.hour = static_cast<std::uint32_t>(hours_.size());
    for (hour_samples& h : hours_) {
      async_hour f = h.figures;
      f.mmr_gap = summarize(h.gaps);
      all_gaps.insert(all_gaps.end(), h.gaps.begin(), h.gaps.end());
      add_counts(t, f);
      out.hours.push_back(f);
    }
    t.mmr_gap = summarize(std::move(all_gaps));
    t.cached = engine_.pool().players();
    t.fill = out.hours.empty() ? 0 : out.hours.back().fill;
    t.shielded = shields_.size();
    t.table_rows = players_.size();
    out.engine = fairness_of(offers_, players_.size());
    out.fill = std::move(fill_);
    out.players = players_.size();
    out.scans = scans_;
    out.rows_scanned = rows_scanned_;
    out.rebalances = rebalances_;
    out.player_seconds = player_seconds_;
    out.engine_seconds = std::chrono::duration<double>(engine_time_).count();
    out.database_seconds = std::chrono::duration<double>(database_time_).count();
    return out;
  }

  const async_day_config& c_;
  const bool reference_;
  rng r_;
  std::int64_t end_ms_;
  sqlite_store store_;
  generic_engine engine_;
  std::unique_ptr<row_scanner> scanner_;
  scan_result scan_;
  std::vector<hour_samples> hours_;
  hour_samples warm_up_;                          // what happened before the day: not reported
  std::vector<std::vector<std::uint32_t>> bins_;  // active players by longitude
  std::vector<player> players_;
  std::vector<std::uint32_t> offers_;
  ranked_set eligible_;
  std::priority_queue<std::pair<std::int64_t, std::uint32_t>,
                      std::vector<std::pair<std::int64_t, std::uint32_t>>, std::greater<>>
      shields_;
  std::vector<std::uint32_t> dirty_, shields_on_, shields_off_;
  std::vector<join> joins_;
  std::size_t next_join_ = 0;
  std::int64_t now_ = 0, next_scan_ = 0, next_hour_ = 3'600'000, next_fill_ = 0;
  std::vector<fill_sample> fill_;
  double mean_curve_ = 1, place_weight_total_ = 0, player_seconds_ = 0;
  std::uint64_t scans_ = 0, rows_scanned_ = 0, rebalances_ = 0;
  clock::duration engine_time_{}, database_time_{};
};

}  // namespace

async_day_report run_async_day(const async_day_config& c) {
  check_async_day_config(c);
  using clock = std::chrono::steady_clock;
  const auto started = clock::now();
  async_day_report out = async_day(c, false).run();
  const auto reference_started = clock::now();
  out.wall_seconds = std::chrono::duration<double>(reference_started - started).count();
  // The reference day: its own file, the same seed and arrivals.
  async_day_config reference = c;
  reference.database = c.database + ".uniform";
  out.uniform = async_day(reference, true).run().engine;
  out.reference_seconds = std::chrono::duration<double>(clock::now() - reference_started).count();
  return out;
}

}  // namespace mm::sim
