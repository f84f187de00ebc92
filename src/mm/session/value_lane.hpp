// The session loop's candidate index: tickets sorted by one rule's value,
// walked outward from a seed's value, passing over the tickets already taken
// by a match in this tick. Each entry carries a mask of up to 64 datacenters
// (the ticket's, within its latency threshold) so that a walk passes over
// the tickets that share none with the seed without reading them.
//
// Taken entries stay in place, marked (take(), by the queue when the ticket
// is taken: a walk reads the mark beside the entry, not the ticket); a walk
// jumps over them through pointers it shortens as it goes (path
// compression), so a run of taken entries costs one step per later walk
// instead of one per entry. Marks are only added during a tick, which is what
// makes the shortened pointers stay right.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "mm/session/radix_sort.hpp"

namespace mm::session {

class value_lane {
 public:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
  struct entry {
    double value;
    std::uint64_t datacenters;  // a bit per datacenter of the lane's block of 64
    std::uint64_t tiebreak;     // the ticket's
    std::uint32_t ticket;       // index into the queue's waiting tickets
    std::uint32_t players;      // the ticket's party size
    bool operator<(const entry& o) const {
      return value != o.value ? value < o.value : ticket < o.ticket;
    }
  };

  void clear() {
    entries_.clear();
    up_.clear();
    down_.clear();
    taken_.clear();
  }
  void add(double value, std::uint64_t datacenters, std::uint64_t tiebreak, std::size_t ticket,
           std::size_t players) {
    entries_.push_back({value, datacenters, tiebreak, static_cast<std::uint32_t>(ticket),
                        static_cast<std::uint32_t>(players)});
  }
  // Sorts the entries (by value, then ticket) and resets the jumps; call once
  // after the adds, which come in ascending ticket order (the sort is by
  // value and keeps the order of equal values).
  void seal() {
    radix_sort(entries_, scratch_, [](const entry& e) { return ordered_key(e.value); });
    up_.resize(entries_.size());
    down_.resize(entries_.size());
    taken_.assign(entries_.size(), 0);
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      up_[i] = i + 1;  // taken: go on after it
      down_[i] = i;    // taken: go on before it (one-past positions)
    }
  }

  std::size_t size() const { return entries_.size(); }
  const entry& operator[](std::size_t i) const { return entries_[i]; }
  // The first position whose value is at least v.
  std::size_t lower_bound(double v) const {
    return static_cast<std::size_t>(
        std::lower_bound(entries_.begin(), entries_.end(), v,
                         [](const entry& e, double x) { return e.value < x; }) -
        entries_.begin());
  }

  // Asks the memory for the entries and jumps next to position p.
  void prefetch_around(std::size_t p) const {
    __builtin_prefetch(&entries_[p]);
    if (p > 0) __builtin_prefetch(&entries_[p - 1]);
    __builtin_prefetch(&up_[p]);
    __builtin_prefetch(&down_[p]);
    __builtin_prefetch(&taken_[p]);
  }

  // The entry at position p is taken from now on.
  void take(std::size_t p) { taken_[p] = 1; }

  // The first position at or after `from` that is not taken, or size().
  std::size_t alive_from(std::size_t from) {
    std::size_t r = from;
    while (r < entries_.size() && taken_[r]) r = up_[r];
    for (std::size_t k = from; k < r;) {  // every position passed was taken
      const std::size_t next = up_[k];
      up_[k] = r;
      k = next;
    }
    return r;
  }

  // One past the last position before `before` that is not taken, or 0.
  std::size_t alive_before(std::size_t before) {
    std::size_t r = before;
    while (r > 0 && taken_[r - 1]) r = down_[r - 1];
    for (std::size_t k = before; k > r;) {
      const std::size_t next = down_[k - 1];
      down_[k - 1] = r;
      k = next;
    }
    return r;
  }

 private:
  std::vector<entry> entries_, scratch_;
  std::vector<std::size_t> up_, down_;
  std::vector<char> taken_;  // per position: take() was called
};

}  // namespace mm::session
