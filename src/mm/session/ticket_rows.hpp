// What a session queue's match loop reads of its waiting tickets, in one
// fixed-size row per ticket, row i for the queue's waiting ticket i.
//
// A waiting_ticket keeps its party, values and RTTs in heap blocks of their
// own: reading a candidate means reading the record, then each block it
// points to, one miss after the other, and the blocks of tickets that meet in
// a match lie anywhere in memory. A row is at a place computed from the
// ticket's index alone, starts on a cache line, and holds what a check of a
// candidate reads (may it join, and in which datacenters), in 8-byte words:
//
//   id, created, tiebreak, party size and fast-track flag,
//   the party's value per rule,
//   with a latency policy, three datacenter masks (a bit per datacenter, a
//   word per 64): within the ideal stage's RTT, within the expanded stage's,
//   and with a finite RTT
//
// which is one cache line for a queue with one rule and up to 64
// datacenters: 100,000 rows are 6.4 MB, within the last-level cache. What
// only a formed match and the expiry scan read is in a second row of its own
// (give_up_at, the players' MMRs and ids, up to the queue's max_party_size),
// and the RTTs in a third (read for a formed match's datacenter and a
// latency rule's distance).
//
// The masks hold what the loop compares, exactly: datacenter d is in a
// stage's mask when the party's RTT to d is at most the stage's threshold.
// A warm body (and a queue without a policy) accepts every datacenter.
//
// Invariant: the rows mirror the queue's tickets_ exactly (same count, same
// order); the queue pushes and removes both together. The waiting_ticket
// records stay what views and game plug-ins read.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <optional>
#include <vector>

#include "mm/session/latency.hpp"
#include "mm/session/ticket.hpp"
#include "mm/session/waiting_ticket.hpp"

namespace mm::session {

class ticket_rows {
 public:
  struct head {
    ticket_id id;
    time_ms created;
    std::uint64_t tiebreak;
    std::uint32_t party;  // the number of players
    std::uint16_t fast_track;
    // Placed into new matches only, never into a running match
    // (ticket_request::new_matches_only).
    std::uint16_t new_matches_only;
  };
  static_assert(sizeof(head) == 4 * sizeof(std::uint64_t));

  // The datacenters' masks a row holds (with a latency policy).
  enum class mask_kind : std::size_t { ideal = 0, expand = 1, finite = 2 };

  // The shape of every row; call before the first push().
  void shape(std::size_t rules, std::size_t datacenters, std::size_t max_party,
             const std::optional<latency_stages>& policy) {
    rules_ = rules;
    dcs_ = datacenters;
    party_ = max_party;
    policy_ = policy;
    mask_words_ = (datacenters + 63) / 64;
    const std::size_t masks = policy ? 3 * mask_words_ : 0;
    constexpr std::size_t line = 64 / sizeof(std::uint64_t);
    stride_ = (head_words + rules + masks + line - 1) / line * line;
    cold_stride_ = 1 + 2 * max_party;
    every_dc_.assign(mask_words_, 0);
    for (std::size_t d = 0; d < datacenters; ++d) every_dc_[d / 64] |= std::uint64_t{1} << (d % 64);
  }

  std::size_t size() const { return size_; }
  // Words in a datacenters' mask: one per 64 datacenters.
  std::size_t mask_words() const { return mask_words_; }

  // Appends the row of `t` (its party no larger than max_party, an RTT per
  // datacenter).
  void push(const waiting_ticket& t) {
    words_.resize((size_ + 1) * stride_);
    std::uint64_t* row = words_.data() + size_ * stride_;
    const head h{t.id,
                 t.created,
                 t.tiebreak,
                 static_cast<std::uint32_t>(t.players.size()),
                 static_cast<std::uint16_t>(t.fast_track ? 1 : 0),
                 static_cast<std::uint16_t>(t.new_matches_only ? 1 : 0)};
    std::memcpy(row, &h, sizeof h);
    store(row + head_words, t.numbers);
    if (policy_) {
      std::uint64_t* masks = row + head_words + rules_;
      for (std::size_t d = 0; d < dcs_; ++d) {
        const std::uint64_t bit = std::uint64_t{1} << (d % 64);
        if (t.rtt[d] <= policy_->ideal_ms) masks[d / 64] |= bit;
        if (t.rtt[d] <= policy_->expand_ms) masks[mask_words_ + d / 64] |= bit;
        if (t.rtt[d] < std::numeric_limits<double>::infinity())
          masks[2 * mask_words_ + d / 64] |= bit;
      }
    }
    cold_.resize((size_ + 1) * cold_stride_);
    std::uint64_t* cold = cold_.data() + size_ * cold_stride_;
    cold[0] = static_cast<std::uint64_t>(t.give_up_at.count());
    store(cold + 1, t.player_mmr);
    std::copy(t.players.begin(), t.players.end(), cold + 1 + party_);
    rtts_.insert(rtts_.end(), t.rtt.begin(), t.rtt.end());
    ++size_;
  }

  // Row i replaced by the last row, which goes (the queue's swap-remove).
  void remove(std::size_t i) {
    --size_;
    if (i != size_) {
      std::copy_n(words_.data() + size_ * stride_, stride_, words_.data() + i * stride_);
      std::copy_n(cold_.data() + size_ * cold_stride_, cold_stride_,
                  cold_.data() + i * cold_stride_);
      std::copy_n(rtts_.data() + size_ * dcs_, dcs_, rtts_.data() + i * dcs_);
    }
    words_.resize(size_ * stride_);
    cold_.resize(size_ * cold_stride_);
    rtts_.resize(size_ * dcs_);
  }

  // Keeps the rows whose flag in `gone` is 0, in their order (the queue's
  // compaction when most of its tickets leave at once).
  void keep(const std::vector<char>& gone) {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < size_; ++i) {
      if (gone[i]) continue;
      if (kept != i) {
        std::copy_n(words_.data() + i * stride_, stride_, words_.data() + kept * stride_);
        std::copy_n(cold_.data() + i * cold_stride_, cold_stride_,
                    cold_.data() + kept * cold_stride_);
        std::copy_n(rtts_.data() + i * dcs_, dcs_, rtts_.data() + kept * dcs_);
      }
      ++kept;
    }
    size_ = kept;
    words_.resize(size_ * stride_);
    cold_.resize(size_ * cold_stride_);
    rtts_.resize(size_ * dcs_);
  }

  head operator[](std::size_t i) const {
    head h;
    std::memcpy(&h, row(i), sizeof h);
    return h;
  }
  time_ms give_up_at(std::size_t i) const {
    return time_ms(static_cast<time_ms::rep>(cold_[i * cold_stride_]));
  }
  // The party's value for rule k.
  double number(std::size_t i, std::size_t k) const { return as_double(row(i)[head_words + k]); }
  // The party's worst RTT per datacenter.
  const double* rtt(std::size_t i) const { return rtts_.data() + i * dcs_; }
  // Row i's datacenters within `stage`'s threshold (mask_words() words): a
  // warm body's, a failed one's and those of a queue without a policy are
  // every datacenter.
  const std::uint64_t* within(std::size_t i, latency_stage stage) const {
    switch (stage) {
      case latency_stage::ideal:
        return mask(i, mask_kind::ideal);
      case latency_stage::expand:
        return mask(i, mask_kind::expand);
      default:
        return every_dc_.data();
    }
  }
  // Row i's datacenters with a finite RTT (every datacenter without a policy).
  const std::uint64_t* finite(std::size_t i) const { return mask(i, mask_kind::finite); }
  // The MMR and the id of player k (< party) of row i.
  double mmr(std::size_t i, std::size_t k) const {
    return as_double(cold_[i * cold_stride_ + 1 + k]);
  }
  player_id player(std::size_t i, std::size_t k) const {
    return cold_[i * cold_stride_ + 1 + party_ + k];
  }

  // Asks the memory for row i's first line: its head and rules' values.
  void prefetch_head(std::size_t i) const { __builtin_prefetch(row(i)); }
  // Asks the memory for what a check and a match read of row i: the row,
  // and the start of its second one (its MMRs, then its players).
  void prefetch(std::size_t i) const {
    const std::uint64_t* r = row(i);
    for (std::size_t k = 0; k < stride_; k += 8) __builtin_prefetch(r + k);
    __builtin_prefetch(cold_.data() + i * cold_stride_);
  }

 private:
  static constexpr std::size_t head_words = sizeof(head) / sizeof(std::uint64_t);

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

  const std::uint64_t* row(std::size_t i) const { return words_.data() + i * stride_; }
  // A double stored in a word: its bytes (the words hold ids, masks and
  // values alike, so every value is copied in and out, never aliased).
  static double as_double(std::uint64_t w) {
    double v;
    std::memcpy(&v, &w, sizeof v);
    return v;
  }
  static void store(std::uint64_t* at, const std::vector<double>& values) {
    if (!values.empty()) std::memcpy(at, values.data(), values.size() * sizeof(double));
  }
  const std::uint64_t* mask(std::size_t i, mask_kind k) const {
    if (!policy_) return every_dc_.data();
    return row(i) + head_words + rules_ + static_cast<std::size_t>(k) * mask_words_;
  }

  std::size_t rules_ = 0, dcs_ = 0, party_ = 0, stride_ = 0, cold_stride_ = 1, size_ = 0,
              mask_words_ = 0;
  std::optional<latency_stages> policy_;
  std::vector<std::uint64_t> every_dc_;  // every datacenter's bit
  std::vector<std::uint64_t, line_aligned<std::uint64_t>> words_;
  std::vector<std::uint64_t> cold_;  // cold_stride_ per row: give_up_at, MMRs, player ids
  std::vector<double> rtts_;         // dcs_ per row, in the rows' order
};

}  // namespace mm::session
