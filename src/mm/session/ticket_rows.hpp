// What a session queue's match loop reads of its waiting tickets, in one
// fixed-size row per ticket, row i for the queue's waiting ticket i.
//
// A waiting_ticket keeps its party, values and RTTs in heap blocks of their
// own: reading a candidate means reading the record, then each block it
// points to, one miss after the other, and the blocks of tickets that meet in
// a match lie anywhere in memory. A row is at a place computed from the
// ticket's index alone, starts on a cache line, and holds, in 8-byte words:
//
//   id, created, give_up_at, tiebreak, party size and fast-track flag,
//   the party's value per rule, its RTT per datacenter,
//   its players' MMRs, its player ids (up to the queue's max_party_size;
//   unused seats 0)
//
// so that the head and the rules' values are one cache line, and a check of a
// candidate costs that line and the one of the datacenters it is checked at.
//
// Invariant: the rows mirror the queue's tickets_ exactly (same count, same
// order); the queue pushes and removes both together. The waiting_ticket
// records stay what views and game plug-ins read.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <span>
#include <vector>

#include "mm/session/ticket.hpp"
#include "mm/session/waiting_ticket.hpp"

namespace mm::session {

class ticket_rows {
 public:
  struct head {
    ticket_id id;
    time_ms created, give_up_at;
    std::uint64_t tiebreak;
    std::uint32_t party;  // the number of players
    std::uint32_t fast_track;
  };
  static_assert(sizeof(head) == 5 * sizeof(double));

  // The shape of every row; call before the first push().
  void shape(std::size_t rules, std::size_t datacenters, std::size_t max_party) {
    rules_ = rules;
    dcs_ = datacenters;
    party_ = max_party;
    constexpr std::size_t line = 64 / sizeof(double);
    stride_ = (head_words + rules + datacenters + 2 * max_party + line - 1) / line * line;
  }

  std::size_t size() const { return size_; }

  // Appends the row of `t` (its party no larger than max_party).
  void push(const waiting_ticket& t) {
    words_.resize((size_ + 1) * stride_);
    double* row = words_.data() + size_ * stride_;
    const head h{t.id,
                 t.created,
                 t.give_up_at,
                 t.tiebreak,
                 static_cast<std::uint32_t>(t.players.size()),
                 t.fast_track ? 1u : 0u};
    std::memcpy(row, &h, sizeof h);
    double* at = std::copy(t.numbers.begin(), t.numbers.end(), row + head_words);
    at = std::copy(t.rtt.begin(), t.rtt.end(), at);
    std::copy(t.player_mmr.begin(), t.player_mmr.end(), at);
    std::memcpy(row + head_words + rules_ + dcs_ + party_, t.players.data(),
                t.players.size() * sizeof(player_id));
    ++size_;
  }

  // Row i replaced by the last row, which goes (the queue's swap-remove).
  void remove(std::size_t i) {
    --size_;
    if (i != size_)
      std::copy_n(words_.data() + size_ * stride_, stride_, words_.data() + i * stride_);
    words_.resize(size_ * stride_);
  }

  head operator[](std::size_t i) const {
    head h;
    std::memcpy(&h, row(i), sizeof h);
    return h;
  }
  const double* numbers(std::size_t i) const { return row(i) + head_words; }
  const double* rtt(std::size_t i) const { return row(i) + head_words + rules_; }
  std::span<const double> mmr(std::size_t i) const {
    return {row(i) + head_words + rules_ + dcs_, (*this)[i].party};
  }
  // The id of player k (< party) of row i: its bytes copied out of the words.
  player_id player(std::size_t i, std::size_t k) const {
    player_id id;
    std::memcpy(&id, row(i) + head_words + rules_ + dcs_ + party_ + k, sizeof id);
    return id;
  }

  // Asks the memory for row i's first line: its head and rules' values.
  void prefetch_head(std::size_t i) const { __builtin_prefetch(row(i)); }
  // Asks the memory for what a check of row i reads (its head and its RTT to
  // datacenter d) and what a match of it reads (its MMRs and players).
  void prefetch_candidate(std::size_t i, std::size_t d) const {
    const double* r = row(i);
    __builtin_prefetch(r);
    __builtin_prefetch(r + head_words + rules_ + d);
    __builtin_prefetch(r + head_words + rules_ + dcs_);
  }
  // Asks the memory for row i's head and values (all of its RTTs).
  void prefetch(std::size_t i) const {
    const double* r = row(i);
    for (std::size_t k = 0; k < head_words + rules_ + dcs_; k += 8) __builtin_prefetch(r + k);
  }

 private:
  static constexpr std::size_t head_words = sizeof(head) / sizeof(double);

  // Rows start on cache lines: the array does.
  template <class T>
  struct line_aligned {
    using value_type = T;
    line_aligned() = default;
    template <class U>
    line_aligned(const line_aligned<U>&) {}
    T* allocate(std::size_t n) {
      return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{64}));
    }
    void deallocate(T* p, std::size_t) { ::operator delete (p, std::align_val_t{64}); }
    bool operator==(const line_aligned&) const { return true; }
  };

  const double* row(std::size_t i) const { return words_.data() + i * stride_; }

  std::size_t rules_ = 0, dcs_ = 0, party_ = 0, stride_ = 0, size_ = 0;
  std::vector<double, line_aligned<double>> words_;
};

}  // namespace mm::session
