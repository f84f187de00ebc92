#include "mm/sim/async_replay.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <unordered_map>

#include "mm/engine/engine.hpp"
#include "mm/engine/error.hpp"
#include "mm/storage/player_store.hpp"

namespace mm::sim {

namespace {

constexpr std::int64_t hour_ms = 3'600'000;
// Engine time 0 as unix ms (its rebalance clock): any fixed moment will do.
constexpr std::int64_t epoch_unix_ms = 1'800'000'000'000;

// One replayed instance: its engine and its scan, as its actor runs them.
struct instance {
  std::unique_ptr<engine<generic_profile>> eng;
  std::unique_ptr<row_scanner> scanner;
  std::int64_t next_scan = 0;
};

class replay {
 public:
  explicit replay(const async_replay_config& c)
      : c_(c),
        store_(c.database, read_only()),
        out_(c.calls.size(), match_type::none_found),
        opponents_(c.calls.size(), invalid_player) {
    if (c.instances == 0 || c.instances > 1024)
      throw error(errc::invalid_argument, "replay: 1 to 1024 instances");
    for (std::size_t i = 1; i < c.calls.size(); ++i)
      if (c.calls[i].at_ms < c.calls[i - 1].at_ms)
        throw error(errc::invalid_argument, "replay: calls are not sorted by time");
    options o = c.engine;
    for (std::uint32_t k = 0; k < c.instances; ++k) {
      o.random_seed = c.seed + k;
      instance in;
      in.eng = std::make_unique<engine<generic_profile>>(o, generic_profile(c.profile));
      in.scanner = store_.open_scanner({"players", c.seed + k, c.instances, k});
      in.next_scan = c.start_ms + std::chrono::milliseconds(o.database_scan_first_delay).count();
      // The sizing sample an instance takes at its start.
      if (o.sizing_sample_rows > 0) {
        const auto sample = in.scanner->sample(
            std::min(o.sizing_sample_rows, o.buckets_rebalance_sample_count), c.seed + k);
        in.eng->apply_rows(sample.rows, sample.unreadable);
        rebalance_if_due(in, c.start_ms);
      }
      instances_.push_back(std::move(in));
    }
  }

  async_replay_report run() {
    async_replay_report r;
    for (std::size_t i = 0; i <= c_.calls.size(); ++i) {
      const std::int64_t at = i < c_.calls.size() ? c_.calls[i].at_ms : c_.end_ms;
      scan_until(at, r);
      if (i == c_.calls.size()) break;
      call(i, r);
    }
    r.replayed = out_;
    r.opponents = opponents_;
    return r;
  }

  // The MMR of a player in the table (0 when it is not there).
  double table_mmr(player_id id) {
    const auto it = mmr_.find(id);
    if (it != mmr_.end()) return it->second;
    const auto row = store_.find_player(id);
    return mmr_[id] = row ? row->mmr : 0;
  }

 private:
  static database_options read_only() {
    database_options o;
    o.read_only = true;
    return o;
  }

  void rebalance_if_due(instance& in, std::int64_t now) {
    const std::int64_t interval =
        std::chrono::milliseconds(c_.engine.buckets_rebalance_interval).count();
    const std::int64_t last = in.eng->last_rebalance_unix_ms();
    if (in.eng->rebalance_due_early() || (last != 0 && epoch_unix_ms + now - last >= interval))
      in.eng->rebalance(epoch_unix_ms + now);
  }

  // Every scan due up to `t`, in time order.
  void scan_until(std::int64_t t, async_replay_report& r) {
    if (!c_.engine.enable_database_scan) return;
    const std::int64_t tick =
        std::max<std::int64_t>(1, std::chrono::milliseconds(c_.engine.database_scan_tick).count());
    for (;;) {
      instance* next = nullptr;
      for (auto& in : instances_)
        if (!next || in.next_scan < next->next_scan) next = &in;
      if (!next || next->next_scan > t) return;
      const std::int64_t now = next->next_scan;
      next->scanner->scan_into(next->eng->scan_fetch_count(), c_.engine.database_scan_batch_size,
                               scan_);
      next->eng->apply_scan(scan_.rows, scan_.unreadable);
      rebalance_if_due(*next, now);
      ++r.scans;
      r.rows_scanned += scan_.rows.size();
      next->next_scan = now + tick;
    }
  }

  void call(std::size_t i, async_replay_report& r) {
    const recorded_call& x = c_.calls[i];
    auto& eng = *instances_[x.instance % instances_.size()].eng;
    switch (x.what) {
      case recorded_call::kind::query: {
        const auto res = eng.find_match(x.request);
        out_[i] = res.type;
        opponents_[i] = res.best_candidate_id;
        break;
      }
      case recorded_call::kind::update:
        eng.update(x.id, std::span<const generic_model>(x.models));
        ++r.updates;
        break;
      case recorded_call::kind::enroll:
        eng.enroll(std::span<const generic_model>(x.models));
        ++r.updates;
        break;
      case recorded_call::kind::remove:
        eng.remove(x.id);
        ++r.updates;
        break;
    }
  }

  const async_replay_config& c_;
  sqlite_store store_;
  std::vector<instance> instances_;
  scan_result scan_;
  std::vector<match_type> out_;
  std::vector<player_id> opponents_;  // by call: the replayed answer's opponent
  std::unordered_map<player_id, double> mmr_;
};

struct gathering {
  async_replay_figures f;
  std::vector<double> gaps;
  void count(match_type t, double gap) {
    ++f.queries;
    switch (t) {
      case match_type::success:
        ++f.success;
        gaps.push_back(gap);
        break;
      case match_type::fake_opponent:
        ++f.fake;
        break;
      case match_type::none_found:
        ++f.none_found;
        break;
      default:
        ++f.invalid;
    }
  }
  async_replay_figures done() {
    f.mmr_gap = summarize(std::move(gaps));
    return f;
  }
};

}  // namespace

async_replay_report replay_async(const async_replay_config& c) {
  const auto started = std::chrono::steady_clock::now();
  replay rp(c);
  async_replay_report r = rp.run();
  std::map<std::int64_t, std::pair<gathering, gathering>> hours;
  std::pair<gathering, gathering> all;
  for (std::size_t i = 0; i < c.calls.size(); ++i) {
    const recorded_call& x = c.calls[i];
    if (x.what != recorded_call::kind::query) continue;
    const double mmr = x.request.query.mmr;
    const auto gap = [&](player_id opponent) { return std::abs(mmr - rp.table_mmr(opponent)); };
    const player_id replayed_opponent = r.opponents[i];
    for (auto* g : {&hours[x.at_ms / hour_ms], &all}) {
      g->first.count(x.recorded, x.recorded == match_type::success ? gap(x.recorded_opponent) : 0);
      g->second.count(r.replayed[i],
                      r.replayed[i] == match_type::success ? gap(replayed_opponent) : 0);
    }
    if (x.recorded == match_type::success && r.replayed[i] == match_type::success &&
        replayed_opponent == x.recorded_opponent)
      ++r.same_opponent;
  }
  for (auto& [hour, g] : hours) r.hours.push_back({hour, g.first.done(), g.second.done()});
  r.totals = {-1, all.first.done(), all.second.done()};
  r.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return r;
}

}  // namespace mm::sim
