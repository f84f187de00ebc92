// The session service's running matches (backfill) by match id: the queue
// slot each is in, the credential that registered it, and the bounds per
// credential (matches held, changes a second). The one place that decides
// whether a caller may act on a match, whichever door it came through
// (docs/security.md); plain C++, owned by the service actor, which passes
// the time.
//
// Invariant: held(c) is the number of matches whose credential is c
// (pending ones included); a credential with none has no entry.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "mm/actors/request_bucket.hpp"
#include "mm/engine/error.hpp"

namespace mm::actors {

// The bounds per credential (sessions.max_backfills_per_credential and the
// backfill rate).
struct backfill_limits {
  std::size_t max_per_credential = 10'000;
  double requests_per_s = 100;
  double burst = 200;
};

class backfill_owners {
 public:
  struct owner {
    std::uint32_t slot = 0;
    std::string credential;
    bool pending = true;  // its registration is still being written
  };
  using limits = backfill_limits;

  backfill_owners() = default;
  explicit backfill_owners(limits l) : limits_(l) {}

  // One change of `credential`'s now, if its bucket holds one; an admin's
  // ("") always.
  bool take(const std::string& credential, request_bucket::time_point now) {
    if (credential.empty()) return true;
    return rates_[credential].take(now, limits_.requests_per_s, limits_.burst);
  }
  mm::error too_fast() const {
    return mm::error(errc::limit_reached,
                     "backfill: more than " +
                         std::to_string(static_cast<long long>(limits_.requests_per_s)) +
                         " changes a second from this credential: slow down");
  }

  // Why `credential` may not register `match_id` now, or nothing.
  std::optional<mm::error> refusal(const std::string& match_id,
                                   const std::string& credential) const {
    if (match_id.empty() || match_id.size() > 128)
      return mm::error(errc::invalid_argument, "match_id: must be 1 to 128 characters");
    if (owners_.count(match_id))
      return mm::error(errc::conflict, "match_id: match '" + match_id +
                                           "' backfills already: update it, or stop it first");
    if (!credential.empty() && held(credential) >= limits_.max_per_credential)
      return mm::error(errc::limit_reached,
                       "match_id: this credential holds its max_backfills_per_credential of " +
                           std::to_string(limits_.max_per_credential) + " running matches");
    return std::nullopt;
  }

  bool contains(const std::string& match_id) const { return owners_.count(match_id) != 0; }

  void add(const std::string& match_id, std::uint32_t slot, const std::string& credential,
           bool pending) {
    owners_[match_id] = {slot, credential, pending};
    ++held_[credential];
  }
  void written(const std::string& match_id) {
    if (auto it = owners_.find(match_id); it != owners_.end()) it->second.pending = false;
  }

  // The match when `credential` may act on it ("": an admin, on any); null
  // for a match of another credential, a pending one, or none.
  const owner* owned(const std::string& match_id, const std::string& credential) const {
    const auto it = owners_.find(match_id);
    if (it == owners_.end() || it->second.pending) return nullptr;
    if (!credential.empty() && it->second.credential != credential) return nullptr;
    return &it->second;
  }

  void forget(const std::string& match_id) {
    const auto it = owners_.find(match_id);
    if (it == owners_.end()) return;
    const auto h = held_.find(it->second.credential);
    if (h != held_.end() && --h->second == 0) held_.erase(h);
    owners_.erase(it);
  }

  std::size_t held(const std::string& credential) const {
    const auto it = held_.find(credential);
    return it == held_.end() ? 0 : it->second;
  }
  std::size_t size() const { return owners_.size(); }

 private:
  limits limits_;
  std::unordered_map<std::string, owner> owners_;
  std::unordered_map<std::string, std::size_t> held_;  // per credential
  // Per credential; bounded by the identities the config names (identity.hpp).
  std::unordered_map<std::string, request_bucket> rates_;
};

}  // namespace mm::actors
