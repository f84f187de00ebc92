// Running lobbies, filled before new ones are opened: game servers register
// their lobbies and keep the player counts up to date; find() places a party
// in the fullest lobby of its modes and region that has room for all of it.
//
// Invariants: a lobby never holds more players than its max; a party is
// placed whole or not at all; among the lobbies with room for the party,
// find() picks one with the fewest free seats (ties drawn at random, seeded).
//
// Plain C++, single-threaded, on a clock its caller supplies.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "mm/engine/random.hpp"
#include "mm/session/latency.hpp"
#include "mm/session/ticket.hpp"

namespace mm::session {

struct lobby_config {
  // Seats of a lobby find() creates, by mode; others get default_max_players.
  std::vector<std::pair<std::string, std::uint32_t>> max_players_by_mode;
  std::uint32_t default_max_players = 16;
  // A lobby with no players for this long is closed by close_idle().
  std::chrono::milliseconds idle_after{60'000};
  // Bounds on what callers may ask for: a registered lobby's seats, a
  // party's size, the lobbies held in all and by one owner (the credential
  // that registered the lobby, or whose find created it).
  std::uint32_t max_lobby_players = 1000;
  std::uint32_t max_party_size = 64;
  std::size_t max_lobbies = 100'000;
  std::size_t max_lobbies_per_owner = 10'000;
};

struct lobby {
  std::string id;
  std::string mode;
  std::size_t datacenter = 0;  // index into the registry's datacenters
  std::uint32_t max_players = 0;
  std::uint32_t players = 0;
  bool created_by_find = false;
  time_ms empty_since{0};  // meaningful while players == 0
  std::string owner;       // who registered it (or whose find created it)
};

struct find_lobby_request {
  std::vector<std::string> modes;  // at least one; a created lobby gets the first
  std::uint32_t party_size = 1;
  // The region to play in; unset: the region of the datacenter nearest to
  // the player (by its measured RTTs, else by its location).
  std::optional<std::string> region;
  std::vector<std::pair<std::string, double>> rtt_ms;
  std::optional<geo_point> location;
  bool prevent_auto_create = false;
  std::string owner;  // owns the lobby a find creates
};

struct find_lobby_result {
  std::string lobby_id;
  std::size_t datacenter = 0;
  bool created = false;
  std::uint32_t players = 0;  // the lobby's count with the party in it
};

// A suggestion to compact lobbies: the players of `from` would all fit in
// `to`, a fuller lobby of the same mode and region.
struct lobby_move {
  std::string from, to;
  std::uint32_t players = 0;
};

class lobby_registry {
 public:
  // Throws mm::error (invalid_config) when there are no datacenters or a
  // lobby size is 0.
  lobby_registry(latency_model latency, lobby_config config, std::uint64_t seed);

  // Errors are mm::error (invalid_argument) naming the field first
  // ("max_players: ..."); (limit_reached) when the registry, or the owner's
  // share of it, is full.
  void register_lobby(const std::string& id, const std::string& mode, const std::string& datacenter,
                      std::uint32_t max_players, std::uint32_t players, time_ms now,
                      const std::string& owner = {});
  void update(const std::string& id, std::uint32_t players, time_ms now);
  bool close(const std::string& id);

  // Places the party; throws mm::error (no_available_lobby) when nothing
  // fits and the request prevents creating a lobby, (invalid_argument) for
  // a bad request.
  find_lobby_result find(const find_lobby_request& request, time_ms now);

  // Compaction: for the near-empty lobbies (1 .. near_empty_players
  // players, not full), emptiest first, the fullest lobby of the same mode and region
  // that has more players and room for all of theirs. Seats are counted
  // once across the plan; a lobby is emptied or receives, never both. The
  // registry is not changed: the game asks those players to re-find (or
  // moves them) and its servers update the counts.
  std::vector<lobby_move> plan_compaction(std::uint32_t near_empty_players) const;

  // Closes the lobbies empty for idle_after or longer; their ids.
  std::vector<std::string> close_idle(time_ms now);

  std::size_t size() const { return lobbies_.size(); }
  const std::unordered_map<std::string, lobby>& lobbies() const { return lobbies_; }
  const lobby* get(const std::string& id) const;
  const latency_model& latency() const { return latency_; }

 private:
  // Per (mode, region): the lobbies with room, by free seats, then a random
  // tiebreak drawn whenever the count changes.
  using seat_key = std::tuple<std::uint32_t, std::uint64_t, std::string>;
  using shelf = std::set<seat_key>;

  shelf& shelf_of(const lobby& l);
  void shelve(lobby& l, std::uint64_t& tie_out);
  void unshelve(const lobby& l);
  void set_players(lobby& l, std::uint32_t players, time_ms now);
  std::string region_for(const find_lobby_request& r) const;
  std::size_t datacenter_in(const std::string& region, const find_lobby_request& r) const;
  std::uint32_t capacity_of(const std::string& mode) const;

  latency_model latency_;
  lobby_config config_;
  rng rng_;
  std::unordered_map<std::string, lobby> lobbies_;
  std::unordered_map<std::string, std::uint64_t> tie_;  // lobby id -> its current tiebreak
  std::unordered_map<std::string, shelf> shelves_;      // "mode\nregion" -> lobbies with room
  std::unordered_map<std::string, std::size_t> owned_;  // owner -> lobbies held
  std::uint64_t created_ = 0;
};

}  // namespace mm::session
