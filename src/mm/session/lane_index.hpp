// A session queue's candidates' index for one tick: its waiting tickets in
// lanes sorted by the first difference rule's value (value_lane.hpp), each
// entry marked with the datacenters the ticket may play in at its current
// latency stage.
//
// How the tickets are split into lanes:
//
// - without a latency policy, one lane of every ticket;
// - with a policy over at most 64 datacenters, one lane per **datacenter
//   group**, and one lane for the tickets that span groups. The groups are
//   drawn each tick from the tickets in the ideal stage: two datacenters are
//   in one group when a ticket in the ideal stage may play in both (and
//   transitively). Players within the ideal RTT of a datacenter are near
//   each other, so the groups are regions (Europe, East Asia...), and a
//   seed's walk passes only over the tickets of its own region instead of
//   every ticket of the world with a near value. A ticket whose datacenters
//   lie in one group is in that group's lane; one whose datacenters span
//   groups (a ticket past the ideal stage, a warm body) is in the spanning
//   lane, which every seed walks too;
// - with more than 64 datacenters, one lane per block of 64 datacenters, a
//   ticket in each block where it may play.
//
// A seed walks the lanes that may hold a ticket sharing a datacenter with
// it: so the walks meet every candidate the single lane of every ticket
// would, and the loop's ranking is the same.
//
// Invariant: between seal() and the next reset(), every ticket added is in
// the lanes described above, at the positions its slots hold; take() marks
// a ticket taken in every lane it is in.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "mm/session/value_lane.hpp"

namespace mm::session {

class lane_index {
 public:
  // A seed's walk of one lane: the datacenters an entry must share with the
  // seed (in the lane's entries' mask), the next alive position above and
  // one past the next below.
  struct walk {
    value_lane* lane;
    std::uint64_t datacenters;
    std::size_t up, down;
  };

  // No index this tick (the loop scores every ticket).
  void clear() {
    active_ = false;
    anchors_ = 0;
    slots_.clear();
  }
  bool active() const { return active_; }

  // Starts the index of a tick over `tickets` tickets; `mask_words`: words
  // of a datacenters' mask (0 without a latency policy).
  void reset(std::size_t tickets, std::size_t mask_words) {
    active_ = true;
    anchors_ = 0;
    tickets_ = tickets;
    words_ = mask_words;
    pending_.clear();
    pending_masks_.clear();
    used_ = 0;
    lane_dcs_.clear();
  }

  // Ticket `ticket`, with its value, tiebreak, party size and the
  // datacenters it may play in now (mask_words() words; ignored without a
  // policy): `joins_groups` when it is in the ideal stage.
  void add(std::size_t ticket, double value, std::uint64_t tiebreak, std::uint32_t party,
           const std::uint64_t* mask, bool joins_groups) {
    pending_.push_back({value, tiebreak, static_cast<std::uint32_t>(ticket), party, joins_groups});
    pending_masks_.insert(pending_masks_.end(), mask, mask + words_);
  }

  // Builds the lanes from the tickets added.
  void seal() {
    constexpr auto all = ~std::uint64_t{0};
    const std::size_t n = pending_.size();
    slots_per_ticket_ = words_ > 1 ? words_ : 1;
    slots_.assign(tickets_ * slots_per_ticket_, slot{});
    if (words_ == 0) {
      lane_for(all);
      for (std::size_t p = 0; p < n; ++p) push(0, p, all);
    } else if (words_ == 1) {
      group_datacenters();
      std::array<std::uint32_t, 64> lane_of_group;
      lane_of_group.fill(slot::none);
      std::uint32_t spanning = slot::none;
      for (std::size_t p = 0; p < n; ++p) {
        const std::uint64_t m = pending_masks_[p];
        if (m == 0) continue;
        const auto first = static_cast<std::size_t>(__builtin_ctzll(m));
        std::uint32_t* lane = &spanning;
        std::uint64_t dcs = all;
        if ((group_[first] & m) == m) {
          const auto id = static_cast<std::size_t>(__builtin_ctzll(group_[first]));
          lane = &lane_of_group[id];
          dcs = group_[first];
        }
        if (*lane == slot::none) *lane = lane_for(dcs);
        push(*lane, p, m);
      }
    } else {
      for (std::size_t w = 0; w < words_; ++w) lane_for(all);
      for (std::size_t p = 0; p < n; ++p)
        for (std::size_t w = 0; w < words_; ++w)
          if (const std::uint64_t m = pending_masks_[p * words_ + w]; m != 0)
            push(static_cast<std::uint32_t>(w), p, m);
    }
    for (std::size_t l = 0; l < used_; ++l) lanes_[l].seal();
    for (std::size_t l = 0; l < used_; ++l)
      for (std::size_t at = 0; at < lanes_[l].size(); ++at)
        slot_of(lanes_[l][at].ticket, l) = {static_cast<std::uint32_t>(l),
                                            static_cast<std::uint32_t>(at)};
  }

  // Whether a ticket is in one lane at most (a walk meets it once).
  bool disjoint() const { return words_ <= 1; }

  // `ticket` is taken: its entries are passed over from now on.
  void take(std::size_t ticket) {
    if (slots_.empty()) return;
    for (std::size_t s = 0; s < slots_per_ticket_; ++s)
      if (const slot& at = slots_[ticket * slots_per_ticket_ + s]; at.lane != slot::none)
        lanes_[at.lane].take(at.position);
  }

  // The places of this tick's anchors (running matches' players, which
  // are no tickets of the index) of values `values`: where a walk from each
  // starts in each lane, found for all of them in one pass over each lane
  // (in order of value) instead of a search each. Anchor a is values[a].
  void place_anchors(const std::vector<double>& values) {
    anchors_ = values.size();
    anchor_starts_.resize(anchors_ * used_);
    // Sorted with their values side by side: no read through the index
    // in the sort's comparisons, nor in the passes below.
    by_value_.resize(anchors_);
    for (std::size_t a = 0; a < anchors_; ++a)
      by_value_[a] = {values[a], static_cast<std::uint32_t>(a)};
    std::sort(by_value_.begin(), by_value_.end());
    for (std::size_t l = 0; l < used_; ++l) {
      const value_lane& lane = lanes_[l];
      std::size_t at = 0;  // the first position whose value is at least the anchor's
      for (const auto& [value, a] : by_value_) {
        while (at < lane.size() && lane[at].value < value) ++at;
        anchor_starts_[a * used_ + l] = at;
      }
    }
  }

  // Asks the memory for what the walks of anchor `a`, a match in
  // datacenter `datacenter`, read first (nothing past a lane's end: an
  // anchor above every value there starts at its end).
  void prefetch_anchor(std::size_t a, std::size_t datacenter) const {
    for (std::size_t l = 0; l < used_; ++l) {
      const bool walked =
          words_ == 0 || (words_ == 1 ? datacenter < 64 && (lane_dcs_[l] >> datacenter & 1) != 0
                                      : l == datacenter / 64);
      const std::size_t start = anchor_starts_[a * used_ + l];
      if (walked && start < lanes_[l].size()) lanes_[l].prefetch_around(start);
    }
  }

  // The walks of seed `seed` (value `value`, the datacenters it may play
  // in: mask_words() words, ignored without a policy) into `out`. A seed
  // that is no ticket of the index (a running match's players) starts
  // where its anchor was placed (`anchor`, place_anchors()), else where its
  // value would be.
  void walks_from(std::size_t seed, double value, const std::uint64_t* seed_dcs,
                  std::vector<walk>& out, std::size_t anchor = value_lane::npos) {
    out.clear();
    for (std::size_t l = 0; l < used_; ++l) {
      std::uint64_t shared = ~std::uint64_t{0};
      if (words_ == 1) {
        if ((lane_dcs_[l] & seed_dcs[0]) == 0) continue;
        shared = seed_dcs[0];
      } else if (words_ > 1) {
        shared = seed_dcs[l];
        if (shared == 0) continue;
      }
      value_lane& lane = lanes_[l];
      // From the seed's own entry (the ones of equal value below it are the
      // down walk's first steps), else from where its value would be.
      std::size_t at = value_lane::npos;
      for (std::size_t s = 0; seed < tickets_ && s < slots_per_ticket_; ++s)
        if (const slot& own = slots_[seed * slots_per_ticket_ + s]; own.lane == l)
          at = own.position;
      if (at == value_lane::npos)
        at = anchor < anchors_ ? anchor_starts_[anchor * used_ + l] : lane.lower_bound(value);
      out.push_back({&lane, shared, lane.alive_from(at), lane.alive_before(at)});
    }
  }

  // Asks the memory for what a walk from `ticket` reads first.
  void prefetch(std::size_t ticket) const {
    if (slots_.empty()) return;
    for (std::size_t s = 0; s < slots_per_ticket_; ++s)
      if (const slot& at = slots_[ticket * slots_per_ticket_ + s]; at.lane != slot::none)
        lanes_[at.lane].prefetch_around(at.position);
  }

 private:
  struct pending {
    double value;
    std::uint64_t tiebreak;
    std::uint32_t ticket, party;
    bool joins_groups;
  };
  // Where a ticket is: a lane and its position there (none: nowhere).
  struct slot {
    static constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();
    std::uint32_t lane = none, position = none;
  };

  // group_[d]: the datacenters in d's group (one word of datacenters).
  void group_datacenters() {
    for (std::size_t d = 0; d < 64; ++d) group_[d] = std::uint64_t{1} << d;
    for (std::size_t p = 0; p < pending_.size(); ++p) {
      const std::uint64_t m = pending_masks_[p];
      if (!pending_[p].joins_groups || m == 0) continue;
      if ((group_[static_cast<std::size_t>(__builtin_ctzll(m))] & m) == m) continue;  // joined
      std::uint64_t joined = 0;
      for (std::uint64_t x = m; x != 0; x &= x - 1)
        joined |= group_[static_cast<std::size_t>(__builtin_ctzll(x))];
      for (std::uint64_t x = joined; x != 0; x &= x - 1)
        group_[static_cast<std::size_t>(__builtin_ctzll(x))] = joined;
    }
  }

  // A new lane this tick, of tickets within `dcs`: one of the lanes of
  // earlier ticks when there is one (their memory is in place).
  std::uint32_t lane_for(std::uint64_t dcs) {
    if (used_ == lanes_.size()) lanes_.emplace_back();
    lanes_[used_].clear();
    lane_dcs_.push_back(dcs);
    return static_cast<std::uint32_t>(used_++);
  }

  void push(std::uint32_t lane, std::size_t p, std::uint64_t mask) {
    const pending& e = pending_[p];
    lanes_[lane].add(e.value, mask, e.tiebreak, e.ticket, e.party);
  }

  slot& slot_of(std::size_t ticket, std::size_t lane) {
    // Blocks: a ticket's slot s is its place in lane s; otherwise its one slot.
    return slots_[ticket * slots_per_ticket_ + (words_ > 1 ? lane : 0)];
  }

  bool active_ = false;
  std::size_t tickets_ = 0, words_ = 0, slots_per_ticket_ = 1;
  std::vector<pending> pending_;
  std::vector<std::uint64_t> pending_masks_;
  std::vector<value_lane> lanes_;  // the first used_ are this tick's
  std::size_t used_ = 0;
  std::vector<std::uint64_t> lane_dcs_;  // per lane: the datacenters its tickets are within
  std::vector<slot> slots_;              // per ticket, slots_per_ticket_ of them
  // place_anchors(): anchor a's start in lane l at a * used_ + l; the
  // anchors in order of value.
  std::size_t anchors_ = 0;
  std::vector<std::size_t> anchor_starts_;
  std::vector<std::pair<double, std::uint32_t>> by_value_;
  std::array<std::uint64_t, 64> group_{};
};

}  // namespace mm::session
