// The rules of a session queue: what they filter, how far a candidate is from
// a group under each, and how they relax while the seed waits.
//
// Each rule has two jobs. Its filter says whether a ticket may join a group;
// its distance (0 = the same, 1 = at the edge of what is allowed) orders the
// candidates: a candidate's distance to a group is the sum over the rules of
// weight x distance, and candidates are tried nearest first.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mm::session {

enum class rule_kind : std::uint8_t {
  difference,    // numbers within max_difference of the group's reference value
  equality,      // the same string (or number) as the group
  intersection,  // a set sharing at least min_overlap items with every ticket
  latency,       // a datacenter where every player's RTT is within the threshold
  team_balance,  // whole group only: the teams' MMR means within max_difference
};

const char* to_string(rule_kind k);
std::optional<rule_kind> rule_kind_named(const std::string& name);

// What a difference rule compares a candidate with.
enum class reference_value : std::uint8_t {
  seed,        // the seed ticket's value
  group_mean,  // the mean over the group as it is now
};

// A threshold that grows while the seed waits: `initial`, plus `step` after
// every full `every`, up to `limit`. `every` of 0 means it never grows.
struct expansion {
  double step = 0;
  std::chrono::milliseconds every{0};
  double limit = 0;  // 0: initial (no growth)
  bool operator==(const expansion&) const = default;
};

struct rule {
  std::string name;  // for errors and reports; defaults to the kind
  rule_kind kind = rule_kind::difference;
  // The ticket attribute the rule reads: "mmr" (the party's mean MMR) or the
  // name of a number, string or set attribute of the players.
  std::string attribute = "mmr";
  double weight = 1;
  double max_difference = 100;  // difference, team_balance: the initial threshold
  reference_value reference = reference_value::seed;
  expansion expand;
  std::size_t min_overlap = 1;  // intersection
  // After this wait the rule no longer filters, but still orders the
  // candidates (those that satisfy it go first). Unset: always filters.
  std::optional<std::chrono::milliseconds> optional_after;
  bool operator==(const rule&) const = default;
};

// The rule's threshold after the seed waited `waited` (difference and
// team_balance rules).
double threshold_after(const rule& r, std::chrono::milliseconds waited);

// Whether the rule still filters after `waited`.
bool filters_after(const rule& r, std::chrono::milliseconds waited);

// Problems of one rule, each naming its key under `prefix` (for example
// "queues.ranked.rules[0].").
std::vector<std::string> check(const rule& r, const std::string& prefix);

}  // namespace mm::session
