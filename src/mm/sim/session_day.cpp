#include "mm/sim/session_day.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <queue>
#include <string>
#include <unordered_map>

#include "mm/engine/error.hpp"
#include "mm/engine/random.hpp"
#include "mm/session/session_queue.hpp"

namespace mm::sim {
namespace {

using session::time_ms;
using namespace std::chrono_literals;

// A party: the players who joined together (one, alone), their MMRs near
// each other, their attributes the same.
struct party {
  geo_point where;
  std::vector<double> mmr;
  std::vector<std::pair<std::string, std::string>> strings;
  std::vector<std::pair<std::string, double>> numbers;
};

// Player j of party p: the ids the queue sees.
constexpr std::uint32_t max_party = 8;
player_id id_of(std::uint32_t p, std::size_t j) {
  return std::uint64_t{p} * max_party + j + 1;
}

// A party's next step: queue (a ticket created at `at`), leave the game,
// leave its running match before the end (quit, then the game), or a
// match's end.
struct event {
  enum class kind : std::uint8_t { queue, leave, quit, match_end };
  std::int64_t at_ms = 0;
  std::uint64_t order = 0;  // ties in the order the events were made
  std::uint32_t party = 0;
  kind what = kind::queue;
  std::uint64_t match = 0;  // quit, match_end
  bool operator>(const event& o) const {
    return at_ms != o.at_ms ? at_ms > o.at_ms : order > o.order;
  }
};

// A match being played: its parties with the team of each of their
// players, and its empty seats (when each opened, oldest first).
struct running_match {
  std::int64_t ends_at = 0;
  std::size_t datacenter = 0;
  struct seated {
    std::uint32_t party;
    std::vector<std::uint32_t> team_of;
  };
  std::vector<seated> parties;
  std::uint32_t players = 0;
  std::deque<std::int64_t> open_since;
  bool backfilling = false;
};

// The figures of one hour while it runs: raw samples, summed up at the end.
struct hour_samples {
  session_hour figures;
  std::vector<double> wait_s, rtt_ms, refill_s;
  double concurrent_sum = 0;
  std::uint64_t concurrent_samples = 0;
  double empty_seats = 0, seats = 0;  // summed over the minute samples
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
          handle(e);
        }
      }
      const auto started = clock::now();
      const session::tick_result r = queue_.tick(engine_time(now));
      engine_time_ += clock::now() - started;
      for (const auto& p : r.placed) placed(p, now);
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

  void handle(const event& e) {
    switch (e.what) {
      case event::kind::queue:
        enqueue(e.party, e.at_ms);
        break;
      case event::kind::leave:
        set_online(e.at_ms, -static_cast<std::int64_t>(parties_[e.party].mmr.size()));
        break;
      case event::kind::quit:
        quit(e);
        break;
      case event::kind::match_end:
        end_match(e.match);
        break;
    }
  }

  // A party's size: 1 + k with the k-th weight of party_sizes (within the
  // queue's max_party_size).
  std::size_t party_size() {
    const std::size_t n =
        std::min<std::size_t>({c_.party_sizes.size(), c_.queue.max_party_size, max_party});
    double total = 0;
    for (std::size_t k = 0; k < n; ++k) total += c_.party_sizes[k];
    if (n <= 1 || !(total > 0)) return 1;
    double x = r_.unit() * total;
    for (std::size_t k = 0; k < n; ++k) {
      if (x < c_.party_sizes[k]) return k + 1;
      x -= c_.party_sizes[k];
    }
    return n;
  }

  void arrive(const join& j, std::int64_t at) {
    party pl{j.where, {}, {}, {}};
    const double mmr = j.mmr ? *j.mmr : c_.mmr_mean + c_.mmr_stddev * r_.normal();
    const std::size_t size = c_.party_sizes.empty() ? 1 : party_size();
    for (std::size_t k = 0; k < size; ++k) pl.mmr.push_back(k == 0 ? mmr : mmr + 50 * r_.normal());
    for (const auto& a : c_.strings)
      if (!a.values.empty()) pl.strings.emplace_back(a.name, a.values[r_.below(a.values.size())]);
    for (const auto& a : c_.numbers)
      pl.numbers.emplace_back(a.name, a.mean + a.stddev * r_.normal());
    parties_.push_back(std::move(pl));
    hour_at(at).figures.joins += size;
    set_online(at, static_cast<std::int64_t>(size));
    enqueue(static_cast<std::uint32_t>(parties_.size() - 1), at);
  }

  session::ticket_player seat_of(std::uint32_t p, std::size_t j) const {
    session::ticket_player tp;
    tp.id = id_of(p, j);
    tp.mmr = parties_[p].mmr[j];
    tp.location = parties_[p].where;
    tp.strings = parties_[p].strings;
    tp.numbers = parties_[p].numbers;
    return tp;
  }

  void enqueue(std::uint32_t p, std::int64_t at) {
    session::ticket_request req;
    for (std::size_t j = 0; j < parties_[p].mmr.size(); ++j) req.players.push_back(seat_of(p, j));
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

  void schedule(std::int64_t at, std::uint32_t p, event::kind what, std::uint64_t match = 0) {
    events_.push({at, order_++, p, what, match});
  }

  // After its match ends at `over`, the party queues again or leaves.
  void after_match(std::uint32_t p, std::int64_t over) {
    if (r_.unit() < c_.play_again)
      schedule(over + std::chrono::milliseconds(c_.between_matches).count(), p, event::kind::queue);
    else
      schedule(over, p, event::kind::leave);
  }

  // Ticket `id`, in a match at `at` (sim time) on datacenter `dc` after
  // waiting `waited`: its figures; its party.
  std::uint32_t seated(session::ticket_id id, std::int64_t at, time_ms waited, std::size_t dc,
                       bool bot) {
    hour_samples& h = hour_at(at);
    h.wait_s.push_back(static_cast<double>(waited.count()) / 1000);
    count_stage(h.figures, waited, bot);
    const std::uint32_t p = take_ticket(id, at);
    const std::size_t size = parties_[p].mmr.size();
    h.figures.matched_players += size;
    if (dc < queue_.latency().datacenters().size())
      h.rtt_ms.insert(h.rtt_ms.end(), size, queue_.latency().estimate_ms(parties_[p].where, dc));
    return p;
  }

  void matched(const session::formed_match& m) {
    const std::int64_t formed = sim_time(m.formed_at);
    hour_samples& h = hour_at(formed);
    ++h.figures.matches;
    if (m.bot_match) ++h.figures.bot_matches;
    std::size_t players = 0;
    std::unordered_map<player_id, std::uint32_t> team_of;
    for (std::size_t t = 0; t < m.teams.size(); ++t)
      for (player_id id : m.teams[t]) {
        team_of[id] = static_cast<std::uint32_t>(t);
        ++players;
      }
    if (!m.bot_match && players < c_.queue.max_players) ++h.figures.underfilled_matches;
    running_match rm;
    rm.ends_at = formed + std::chrono::milliseconds(c_.match_length).count();
    rm.datacenter = m.datacenter;
    const std::size_t quitter = !m.bot_match && c_.leave_rate > 0 && r_.unit() < c_.leave_rate
                                    ? r_.below(m.tickets.size())
                                    : m.tickets.size();
    for (std::size_t i = 0; i < m.tickets.size(); ++i) {
      const std::uint32_t p =
          seated(m.tickets[i], formed, m.formed_at - m.created[i], m.datacenter, m.bot_match);
      running_match::seated s{p, {}};
      for (std::size_t j = 0; j < parties_[p].mmr.size(); ++j)
        s.team_of.push_back(team_of[id_of(p, j)]);
      rm.players += static_cast<std::uint32_t>(s.team_of.size());
      rm.parties.push_back(std::move(s));
      if (i == quitter) {
        const auto length = std::chrono::milliseconds(c_.match_length).count();
        const std::int64_t at = formed + 1 + static_cast<std::int64_t>(r_.unit() * (length - 1));
        schedule(at, p, event::kind::quit, m.id);
      } else {
        after_match(p, rm.ends_at);
      }
    }
    if (m.bot_match) return;
    schedule(rm.ends_at, 0, event::kind::match_end, m.id);
    matches_.emplace(m.id, std::move(rm));
  }

  // A party leaves its running match (and the game) before the end: its
  // seats open, and with backfill the match asks for players.
  void quit(const event& e) {
    running_match& rm = matches_.at(e.match);
    const auto it =
        std::find_if(rm.parties.begin(), rm.parties.end(),
                     [&](const running_match::seated& s) { return s.party == e.party; });
    const auto size = static_cast<std::uint32_t>(it->team_of.size());
    rm.parties.erase(it);
    rm.players -= size;
    rm.open_since.insert(rm.open_since.end(), size, e.at_ms);
    hour_at(e.at_ms).figures.seats_opened += size;
    set_online(e.at_ms, -static_cast<std::int64_t>(size));
    if (c_.backfill) ask_for_players(e.match, rm, e.at_ms);
  }

  // The match's players now, registered (or updated) for backfill.
  void ask_for_players(std::uint64_t id, running_match& rm, std::int64_t at) {
    session::backfill_request b;
    b.match_id = std::to_string(id);
    const auto& dcs = queue_.latency().datacenters();
    if (rm.datacenter < dcs.size()) b.datacenter = dcs[rm.datacenter].name;
    b.teams.resize(queue_.backfills().teams());
    for (const auto& s : rm.parties)
      for (std::size_t j = 0; j < s.team_of.size(); ++j)
        b.teams[s.team_of[j]].push_back(seat_of(s.party, j));
    const auto started = clock::now();
    if (rm.parties.empty()) {
      if (rm.backfilling) queue_.stop_backfill(b.match_id);
      rm.backfilling = false;
    } else if (rm.backfilling) {
      queue_.update_backfill(b, engine_time(at));
    } else {
      queue_.add_backfill(b, engine_time(at));
      rm.backfilling = true;
    }
    engine_time_ += clock::now() - started;
  }

  // Tickets placed into a running match: their players join at once (the
  // reservation confirmed), each filling the seat empty the longest.
  void placed(const session::backfill_placement& p, std::int64_t now) {
    const session::seat_reservation& res = p.reservation;
    const std::uint64_t match = std::stoull(res.match_id);
    running_match& rm = matches_.at(match);
    queue_.confirm_reservation(res.id, {});
    hour_samples& h = hour_at(now);
    std::size_t k = 0;
    for (std::size_t i = 0; i < res.tickets.size(); ++i) {
      const std::uint32_t party =
          seated(res.tickets[i], now, engine_time(now) - res.created[i], rm.datacenter, false);
      running_match::seated s{party, {}};
      for (std::size_t j = 0; j < parties_[party].mmr.size(); ++j, ++k) {
        s.team_of.push_back(res.team_of[k]);
        if (rm.open_since.empty()) continue;
        h.refill_s.push_back(static_cast<double>(now - rm.open_since.front()) / 1000);
        rm.open_since.pop_front();
        ++h.figures.seats_refilled;
      }
      rm.players += static_cast<std::uint32_t>(s.team_of.size());
      rm.parties.push_back(std::move(s));
      after_match(party, rm.ends_at);
    }
  }

  void end_match(std::uint64_t id) {
    const auto it = matches_.find(id);
    if (it->second.backfilling) queue_.stop_backfill(std::to_string(id));
    matches_.erase(it);
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

  // A ticket that failed or gave up: its party leaves the game.
  void gave_up(session::ticket_id id, std::int64_t now) {
    const std::uint32_t p = take_ticket(id, now);
    ++hour_at(now).figures.failed;
    set_online(now, -static_cast<std::int64_t>(parties_[p].mmr.size()));
  }

  void sample_concurrent(std::int64_t now) {
    note_peak(now);
    hour_samples& h = hour_at(now - 1);
    h.concurrent_sum += static_cast<double>(online_);
    ++h.concurrent_samples;
    h.figures.concurrent_peak = std::max(h.figures.concurrent_peak, online_);
    for (const auto& [id, rm] : matches_) {
      h.empty_seats += c_.queue.max_players - std::min(rm.players, c_.queue.max_players);
      h.seats += c_.queue.max_players;
    }
  }

  session_day_report finish() {
    set_online(end_ms_, 0);
    session_day_report out;
    std::vector<double> all_wait, all_rtt, all_refill;
    double empty = 0, seats = 0;
    session_hour& t = out.totals;
    t.hour = static_cast<std::uint32_t>(hours_.size());
    double concurrent_sum = 0;
    std::uint64_t concurrent_samples = 0;
    for (hour_samples& h : hours_) {
      session_hour f = h.figures;
      f.time_to_match_s = summarize(h.wait_s);
      f.rtt_ms = summarize(h.rtt_ms);
      f.refill_s = summarize(h.refill_s);
      f.empty_seat_share = h.seats > 0 ? h.empty_seats / h.seats : 0;
      empty += h.empty_seats;
      seats += h.seats;
      all_refill.insert(all_refill.end(), h.refill_s.begin(), h.refill_s.end());
      t.underfilled_matches += f.underfilled_matches;
      t.seats_opened += f.seats_opened;
      t.seats_refilled += f.seats_refilled;
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
    t.refill_s = summarize(std::move(all_refill));
    t.empty_seat_share = seats > 0 ? empty / seats : 0;
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
  std::vector<party> parties_;
  std::unordered_map<std::uint64_t, running_match> matches_;  // by the engine's match id
  // Waiting tickets: their party and when they were created.
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
  if (!(c.leave_rate >= 0 && c.leave_rate <= 1) ||
      std::any_of(c.party_sizes.begin(), c.party_sizes.end(),
                  [](double w) { return !(w >= 0 && std::isfinite(w)); }))
    throw error(errc::invalid_argument,
                "session day: leave_rate within [0, 1], party size weights finite and >= 0");
  const auto started = std::chrono::steady_clock::now();
  session_day_report out = session_day(c).run();
  out.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return out;
}

}  // namespace mm::sim
