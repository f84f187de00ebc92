// The compile-time plug-in point of a session queue: a game changes how its
// queue treats new tickets and how it builds a match, without forking the
// loop. The queue is a template over its plug-in (basic_session_queue), so
// the hooks are inlined; standard_plugin is the queue as configured. A game
// derives from it and hides the hook it changes (examples/session_modes.cpp),
// with one function of that name (not overloaded, not a template: the queue
// tells a replaced build_match by its type).
//
//   ticket_verdict initialize(const ticket_request&, const waiting_ticket&,
//                             const queue_config&)
//     Called for every new ticket after the queue checked and compiled it.
//     May let it wait (the default), reject it (the request fails with the
//     plug-in's field and reason) or fast-track it: a party that is a whole
//     match by itself forms its match at the next tick, alone, in teams the
//     plug-in may choose.
//
//   build_decision build_match(const waiting_ticket& seed,
//                              std::span<const plugin_candidate> candidates,
//                              const match_context&)
//     Called for every seed with its candidates: the waiting tickets the
//     seed's rules admit, nearest first, as many as the queue's `candidates`.
//     May keep the queue's greedy build (the default), form no match for
//     this seed this tick, or name the candidates that join the seed (and the
//     teams). The queue still checks a plan: distinct candidates, the match
//     size, the teams (exact sizes, every player once) and a datacenter
//     within every ticket's latency threshold. The rules' filters are the
//     plug-in's business then: it replaced the comparison. A plan that fails
//     the check forms nothing and is counted (queue_stats::rejected_plans).
#pragma once

#include <concepts>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "mm/session/queue_config.hpp"
#include "mm/session/waiting_ticket.hpp"

namespace mm::session {

// What initialize() decides for a new ticket.
struct ticket_verdict {
  enum class action : std::uint8_t { wait, fast_track, reject };
  action what = action::wait;
  std::string field, reason;  // reject: the offending field and why
  // fast_track: the players by team; empty: the queue assigns them.
  std::vector<std::vector<player_id>> teams;

  static ticket_verdict wait() { return {}; }
  static ticket_verdict reject(std::string field, std::string reason) {
    return {action::reject, std::move(field), std::move(reason), {}};
  }
  static ticket_verdict fast_track(std::vector<std::vector<player_id>> teams = {}) {
    return {action::fast_track, {}, {}, std::move(teams)};
  }
};

// A candidate for a seed's match, as build_match() sees it.
struct plugin_candidate {
  const waiting_ticket* ticket;
  double distance;  // the rules' weighted distance to the seed
};

struct match_context {
  time_ms now;
  time_ms waited;  // how long the seed has waited
  const queue_config& config;
};

// What build_match() decides for a seed.
struct build_decision {
  enum class action : std::uint8_t { standard, plan, none };
  action what = action::standard;
  // plan: positions in `candidates` of the tickets that join the seed.
  std::vector<std::size_t> members;
  // plan: the players by team; empty: the queue assigns them (keeping
  // parties together unless the queue splits them, and its balance rule).
  std::vector<std::vector<player_id>> teams;

  static build_decision standard() { return {}; }
  static build_decision none() { return {action::none, {}, {}}; }
  static build_decision plan(std::vector<std::size_t> members,
                             std::vector<std::vector<player_id>> teams = {}) {
    return {action::plan, std::move(members), std::move(teams)};
  }
};

template <class P>
concept session_plugin = requires(P& p, const ticket_request& r, const waiting_ticket& t,
                                  const queue_config& c,
                                  std::span<const plugin_candidate> candidates,
                                  const match_context& ctx) {
  { p.initialize(r, t, c) } -> std::same_as<ticket_verdict>;
  { p.build_match(t, candidates, ctx) } -> std::same_as<build_decision>;
};

// The queue as configured: every ticket waits, the loop builds every match.
struct standard_plugin {
  ticket_verdict initialize(const ticket_request&, const waiting_ticket&, const queue_config&) {
    return ticket_verdict::wait();
  }
  build_decision build_match(const waiting_ticket&, std::span<const plugin_candidate>,
                             const match_context&) {
    return build_decision::standard();
  }
};

static_assert(session_plugin<standard_plugin>);

}  // namespace mm::session
