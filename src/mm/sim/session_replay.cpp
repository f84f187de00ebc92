#include "mm/sim/session_replay.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "mm/engine/error.hpp"
#include "mm/session/session_queue.hpp"

namespace mm::sim {

session::latency_stage stage_of(const session::queue_config& q, session::time_ms waited) {
  return q.latency ? session::stage_after(*q.latency, waited) : session::latency_stage::ideal;
}

namespace {

using session::ticket_state;
using session::time_ms;

constexpr std::int64_t hour_ms = 3'600'000;
constexpr std::int64_t never = std::numeric_limits<std::int64_t>::max();

// The replay: every queue of the config, ticked at its recorded moments
// (else on its own grid, multiples of its tick since 0), the tickets
// joining and the players cancelling at their recorded times. At the same
// moment: the joins, the cancels, the ticks (queues in name order), then
// the late joins.
class replay {
 public:
  explicit replay(const session_replay_config& c) : c_(c), ends_(c.tickets.size()) {
    std::map<std::string, const session::queue_config*> by_name;
    for (const auto& q : c.queues) by_name[q.name] = &q;
    std::uint64_t seed = c.seed;
    for (const auto& [name, q] : by_name) {
      index_[name] = queues_.size();
      const auto s = c.seeds.find(name);
      const auto t = c.ticks.find(name);
      const std::vector<std::int64_t>* recorded = t == c.ticks.end() ? nullptr : &t->second;
      queues_.push_back(
          {q, session::session_queue(*q, c.latency, s == c.seeds.end() ? seed : s->second),
           recorded, 0, 0});
      ++seed;
      queue& added = queues_.back();
      if (recorded) {
        if (!std::is_sorted(recorded->begin(), recorded->end()))
          throw error(errc::invalid_argument, "replay: the ticks of '" + name + "' are not sorted");
        added.next_tick = recorded->empty() ? never : recorded->front();
      }
    }
    for (std::size_t i = 0; i < c.tickets.size(); ++i) {
      const replay_ticket& t = c.tickets[i];
      if (i > 0 && t.created_ms < c.tickets[i - 1].created_ms)
        throw error(errc::invalid_argument, "replay: tickets are not sorted by creation time");
      if (t.recorded.state == ticket_state::cancelled)
        cancels_.push_back({std::max(owner_cancel_ms(t), t.created_ms), i});
      if (t.cancelled_ms >= 0 && t.cancelled_ms < t.created_ms)
        throw error(errc::invalid_argument,
                    "replay: ticket " + t.id + " is cancelled before its creation");
      if (t.late_after_ms >= 0 && t.late_after_ms < t.created_ms)
        throw error(errc::invalid_argument,
                    "replay: ticket " + t.id + " joins late before its creation");
      // (when, after the ticks of that moment, ticket)
      joins_.push_back(
          {t.late_after_ms >= 0 ? t.late_after_ms : t.created_ms, t.late_after_ms >= 0, i});
      if (!t.refused.empty()) continue;
      for (const auto& q : t.queues)
        if (!index_.count(q))
          throw error(errc::invalid_argument,
                      "replay: ticket " + t.id + " names queue '" + q + "', not configured");
    }
    std::stable_sort(cancels_.begin(), cancels_.end());
    std::sort(joins_.begin(), joins_.end());
  }

  // At one moment: the joins, the cancels, the ticks, then the late joins.
  std::vector<ticket_end> run() {
    std::size_t next_join = 0, next_cancel = 0;
    enum phase { joining, cancelling, ticking, joining_late };
    for (std::uint64_t step = 1;; ++step) {
      if (c_.check_budget && step % 4096 == 0) c_.check_budget();
      std::pair<std::int64_t, int> next{never, joining};
      if (next_join < joins_.size()) {
        const auto& [at, late, i] = joins_[next_join];
        next = {at, late ? joining_late : joining};
      }
      if (next_cancel < cancels_.size())
        next = std::min(next, {cancels_[next_cancel].first, cancelling});
      for (const auto& q : queues_) next = std::min(next, {q.next_tick, ticking});
      const std::int64_t now = next.first;
      if (now > c_.end_ms) break;
      if (next.second == joining || next.second == joining_late) {
        join(std::get<2>(joins_[next_join++]), now, next.second == joining_late);
      } else if (next.second == cancelling) {
        const std::size_t i = cancels_[next_cancel++].second;
        if (waiting_.count(i)) end(i, ticket_state::cancelled, now, "");
      } else {
        for (auto& q : queues_)
          if (q.next_tick == now) tick(q, now);
      }
    }
    return std::move(ends_);
  }

  std::uint64_t replaced() const { return replaced_; }

 private:
  struct queue {
    const session::queue_config* config;
    session::session_queue engine;
    const std::vector<std::int64_t>* recorded_ticks;  // null: the grid
    std::size_t next_recorded;
    std::int64_t next_tick;
  };

  // Ticket i joins its queues at `now` (its creation, or after the tick it
  // missed), created at its creation.
  void join(std::size_t i, std::int64_t now, bool late) {
    const replay_ticket& t = c_.tickets[i];
    if (!t.refused.empty()) {
      ends_[i].refused = t.refused;
      return;
    }
    // Its owner's cancel came first (a cancel at the same moment comes after
    // the joins, before the late joins).
    const std::int64_t cancel_at = owner_cancel_ms(t);
    if (t.recorded.state == ticket_state::cancelled &&
        (cancel_at < now || (late && cancel_at == now))) {
      end(i, ticket_state::cancelled, std::max(cancel_at, t.created_ms), "");
      return;
    }
    // A player's newer ticket: the one still waiting in the replay goes, as
    // the server's replace_existing (or the player's own cancel) did.
    for (const auto& p : t.request.players) {
      const auto it = player_in_.find(p.id);
      if (it == player_in_.end()) continue;
      const std::size_t older = it->second;
      ++replaced_;
      end(older, ticket_state::cancelled, now, "");
    }
    session::ticket_request r = t.request;
    r.replace_existing = false;
    // A multi-queue ticket without its own give-up time takes its first
    // queue's in every queue, as the server does.
    if (!r.give_up_after && t.queues.size() > 1)
      r.give_up_after = queues_[index_.at(t.queues.front())].config->give_up_after;
    const session::ticket_id id = i + 1;
    try {
      for (const auto& name : t.queues)
        queues_[index_.at(name)].engine.add(r, time_ms(t.created_ms), id);
    } catch (const error& e) {
      // Refused by one queue's rules: out of every queue it joined.
      for (const auto& name : t.queues) queues_[index_.at(name)].engine.cancel(id);
      ends_[i].refused = e.what();
      return;
    }
    waiting_.insert(i);
    for (const auto& p : t.request.players) player_in_[p.id] = i;
  }

  void tick(queue& q, std::int64_t now) {
    if (q.recorded_ticks) {
      // The next recorded moment after this one (two ticks may share a ms).
      const auto& t = *q.recorded_ticks;
      while (q.next_recorded < t.size() && t[q.next_recorded] <= now) ++q.next_recorded;
      q.next_tick = q.next_recorded < t.size() ? t[q.next_recorded] : never;
    } else {
      q.next_tick = now + std::max<std::int64_t>(1, q.config->tick.count());
    }
    const session::tick_result r = q.engine.tick(time_ms(now));
    for (const auto& m : r.matches) {
      std::vector<std::string> ids;
      for (const auto id : m.tickets) ids.push_back(c_.tickets[id - 1].id);
      std::sort(ids.begin(), ids.end());
      for (const auto id : m.tickets) {
        ticket_end& e = end(id - 1, ticket_state::matched, now, q.config->name);
        e.mmr_spread = m.mmr_spread;
        e.worst_rtt_ms = m.datacenter < c_.latency.datacenters().size() ? m.worst_rtt_ms : -1;
        e.bot = m.bot_match;
        e.match = ids;
      }
    }
    for (const auto id : r.expired) end(id - 1, ticket_state::expired, now, q.config->name);
    for (const auto id : r.failed) end(id - 1, ticket_state::failed, now, q.config->name);
  }

  // Ticket i leaves the replay: out of every queue it waits in, its players
  // free.
  ticket_end& end(std::size_t i, ticket_state state, std::int64_t now, const std::string& where) {
    const replay_ticket& t = c_.tickets[i];
    waiting_.erase(i);
    for (const auto& name : t.queues) queues_[index_.at(name)].engine.cancel(i + 1);
    for (const auto& p : t.request.players) {
      const auto it = player_in_.find(p.id);
      if (it != player_in_.end() && it->second == i) player_in_.erase(it);
    }
    ticket_end& e = ends_[i];
    e.state = state;
    e.at_ms = now;
    e.queue = where.empty() ? t.queues.front() : where;
    return e;
  }

  const session_replay_config& c_;
  std::vector<queue> queues_;
  std::unordered_map<std::string, std::size_t> index_;
  std::vector<std::pair<std::int64_t, std::size_t>> cancels_;  // (when, ticket)
  std::vector<std::tuple<std::int64_t, bool, std::size_t>> joins_;
  std::vector<ticket_end> ends_;
  std::set<std::size_t> waiting_;
  std::unordered_map<player_id, std::size_t> player_in_;
  std::uint64_t replaced_ = 0;
};

// One side's figures as they are being gathered: the samples kept until the
// distributions are summed up.
struct gathering {
  replay_figures f;
  std::vector<double> waits, spreads, rtts;

  void count(const replay_ticket& t, const ticket_end& e, const session::queue_config* q) {
    ++f.tickets;
    if (!e.refused.empty()) {
      ++f.refused;
      return;
    }
    switch (e.state) {
      case ticket_state::waiting:
        ++f.waiting;
        return;
      case ticket_state::cancelled:
        ++f.cancelled;
        return;
      case ticket_state::expired:
        ++f.expired;
        return;
      case ticket_state::failed:
        ++f.failed;
        return;
      case ticket_state::matched:
        break;
    }
    ++f.matched;
    const time_ms waited(std::max<std::int64_t>(0, e.at_ms - t.created_ms));
    waits.push_back(static_cast<double>(waited.count()) / 1000);
    spreads.push_back(e.mmr_spread);
    if (e.worst_rtt_ms >= 0) rtts.push_back(e.worst_rtt_ms);
    if (e.placed) ++f.placed;
    if (e.bot) {
      ++f.bot;
      return;
    }
    switch (q ? stage_of(*q, waited) : session::latency_stage::ideal) {
      case session::latency_stage::ideal:
        ++f.ideal;
        break;
      case session::latency_stage::expand:
        ++f.expand;
        break;
      default:
        ++f.warm_body;  // a failed stage matched before it was failed
    }
  }

  replay_figures done() {
    f.time_to_match_s = summarize(std::move(waits));
    f.mmr_spread = summarize(std::move(spreads));
    f.worst_rtt_ms = summarize(std::move(rtts));
    return f;
  }
};

struct row_gathering {
  gathering recorded, replayed;
};

// The config of queue `name` among `queues`: by its name, else by a shard's
// base name ("coop" for "coop.eu"); nullptr when neither.
const session::queue_config* config_of(const std::vector<session::queue_config>& queues,
                                       const std::string& name) {
  for (const auto& q : queues)
    if (q.name == name) return &q;
  const auto dot = name.find('.');
  if (dot == std::string::npos) return nullptr;
  for (const auto& q : queues)
    if (q.name == name.substr(0, dot)) return &q;
  return nullptr;
}

}  // namespace

session_replay_report replay_sessions(const session_replay_config& c) {
  const auto started = std::chrono::steady_clock::now();
  session_replay_report out;
  replay r(c);
  out.replayed = r.run();
  out.replaced = r.replaced();

  std::map<std::int64_t, row_gathering> hours;
  std::map<std::string, row_gathering> queues;
  row_gathering all;
  for (std::size_t i = 0; i < c.tickets.size(); ++i) {
    const replay_ticket& t = c.tickets[i];
    const ticket_end& rec = t.recorded;
    const ticket_end& rep = out.replayed[i];
    const std::string& home = t.queues.empty() ? rec.queue : t.queues.front();
    const auto* rec_q = config_of(c.recorded_queues, rec.queue.empty() ? home : rec.queue);
    if (!rec_q) rec_q = config_of(c.queues, rec.queue.empty() ? home : rec.queue);
    const auto* rep_q = config_of(c.queues, rep.queue.empty() ? home : rep.queue);
    for (row_gathering* g : {&hours[t.created_ms / hour_ms], &queues[home], &all}) {
      g->recorded.count(t, rec, rec_q);
      g->replayed.count(t, rep, rep_q);
    }
    if (rec.state == ticket_state::matched && !rec.placed && !rec.bot) {
      ++out.recorded_matched;
      if (rep.state == ticket_state::matched && rep.match == rec.match) ++out.same_match;
    }
  }
  for (auto& [hour, g] : hours) {
    replay_row row{"", hour, g.recorded.done(), g.replayed.done()};
    out.hours.push_back(std::move(row));
  }
  for (auto& [name, g] : queues)
    out.queues.push_back({name, -1, g.recorded.done(), g.replayed.done()});
  out.totals = {"", -1, all.recorded.done(), all.replayed.done()};
  out.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return out;
}

}  // namespace mm::sim
