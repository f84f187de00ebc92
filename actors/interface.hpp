// Every typed actor interface of the matchmaker, one line per handler.
//
// A game talks to a matchmaker through `interfaces<Profile>::matchmaker`:
// an instance, the supervisor standing in front of one, or the client that
// routes over a set of them all speak it, locally or through CAF's network
// layer.
#pragma once

#include <caf/all.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "messages.hpp"

namespace mm::actors {

using find_atom = caf::atom_constant<caf::atom("find")>;
using update_atom = caf::atom_constant<caf::atom("update")>;
using enroll_atom = caf::atom_constant<caf::atom("enroll")>;
using info_atom = caf::atom_constant<caf::atom("info")>;
using player_atom = caf::atom_constant<caf::atom("player")>;
using inspect_atom = caf::atom_constant<caf::atom("inspect")>;
using top_atom = caf::atom_constant<caf::atom("top")>;
using rebalance_atom = caf::atom_constant<caf::atom("rebalance")>;
using clear_atom = caf::atom_constant<caf::atom("clear")>;
using explain_atom = caf::atom_constant<caf::atom("explain")>;
using stats_atom = caf::atom_constant<caf::atom("stats")>;

// Timers and internal traffic.
using scan_tick_atom = caf::atom_constant<caf::atom("scantick")>;
using snapshot_tick_atom = caf::atom_constant<caf::atom("snaptick")>;
using rebalance_tick_atom = caf::atom_constant<caf::atom("rebaltick")>;
using restart_atom = caf::atom_constant<caf::atom("restart")>;
using scan_atom = caf::atom_constant<caf::atom("scan")>;
using save_atom = caf::atom_constant<caf::atom("save")>;
using load_atom = caf::atom_constant<caf::atom("load")>;
using set_aside_atom = caf::atom_constant<caf::atom("setaside")>;
using fetch_atom = caf::atom_constant<caf::atom("fetch")>;
using sample_atom = caf::atom_constant<caf::atom("sample")>;

template <class Profile>
struct interfaces {
  using model = typename Profile::model_type;
  using query = typename Profile::query_type;

  // What game actors need: the client speaks this much, routing over a set.
  using client = caf::typed_actor<
      // Find an opponent: Success, NoneFound, FakeOpponent or InvalidRequest.
      typename caf::replies_to<find_atom, match_request<query>>::template with<match_reply<model>>,
      // Player state update, fire and forget; no models: no longer a target.
      caf::reacts_to<update_atom, player_update<model>>,
      // Enroll (false) or remove (true) a player by id; true when the cache changed.
      caf::replies_to<enroll_atom, player_id, bool>::with<bool>>;

  // The routing client over an instance set: the client's messages and its
  // own counts (the game's view of its queries).
  using routing_client = typename client::template extend<
      // Queries by result as the game saw them, failed instance requests, updates.
      caf::replies_to<stats_atom>::with<client_stats>>;

  // One matchmaker (an instance, or its supervisor): the client's messages and
  // the introspection and maintenance ones.
  using matchmaker = typename client::template extend<
      // Name, players, fill, buckets, sizing and scan state, snapshot size.
      caf::replies_to<info_atom>::with<instance_info>,
      // Participation, MMR, percentile and buckets of one player.
      caf::replies_to<player_atom, player_id>::with<player_info>,
      // One page (bucket, offset, limit) of a bucket's players, MMR descending.
      typename caf::replies_to<inspect_atom, std::uint32_t, std::uint32_t,
                               std::uint32_t>::template with<std::vector<model>>,
      // The N cached players with the highest MMR.
      typename caf::replies_to<top_atom, std::uint32_t>::template with<std::vector<model>>,
      // Rebalance now (then snapshot).
      caf::replies_to<rebalance_atom>::with<rebalance_report>,
      // Drop every cached player (then snapshot; the scan refills).
      caf::replies_to<clear_atom>::with<bool>,
      // "Why no match": the request tried with retries 0..N, changing nothing.
      typename caf::replies_to<explain_atom, match_request<query>,
                               std::uint32_t>::template with<query_explanation>>;

  // An instance: the matchmaker interface plus its own timers.
  using instance = typename matchmaker::template extend<
      // Scan the player table now and re-arm (one scan in flight at most).
      caf::reacts_to<scan_tick_atom>,
      // Write a snapshot now and re-arm.
      caf::reacts_to<snapshot_tick_atom>,
      // Rebalance (and snapshot) now and re-arm.
      caf::reacts_to<rebalance_tick_atom>>;

  // A supervisor: the matchmaker interface, forwarded to its current instance.
  using supervisor = typename matchmaker::template extend<
      // Start the instance again after a crash (sent to itself after a backoff).
      caf::reacts_to<restart_atom>>;
};

// The database worker: blocking SQLite work on its own thread.
using db_worker = caf::typed_actor<
    // Read about `fetch` rows in batches of `batch` through the scan pointers.
    caf::replies_to<scan_atom, std::uint32_t, std::uint32_t>::with<scan_result>,
    // Write an instance's snapshot in one transaction; replies its size.
    caf::replies_to<save_atom, std::string, stored_state>::with<std::uint64_t>,
    // Read an instance's snapshot: (found, state).
    caf::replies_to<load_atom, std::string>::with<bool, stored_state>,
    // Move an instance's snapshot to matchmaker_state_rejected with a reason.
    caf::replies_to<set_aside_atom, std::string, std::string, std::int64_t>::with<bool>,
    // Read one player row: (found, row).
    caf::replies_to<fetch_atom, player_id>::with<bool, player_row>,
    // About N rows spread over the whole table (the sizing sample of a cold start).
    caf::replies_to<sample_atom, std::uint32_t>::with<scan_result>>;

}  // namespace mm::actors
