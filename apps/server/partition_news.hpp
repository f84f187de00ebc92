// What a node's reader of the event stream tells the session partitions it
// runs of the multi-queue tickets over partitions (event_stream.hpp,
// contested_news): a partition's new guests and the outcomes another
// partition wrote. Written to by the stream follower's thread; a partition
// is expected before its start reads the store (its guest rows), so that
// what the stream brings between that read and its actor's spawn is held
// for it, not lost.
#pragma once

#include <caf/all.hpp>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "mm/actors/event_stream.hpp"
#include "mm/actors/session_service.hpp"

namespace mm::server {

class partition_news {
 public:
  // Before partition `service` reads its journal.
  void expect(const std::string& service) {
    std::lock_guard lock(mutex_);
    targets_[service] = {};
  }
  // Its actor: what was held for it, then the news as they come.
  void serve(const std::string& service, const caf::actor& actor) {
    std::lock_guard lock(mutex_);
    auto& t = targets_[service];
    t.actor = actor;
    deliver(t.actor, t.held);
    t.held = {};
  }
  void forget(const std::string& service) {
    std::lock_guard lock(mutex_);
    targets_.erase(service);
  }
  // The follower's hook (stream_rows_hook).
  void post(const std::vector<journal_event>& rows) {
    auto news = actors::contested_news_of(rows);
    if (news.empty()) return;
    std::lock_guard lock(mutex_);
    for (auto& [service, n] : news) {
      const auto it = targets_.find(service);
      if (it == targets_.end()) continue;
      if (it->second.actor) {
        deliver(it->second.actor, n);
        continue;
      }
      auto& held = it->second.held;
      held.guests.insert(held.guests.end(), n.guests.begin(), n.guests.end());
      held.outcomes.insert(held.outcomes.end(), n.outcomes.begin(), n.outcomes.end());
    }
  }

 private:
  // The outcomes first: a player's ticket leaves before the player's next
  // one is created (the store's claims), and a guest whose player still
  // waits here in a ticket whose outcome is not yet told is not taken in.
  static void deliver(const caf::actor& to, actors::contested_news& n) {
    if (!n.outcomes.empty())
      caf::anon_send(to, actors::elsewhere_atom::value, std::move(n.outcomes));
    if (!n.guests.empty()) caf::anon_send(to, actors::guest_atom::value, std::move(n.guests));
  }
  struct target {
    caf::actor actor;  // invalid until spawned
    actors::contested_news held;
  };
  std::mutex mutex_;
  std::unordered_map<std::string, target> targets_;
};

}  // namespace mm::server
