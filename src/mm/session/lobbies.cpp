#include "mm/session/lobbies.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "mm/engine/error.hpp"
#include "mm/session/refuse.hpp"

namespace mm::session {

namespace {

std::string shelf_key(const std::string& mode, const std::string& region) {
  return mode + '\n' + region;
}
}  // namespace

lobby_registry::lobby_registry(latency_model latency, lobby_config config, std::uint64_t seed)
    : latency_(std::move(latency)), config_(std::move(config)), rng_(seed) {
  if (latency_.datacenters().empty())
    throw error(errc::invalid_config, "lobbies: at least one datacenter is needed");
  if (config_.default_max_players == 0)
    throw error(errc::invalid_config, "lobbies.default_max_players must be at least 1");
  if (config_.default_max_players > config_.max_lobby_players)
    throw error(errc::invalid_config, "lobbies.default_max_players must not exceed " +
                                          std::to_string(config_.max_lobby_players));
  for (const auto& [mode, n] : config_.max_players_by_mode)
    if (n == 0)
      throw error(errc::invalid_config,
                  "lobbies.max_players_by_mode." + mode + " must be at least 1");
}

const lobby* lobby_registry::get(const std::string& id) const {
  const auto it = lobbies_.find(id);
  return it == lobbies_.end() ? nullptr : &it->second;
}

lobby_registry::shelf& lobby_registry::shelf_of(const lobby& l) {
  return shelves_[shelf_key(l.mode, latency_.datacenters()[l.datacenter].region)];
}

void lobby_registry::shelve(lobby& l, std::uint64_t& tie_out) {
  tie_out = rng_();
  if (l.players < l.max_players) shelf_of(l).insert({l.max_players - l.players, tie_out, l.id});
}

void lobby_registry::unshelve(const lobby& l) {
  if (l.players >= l.max_players) return;
  auto& s = shelf_of(l);
  s.erase({l.max_players - l.players, tie_.at(l.id), l.id});
}

void lobby_registry::set_players(lobby& l, std::uint32_t players, time_ms now) {
  unshelve(l);
  if (players == 0 && l.players != 0) l.empty_since = now;  // empty from now on
  l.players = players;
  shelve(l, tie_[l.id]);
}

std::uint32_t lobby_registry::capacity_of(const std::string& mode) const {
  for (const auto& [m, n] : config_.max_players_by_mode)
    if (m == mode) return n;
  return config_.default_max_players;
}

void lobby_registry::register_lobby(const std::string& id, const std::string& mode,
                                    const std::string& datacenter, std::uint32_t max_players,
                                    std::uint32_t players, time_ms now, const std::string& owner) {
  if (id.empty() || id.size() > 128) refuse("id", "1 to 128 characters");
  if (lobbies_.count(id)) refuse("id", "lobby '" + id + "' is already registered");
  if (mode.empty() || mode.size() > 128) refuse("mode", "1 to 128 characters");
  const auto dc = latency_.find(datacenter);
  if (!dc) refuse("datacenter", "no datacenter '" + datacenter + "'");
  if (max_players == 0) refuse("max_players", "must be at least 1");
  if (max_players > config_.max_lobby_players)
    refuse("max_players", std::to_string(max_players) + " is more than the server allows (" +
                              std::to_string(config_.max_lobby_players) + ")");
  if (lobbies_.size() >= config_.max_lobbies)
    throw error(errc::limit_reached, "id: the server holds its maximum of " +
                                         std::to_string(config_.max_lobbies) + " lobbies");
  if (const auto it = owned_.find(owner);
      it != owned_.end() && it->second >= config_.max_lobbies_per_owner)
    throw error(errc::limit_reached, "id: this caller holds its maximum of " +
                                         std::to_string(config_.max_lobbies_per_owner) +
                                         " lobbies");
  if (players > max_players)
    refuse("players", std::to_string(players) + " is more than max_players (" +
                          std::to_string(max_players) + ")");
  lobby l;
  l.id = id;
  l.mode = mode;
  l.datacenter = *dc;
  l.max_players = max_players;
  l.players = players;
  l.empty_since = now;
  l.owner = owner;
  ++owned_[owner];
  auto& stored = lobbies_.emplace(id, std::move(l)).first->second;
  shelve(stored, tie_[id]);
}

void lobby_registry::update(const std::string& id, std::uint32_t players, time_ms now) {
  const auto it = lobbies_.find(id);
  if (it == lobbies_.end()) throw error(errc::not_found, "id: no lobby '" + id + "'");
  if (players > it->second.max_players)
    refuse("players", std::to_string(players) + " is more than max_players (" +
                          std::to_string(it->second.max_players) + ")");
  set_players(it->second, players, now);
}

bool lobby_registry::close(const std::string& id) {
  const auto it = lobbies_.find(id);
  if (it == lobbies_.end()) return false;
  unshelve(it->second);
  tie_.erase(id);
  if (const auto o = owned_.find(it->second.owner); o != owned_.end() && --o->second == 0)
    owned_.erase(o);
  lobbies_.erase(it);
  return true;
}

std::string lobby_registry::region_for(const find_lobby_request& r) const {
  if (r.region) {
    for (const auto& dc : latency_.datacenters())
      if (dc.region == *r.region) return *r.region;
    refuse("region", "no datacenter in region '" + *r.region + "'");
  }
  return latency_.datacenters()[datacenter_in("", r)].region;
}

// The datacenter nearest to the player by its RTTs (measured, else
// estimated from its location), among those of `region` (all when empty).
std::size_t lobby_registry::datacenter_in(const std::string& region,
                                          const find_lobby_request& r) const {
  const auto& dcs = latency_.datacenters();
  std::size_t best = dcs.size();
  double best_rtt = std::numeric_limits<double>::infinity();
  for (std::size_t d = 0; d < dcs.size(); ++d) {
    if (!region.empty() && dcs[d].region != region) continue;
    double rtt = std::numeric_limits<double>::infinity();
    for (const auto& [name, ms] : r.rtt_ms)
      if (name == dcs[d].name) rtt = ms;
    if (std::isinf(rtt) && r.location) rtt = latency_.estimate_ms(*r.location, d);
    if (best == dcs.size() || rtt < best_rtt) {
      best = d;
      best_rtt = rtt;
    }
  }
  return best;
}

find_lobby_result lobby_registry::find(const find_lobby_request& r, time_ms now) {
  if (r.modes.empty()) refuse("modes", "give at least one game mode");
  if (r.modes.size() > 32) refuse("modes", "at most 32");
  if (r.party_size == 0) refuse("party_size", "must be at least 1");
  if (r.party_size > config_.max_party_size)
    refuse("party_size", std::to_string(r.party_size) + " is more than the server allows (" +
                             std::to_string(config_.max_party_size) + ")");
  for (const auto& [name, ms] : r.rtt_ms) {
    if (!latency_.find(name)) refuse("rtt_ms." + name, "no such datacenter");
    if (!std::isfinite(ms) || ms < 0) refuse("rtt_ms." + name, "must be a number >= 0");
  }
  if (r.location &&
      (!(std::abs(r.location->latitude) <= 90) || !(std::abs(r.location->longitude) <= 180)))
    refuse("location", "latitude within +-90 and longitude within +-180");
  if (!r.region && r.rtt_ms.empty() && !r.location)
    refuse("region", "give a region, or rtt_ms or a location to find the nearest");
  const std::string region = region_for(r);

  // The fullest lobby with room for the whole party, over the given modes.
  const seat_key* best = nullptr;
  for (const auto& mode : r.modes) {
    const auto it = shelves_.find(shelf_key(mode, region));
    if (it == shelves_.end()) continue;
    const auto at = it->second.lower_bound({r.party_size, 0, std::string()});
    if (at != it->second.end() && (!best || *at < *best)) best = &*at;
  }
  if (best) {
    lobby& l = lobbies_.at(std::get<2>(*best));
    set_players(l, l.players + r.party_size, now);
    return {l.id, l.datacenter, false, l.players};
  }
  if (r.prevent_auto_create)
    throw error(errc::no_available_lobby, "no available lobby for a party of " +
                                              std::to_string(r.party_size) + " in region '" +
                                              region + "'");
  const std::string& mode = r.modes.front();
  const std::uint32_t seats = capacity_of(mode);
  if (r.party_size > seats)
    refuse("party_size", "a party of " + std::to_string(r.party_size) + " does not fit a '" + mode +
                             "' lobby of " + std::to_string(seats));
  std::string id;
  do {
    id = "auto-" + std::to_string(++created_);
  } while (lobbies_.count(id));
  const std::size_t dc = datacenter_in(region, r);
  register_lobby(id, mode, latency_.datacenters()[dc].name, seats, r.party_size, now, r.owner);
  lobbies_.at(id).created_by_find = true;
  return {id, dc, true, r.party_size};
}

std::vector<lobby_move> lobby_registry::plan_compaction(std::uint32_t near_empty_players) const {
  std::vector<lobby_move> moves;
  // Shelves in key order, so that the plan does not depend on hashing.
  std::vector<const std::pair<const std::string, shelf>*> ordered;
  for (const auto& entry : shelves_) ordered.push_back(&entry);
  std::sort(ordered.begin(), ordered.end(),
            [](const auto* a, const auto* b) { return a->first < b->first; });
  for (const auto* entry : ordered) {
    const shelf& lobbies_with_room = entry->second;
    // The shelf's order is free seats then the random tiebreak: its copy
    // holds the targets as the plan fills them.
    shelf targets = lobbies_with_room;
    std::unordered_map<std::string, std::uint32_t> players;  // as planned
    std::vector<seat_key> sources;
    for (const seat_key& k : lobbies_with_room) {
      const lobby& l = lobbies_.at(std::get<2>(k));
      players[l.id] = l.players;
      if (l.players >= 1 && l.players <= near_empty_players) sources.push_back(k);
    }
    // Emptiest first (ties in the shelf's random order).
    std::stable_sort(sources.begin(), sources.end(), [&](const seat_key& a, const seat_key& b) {
      return players.at(std::get<2>(a)) < players.at(std::get<2>(b));
    });
    std::set<std::string> received;
    for (const seat_key& source : sources) {
      const std::string& from = std::get<2>(source);
      if (received.count(from)) continue;
      const std::uint32_t need = players.at(from);
      targets.erase(source);  // it is emptied, or stays too empty to take anyone later
      for (auto it = targets.lower_bound({need, 0, std::string()}); it != targets.end(); ++it) {
        const std::string& to = std::get<2>(*it);
        if (players.at(to) <= need) continue;  // not fuller
        moves.push_back({from, to, need});
        received.insert(to);
        players[to] += need;
        const seat_key filled{std::get<0>(*it) - need, std::get<1>(*it), to};
        targets.erase(it);
        if (std::get<0>(filled) > 0) targets.insert(filled);
        break;
      }
    }
  }
  return moves;
}

std::vector<std::string> lobby_registry::close_idle(time_ms now) {
  std::vector<std::string> idle;
  for (const auto& [id, l] : lobbies_)
    if (l.players == 0 && now - l.empty_since >= config_.idle_after) idle.push_back(id);
  for (const auto& id : idle) close(id);
  return idle;
}

}  // namespace mm::session
