// Every typed actor interface a game sees, one line per handler: the one
// header a game's own actors include to hold and call matchmaker handles.
//
// A game talks to a matchmaker through `interfaces<Profile>::client` (the
// routing client over an instance set) or `interfaces<Profile>::matchmaker`
// (an instance, or the supervisor standing in front of one), locally or
// through CAF's network layer. Light on purpose: CAF's typed-actor headers and
// the message types, no CAF runtime, no database. The database worker's
// interface is internal and lives beside it (db_worker.hpp).
#pragma once

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "mm/actors/backfill_messages.hpp"
#include "mm/actors/explain_messages.hpp"
#include "mm/actors/messages.hpp"
#include "mm/actors/session_messages.hpp"

namespace mm::actors {

using find_atom = caf::atom_constant<caf::atom("find")>;
using update_atom = caf::atom_constant<caf::atom("update")>;
using enroll_atom = caf::atom_constant<caf::atom("enroll")>;
using remove_atom = caf::atom_constant<caf::atom("remove")>;
using info_atom = caf::atom_constant<caf::atom("info")>;
using player_atom = caf::atom_constant<caf::atom("player")>;
using inspect_atom = caf::atom_constant<caf::atom("inspect")>;
using top_atom = caf::atom_constant<caf::atom("top")>;
using rebalance_atom = caf::atom_constant<caf::atom("rebalance")>;
using clear_atom = caf::atom_constant<caf::atom("clear")>;
using configure_atom = caf::atom_constant<caf::atom("configure")>;
using explain_atom = caf::atom_constant<caf::atom("explain")>;
using stats_atom = caf::atom_constant<caf::atom("stats")>;
using next_atom = caf::atom_constant<caf::atom("next")>;

// Timers and internal traffic.
using scan_tick_atom = caf::atom_constant<caf::atom("scantick")>;
using snapshot_tick_atom = caf::atom_constant<caf::atom("snaptick")>;
using rebalance_tick_atom = caf::atom_constant<caf::atom("rebaltick")>;
using restart_atom = caf::atom_constant<caf::atom("restart")>;

// Leases (a node of a cluster: docs/design.md, "Leases").
using lease_atom = caf::atom_constant<caf::atom("lease")>;
using hand_over_atom = caf::atom_constant<caf::atom("handover")>;
using lease_lost_atom = caf::atom_constant<caf::atom("leaselost")>;
using lease_wait_atom = caf::atom_constant<caf::atom("leasewait")>;
using shards_atom = caf::atom_constant<caf::atom("shards")>;
// A connection of the actor port presents a token (identity.hpp).
using hello_atom = caf::atom_constant<caf::atom("hello")>;

// The session matchmaker.
using ticket_atom = caf::atom_constant<caf::atom("ticket")>;
using create_atom = caf::atom_constant<caf::atom("create")>;
using cancel_atom = caf::atom_constant<caf::atom("cancel")>;
using status_atom = caf::atom_constant<caf::atom("status")>;
using session_tick_atom = caf::atom_constant<caf::atom("sesstick")>;
using lobby_atom = caf::atom_constant<caf::atom("lobby")>;
using close_atom = caf::atom_constant<caf::atom("close")>;

// A matchmaker's new profile (configure_atom): `rebuild` when its buckets
// differ from the old one's.
template <class Profile>
struct profile_change {
  Profile profile;
  bool rebuild = false;
};

template <class Profile>
struct interfaces {
  using model = typename Profile::model_type;
  using query = typename Profile::query_type;

  // What game actors need: the client speaks this much, routing over a set.
  using client = caf::typed_actor<
      // Find an opponent: Success, NoneFound, FakeOpponent or InvalidRequest.
      typename caf::replies_to<find_atom, match_request<query>>::template with<match_reply<model>>,
      // The same for up to max_batch_queries queries in one message (one
      // round trip over the network for many): the replies in the same order.
      typename caf::replies_to<find_atom, std::vector<match_request<query>>>::template with<
          std::vector<match_reply<model>>>,
      // Player state update, fire and forget; no models: no longer a target.
      caf::reacts_to<update_atom, player_update<model>>,
      // The same for up to max_batch_updates updates in one message, applied
      // in order; a longer batch is dropped whole (client_stats::updates_refused).
      caf::reacts_to<update_atom, std::vector<player_update<model>>>,
      // Enroll a player by id: its row is read and goes through the model
      // factory into the cache; true when the cache changed.
      caf::replies_to<enroll_atom, player_id>::with<bool>,
      // Remove every entry of a player; true when the cache changed.
      caf::replies_to<remove_atom, player_id>::with<bool>>;

  // A member of an instance set as the others (and a router) see it: a query
  // on its way through the set (set_route). An instance that finds none passes
  // it to the next member itself; the answer goes straight to the caller.
  using set_member =
      caf::typed_actor<typename caf::replies_to<find_atom, match_request<query>,
                                                set_route>::template with<match_reply<model>>>;

  // A node of a cluster as the cluster client sees it: the client's
  // messages, and what the node serves now (its shards by index of the set,
  // and whether it runs the session queues).
  using cluster_member =
      typename client::template extend<caf::replies_to<shards_atom>::with<served_resources>>;

  // The routing client actor over an instance set (for callers that hold one
  // handle, such as game nodes across the network): the client's messages and
  // its own counts.
  using routing_client = typename client::template extend<
      // Queries by result as the game saw them, failed instance requests, updates.
      caf::replies_to<stats_atom>::with<client_stats>>;

  // One matchmaker (an instance, or its supervisor): the client's messages, the
  // routed query, and the introspection and maintenance ones.
  using matchmaker = typename client::template extend_with<set_member>::template extend<
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
      // A new profile (docs/operations.md, "Changing the configuration while
      // it runs"): judged from the next query; with rebuild true the buckets
      // start over (then snapshot; a scan refills at once). Sent between the
      // actors of one process only.
      typename caf::replies_to<configure_atom, profile_change<Profile>>::template with<bool>,
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
      caf::reacts_to<rebalance_tick_atom>,
      // The member a routed query goes to next when this one finds none.
      caf::reacts_to<next_atom, set_member>>;

  // A supervisor: the matchmaker interface, forwarded to its current instance.
  using supervisor = typename matchmaker::template extend<
      // Start the instance again after a crash (sent to itself after a backoff).
      caf::reacts_to<restart_atom>,
      // The member a routed query goes to next (told to every new instance too).
      caf::reacts_to<next_atom, set_member>,
      // A leased shard: serve it from now, its writes fenced by (node, epoch);
      // true once its instance is started (it then reads its snapshot).
      caf::replies_to<lease_atom, std::string, std::uint64_t>::with<bool>,
      // The end of a lease's wait for the last instance to stop (sent to itself).
      caf::reacts_to<lease_wait_atom, std::uint64_t>,
      // Stop serving it: the instance writes its last snapshot and stops;
      // true once it has (the lease may then be freed).
      caf::replies_to<lease_atom, hand_over_atom>::with<bool>,
      // The lease was lost (the node's heartbeat lapsed): the instance stops
      // at once, without its last snapshot; true once it has.
      caf::replies_to<lease_atom, lease_lost_atom>::with<bool>>;
};

// The session matchmaker (docs/session.md): queues of tickets for live
// matches among players who are all online.
struct session_interfaces {
  // A ticket's owner: told once what became of the ticket when it leaves its
  // queue (matched, with the match; cancelled; expired; failed).
  using owner = caf::typed_actor<caf::reacts_to<ticket_atom, ticket_outcome>>;

  // Running lobbies, filled fullest first (session::lobby_registry). Errors
  // name the field ("players: ..."). A lobby belongs to the credential that
  // registered it (or whose find created it): an update or close carries
  // the caller's credential ("": an admin's, any lobby), and another's lobby
  // is treated as one that does not exist.
  using lobbies = caf::typed_actor<
      // A game server's lobby: true, or an error (duplicate id, unknown
      // datacenter, players over max_players).
      caf::replies_to<lobby_atom, create_atom, lobby_registration>::with<bool>,
      // Its player count now (id, players, credential): true, or
      // errc::not_found for an unknown lobby.
      caf::replies_to<lobby_atom, update_atom, std::string, std::uint32_t, std::string>::with<bool>,
      // Closed (id, credential): false when there was no such lobby.
      caf::replies_to<lobby_atom, close_atom, std::string, std::string>::with<bool>,
      // A lobby for a party, created when none has room (unless the query
      // prevents it: then errc::no_available_lobby).
      caf::replies_to<lobby_atom, find_atom, lobby_query>::with<lobby_placement>,
      // Counts and lobbies by datacenter.
      caf::replies_to<lobby_atom, info_atom>::with<lobbies_report>,
      // Every lobby (for persistence and listings).
      caf::replies_to<lobby_atom, inspect_atom>::with<std::vector<lobby_registration>>>;

  // Running matches asking for players (backfill, docs/session.md): a game
  // server registers its match in a queue, updates its players, confirms or
  // releases the seats its placements hold, and stops it. Match ids are
  // unique across the server's queues. The credential of each message is
  // the caller's, set by the front ends whatever the sender put there; a
  // match belongs to the credential that registered it, and another's is
  // errc::not_found. Changes answer once durable; errors name the field.
  using backfills = caf::typed_actor<
      caf::replies_to<backfill_atom, create_atom, backfill_registration>::with<backfill_state>,
      caf::replies_to<backfill_atom, update_atom, backfill_registration>::with<backfill_state>,
      // Stop (match id, credential): true once durable.
      caf::replies_to<backfill_atom, close_atom, std::string, std::string>::with<bool>,
      caf::replies_to<backfill_atom, confirm_atom, seat_change>::with<backfill_state>,
      caf::replies_to<backfill_atom, release_atom, seat_change>::with<backfill_state>,
      // One match (match id, credential), with its seats counted.
      caf::replies_to<backfill_atom, status_atom, std::string, std::string>::with<backfill_state>,
      // The matches of a queue ("": of every queue) whose credential is the
      // given one ("": every credential's, for an admin).
      caf::replies_to<backfill_atom, inspect_atom, std::string,
                      std::string>::with<std::vector<backfill_state>>,
      // Why its open seats wait (match id, candidates judged at most,
      // credential): the candidates of other credentials' tickets without
      // their ids (docs/session.md, "Why is my ticket waiting?").
      caf::replies_to<backfill_atom, explain_atom, std::string, std::uint32_t,
                      std::string>::with<session::explanation>>;

  // The lobbies actor: the lobbies' messages and its idle-close timer.
  using lobbies_actor = lobbies::extend<caf::reacts_to<lobby_atom, session_tick_atom>>;

  // Every queue of a server behind one handle (what a game holds): tickets
  // by queue name, then by ticket id (public ids, unique across queues,
  // restarts and nodes); and the server's lobbies.
  using service = caf::typed_actor<
      // A ticket in the named queue (and in its also_queues): its id once it
      // is durable, or an error naming the field ("queue" for a queue that
      // does not exist and cannot be made; errc::conflict for a player who
      // waits already). The owner (may be invalid: then the caller polls the
      // status) is told the outcome once it is durable.
      caf::replies_to<create_atom, std::string, session_ticket, owner>::with<std::uint64_t>,
      // Cancel a waiting ticket: true once durable, false when it is not
      // waiting; errc::not_found for an id it does not know.
      caf::replies_to<cancel_atom, std::uint64_t>::with<bool>,
      // The same for a caller that may cancel only the tickets of its
      // credential: another's is not_found, as an unknown id.
      caf::replies_to<cancel_atom, std::uint64_t, std::string>::with<bool>,
      // Waiting, or what became of it (within the outcome retention), with
      // its credential; errc::not_found for others.
      caf::replies_to<status_atom, std::uint64_t>::with<ticket_outcome>,
      // Why a waiting ticket waits, in each of its queues (ticket id,
      // candidates judged at most, credential: "" for an admin's, else
      // another's ticket is errc::not_found and the candidates of other
      // credentials' tickets come without their ids); errc::not_found when
      // it is not waiting.
      caf::replies_to<explain_atom, std::uint64_t, std::uint32_t,
                      std::string>::with<std::vector<session::explanation>>,
      // Every queue's counts, by name.
      caf::replies_to<info_atom>::with<std::vector<session_queue_report>>,
      // A page (offset, limit) of the named queue's waiting tickets, oldest
      // first; an error naming "queue" for no such queue.
      caf::replies_to<inspect_atom, std::string, std::uint32_t, std::uint32_t>::with<
          std::vector<waiting_ticket_view>>>::extend_with<lobbies>::extend_with<backfills>;
};

}  // namespace mm::actors

// A profile change travels between the actors of one process only (never
// over the network), whatever the profile.
namespace caf {
template <class Profile>
struct allowed_unsafe_message_type<mm::actors::profile_change<Profile>> : std::true_type {};
}  // namespace caf
