#include "mm/sim/session_day.hpp"

#include <algorithm>
#include <cmath>
#include <queue>
#include <unordered_map>

#include "mm/engine/error.hpp"
#include "mm/engine/random.hpp"
#include "mm/session/session_queue.hpp"

namespace mm::sim {
namespace {

using session::time_ms;
using namespace std::chrono_literals;

struct player {
  geo_point where;
  double mmr = 0;
  std::vector<std::pair<std::string, std::string>> strings;
  std::vector<std::pair<std::string, double>> numbers;
};

// A player's next step: queue (a ticket created at `at`), or leave the game.
struct event {
  std::int64_t at_ms = 0;
  std::uint64_t order = 0;  // ties in the order the events were made
  std::uint32_t player = 0;
  bool leave = false;
  bool operator>(const event& o) const {
    return at_ms != o.at_ms ? at_ms > o.at_ms : order > o.order;
  }
};

// The figures of one hour while it runs: raw samples, summed up at the end.
struct hour_samples {
  session_hour figures;
  std::vector<double> wait_s, rtt_ms;
  double concurrent_sum = 0;
  std::uint64_t concurrent_samples = 0;
};

class session_day {
 public:
  explicit session_day(const session_day_config& c)
      : c_(c),
        queue_(c.queue, c.latency, c.seed),
        r_(c.seed ^ 0x5e55'10a5'0000'0001ull),
        end_ms_(static_cast<std::int64_t>(std::llround(c.days * 86'400'000))),
        warm_ms_(std::chrono::milliseconds(c.warm_up).count()),
        hours_(static_cast<std::size_t>(std::ceil(c.days * 24))) {
    for (std::size_t h = 0; h < hours_.size(); ++h)
      hours_[h].figures.hour = static_cast<std::uint32_t>(h);
  }

  session_day_report run() {
    const std::int64_t tick = std::max<std::int64_t>(c_.queue.tick.count(), 1);
    std::size_t next_join = 0;
    for (std::int64_t now = -warm_ms_ + tick; now <= end_ms_; now += tick) {
      // Joins and queued steps up to this tick, in time order.
      while (true) {
        const bool join_next =
            next_join < c_.joins.size() &&
            (events_.empty() || ms_of(c_.joins[next_join].at_s) <= events_.top().at_ms);
        const std::int64_t at = join_next ? ms_of(c_.joins[next_join].at_s)
                                          : (events_.empty() ? now + 1 : events_.top().at_ms);
        if (at > now) break;
        if (join_next) {
          arrive(c_.joins[next_join++], at);
        } else {
          const event e = events_.top();
          events_.pop();
          e.leave ? depart(e.at_ms) : enqueue(e.player, e.at_ms);
        }
      }
      const auto started = clock::now();
      const session::tick_result r = queue_.tick(engine_time(now));
      engine_time_ += clock::now() - started;
      for (const auto& m : r.matches) matched(m);
      for (auto id : r.failed) gave_up(id, now);
      for (auto id : r.expired) gave_up(id, now);
      if (now > 0 && now % 60'000 < tick) sample_concurrent(now);
    }
    return finish();
  }

 private:
  static std::int64_t ms_of(double s) { return static_cast<std::int64_t>(std::llround(s * 1000)); }
  // The engine's clock starts with the warm-up, at 0.
  time_ms engine_time(std::int64_t t) const { return time_ms(t + warm_ms_); }
  std::int64_t sim_time(time_ms t) const { return t.count() - warm_ms_; }
  // The hour a moment of the day falls in; the warm-up's figures go nowhere.
  hour_samples& hour_at(std::int64_t ms) {
    if (ms < 0) return warm_up_;
    const auto h = static_cast<std::size_t>(std::max<std::int64_t>(ms, 0) / 3'600'000);
    return hours_[std::min(h, hours_.size() - 1)];
  }

  void set_online(std::int64_t at, std::int64_t delta) {
    if (at > 0)  // online time in the day only
      player_seconds_ += static_cast<double>(online_) *
                         static_cast<double>(at - std::max<std::int64_t>(online_since_, 0)) / 1000;
    online_since_ = at;
    online_ = static_cast<std::uint64_t>(static_cast<std::int64_t>(online_) + delta);
    if (at >= 0) note_peak(at);
  }
  void note_peak(std::int64_t at) {
    if (online_ > peak_) {
      peak_ = online_;
      peak_at_ = at;
    }
  }

  void arrive(const join& j, std::int64_t at) {
    player pl{j.where, j.mmr ? *j.mmr : c_.mmr_mean + c_.mmr_stddev * r_.normal(), {}, {}};
    for (const auto& a : c_.strings)
      if (!a.values.empty()) pl.strings.emplace_back(a.name, a.values[r_.below(a.values.size())]);
    for (const auto& a : c_.numbers)
      pl.numbers.emplace_back(a.name, a.mean + a.stddev * r_.normal());
    players_.push_back(std::move(pl));
    ++hour_at(at).figures.joins;
    set_online(at, +1);
    enqueue(static_cast<std::uint32_t>(players_.size() - 1), at);
  }

  void depart(std::int64_t at) { set_online(at, -1); }

  void enqueue(std::uint32_t p, std::int64_t at) {
    session::ticket_request req;
    session::ticket_player tp;
    tp.id = p + 1;
    tp.mmr = players_[p].mmr;
    tp.location = players_[p].where;
    tp.strings = players_[p].strings;
    tp.numbers = players_[p].numbers;
    req.players.push_back(std::move(tp));
    const auto started = clock::now();
    session::add_result added;
    try {
      added = queue_.add(req, engine_time(at));
    } catch (const error& e) {
      throw error(errc::invalid_argument,
                  "the queue refused a simulated player's ticket: " + std::string(e.what()) +
                      " (give the players the attributes its rules read)");
    }
    engine_time_ += clock::now() - started;
    tickets_[added.id] = {p, at};
    ++hour_at(at).figures.tickets;
  }

  void schedule(std::int64_t at, std::uint32_t p, bool leave) {
    events_.push({at, order_++, p, leave});
  }

  void matched(const session::formed_match& m) {
    const std::int64_t formed = sim_time(m.formed_at);
    hour_samples& h = hour_at(formed);
    ++h.figures.matches;
    if (m.bot_match) ++h.figures.bot_matches;
    const auto& dcs = queue_.latency().datacenters();
    for (std::size_t i = 0; i < m.tickets.size(); ++i) {
      const time_ms waited = m.formed_at - m.created[i];
      h.wait_s.push_back(static_cast<double>(waited.count()) / 1000);
      count_stage(h.figures, waited, m.bot_match);
      const std::uint32_t p = take_ticket(m.tickets[i], formed);
      h.figures.matched_players += 1;
      if (m.datacenter < dcs.size())
        h.rtt_ms.push_back(queue_.latency().estimate_ms(players_[p].where, m.datacenter));
      const std::int64_t over = formed + std::chrono::milliseconds(c_.match_length).count();
      if (r_.unit() < c_.play_again)
        schedule(over + std::chrono::milliseconds(c_.between_matches).count(), p, false);
      else
        schedule(over, p, true);
    }
  }

  void count_stage(session_hour& f, time_ms waited, bool bot) const {
    if (bot) {
      ++f.bot;
      return;
    }
    if (!c_.queue.latency) {
      ++f.ideal;
      return;
    }
    switch (session::stage_after(*c_.queue.latency, waited)) {
      case session::latency_stage::ideal:
        ++f.ideal;
        break;
      case session::latency_stage::expand:
        ++f.expand;
        break;
      case session::latency_stage::warm_body:
        ++f.warm_body;
        break;
      case session::latency_stage::failed:
        ++f.warm_body;
        break;  // matched before it was failed
    }
  }

  // A ticket that ended at `now`: its player.
  std::uint32_t take_ticket(session::ticket_id id, std::int64_t now) {
    const auto it = tickets_.find(id);
    const auto [p, created] = it->second;
    if (created < 0 && now >= 0) ++carried_in_;
    tickets_.erase(it);
    return p;
  }

  // A ticket that failed or gave up: its player leaves the game.
  void gave_up(session::ticket_id id, std::int64_t now) {
    take_ticket(id, now);
    ++hour_at(now).figures.failed;
    set_online(now, -1);
  }

  void sample_concurrent(std::int64_t now) {
    note_peak(now);
    hour_samples& h = hour_at(now - 1);
    h.concurrent_sum += static_cast<double>(online_);
    ++h.concurrent_samples;
    h.figures.concurrent_peak = std::max(h.figures.concurrent_peak, online_);
  }

  session_day_report finish() {
    set_online(end_ms_, 0);
    session_day_report out;
    std::vector<double> all_wait, all_rtt;
    session_hour& t = out.totals;
    t.hour = static_cast<std::uint32_t>(hours_.size());
    double concurrent_sum = 0;
    std::uint64_t concurrent_samples = 0;
    for (hour_samples& h : hours_) {
      session_hour f = h.figures;
      f.time_to_match_s = summarize(h.wait_s);
      f.rtt_ms = summarize(h.rtt_ms);
      f.concurrent_mean =
          h.concurrent_samples ? h.concurrent_sum / static_cast<double>(h.concurrent_samples) : 0;
      concurrent_sum += h.concurrent_sum;
      concurrent_samples += h.concurrent_samples;
      all_wait.insert(all_wait.end(), h.wait_s.begin(), h.wait_s.end());
      all_rtt.insert(all_rtt.end(), h.rtt_ms.begin(), h.rtt_ms.end());
      t.joins += f.joins;
      t.tickets += f.tickets;
      t.matches += f.matches;
      t.bot_matches += f.bot_matches;
      t.matched_players += f.matched_players;
      t.ideal += f.ideal;
      t.expand += f.expand;
      t.warm_body += f.warm_body;
      t.failed += f.failed;
      t.bot += f.bot;
      out.hours.push_back(f);
    }
    t.time_to_match_s = summarize(std::move(all_wait));
    t.rtt_ms = summarize(std::move(all_rtt));
    t.concurrent_mean =
        concurrent_samples ? concurrent_sum / static_cast<double>(concurrent_samples) : 0;
    t.concurrent_peak = peak_;
    out.peak_at_s = static_cast<double>(peak_at_) / 1000;
    out.still_waiting = queue_.waiting();
    for (const auto& [id, ticket] : tickets_)
      if (ticket.second < 0) ++carried_in_;
    out.carried_in = carried_in_;
    out.players = t.joins;
    out.player_seconds = player_seconds_;
    out.engine_seconds = std::chrono::duration<double>(engine_time_).count();
    return out;
  }

  using clock = std::chrono::steady_clock;
  const session_day_config& c_;
  session::session_queue queue_;
  rng r_;
  std::int64_t end_ms_, warm_ms_;
  std::vector<hour_samples> hours_;
  hour_samples warm_up_;  // what happened before the day: not reported
  std::vector<player> players_;
  // Waiting tickets: their player and when they were created.
  std::unordered_map<session::ticket_id, std::pair<std::uint32_t, std::int64_t>> tickets_;
  std::priority_queue<event, std::vector<event>, std::greater<>> events_;
  std::uint64_t order_ = 0;
  std::uint64_t online_ = 0, peak_ = 0;
  std::int64_t peak_at_ = 0, online_since_ = 0;
  std::uint64_t carried_in_ = 0;
  double player_seconds_ = 0;
  clock::duration engine_time_{};
};

}  // namespace

session_day_report run_session_day(const session_day_config& c) {
  if (!(c.days > 0 && c.days <= 366) || !(c.play_again >= 0 && c.play_again <= 1) ||
      c.match_length.count() <= 0 || c.between_matches.count() < 0 || c.warm_up.count() < 0 ||
      !std::isfinite(c.mmr_mean) || !(c.mmr_stddev >= 0))
    throw error(errc::invalid_argument,
                "session day: days within (0, 366], play_again within [0, 1], a match longer "
                "than 0 s, no negative pause or warm-up, a finite MMR distribution");
  const auto started = std::chrono::steady_clock::now();
  session_day_report out = session_day(c).run();
  out.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return out;
}

}  // namespace mm::sim
