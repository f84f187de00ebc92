#include "mm/actors/ticket_event_feed.hpp"

#include <algorithm>
#include <unordered_set>

namespace mm::actors {

bool event_filter::matches(const ticket_outcome& e) const {
  if (credential && e.credential != *credential) return false;
  return queues.empty() || std::find(queues.begin(), queues.end(), e.queue) != queues.end();
}

void ticket_event_feed::drop_old(std::int64_t now_unix_ms) {
  const std::int64_t oldest_kept = now_unix_ms - limits_.retention.count();
  while (!events_.empty() &&
         (events_.size() > limits_.max_events || events_.front()->at_unix_ms < oldest_kept))
    events_.pop_front();
}

void ticket_event_feed::append(const std::vector<ticket_outcome>& events) {
  std::vector<std::function<void()>> to_wake;
  {
    std::lock_guard lock(mutex_);
    std::unordered_set<std::string> credentials;
    std::int64_t newest_at = 0;
    for (const auto& e : events) {
      if (e.seq <= last_seq_) continue;
      last_seq_ = e.seq;
      newest_at = std::max(newest_at, e.at_unix_ms);
      credentials.insert(e.credential);
      events_.push_back(std::make_shared<const ticket_outcome>(e));
    }
    if (credentials.empty()) return;
    drop_old(newest_at);
    for (const auto& [id, f] : followers_)
      if (!f.credential || credentials.count(*f.credential) != 0) to_wake.push_back(f.wake);
  }
  for (const auto& wake : to_wake) wake();
}

ticket_event_feed::page ticket_event_feed::read_after(std::uint64_t after, const event_filter& f,
                                                      std::size_t max) const {
  std::lock_guard lock(mutex_);
  page out;
  out.last_seq = last_seq_;
  auto it = std::upper_bound(events_.begin(), events_.end(), after,
                             [](std::uint64_t s, const event& e) { return s < e->seq; });
  // Held events are consecutive from the first; one before `after + 1` was dropped.
  const std::uint64_t first_held = events_.empty() ? last_seq_ + 1 : events_.front()->seq;
  out.missed = after + 1 < first_held && after < last_seq_;
  for (; it != events_.end(); ++it) {
    if (!f.matches(**it)) continue;
    if (out.events.size() == max) {
      out.more = true;
      break;
    }
    out.events.push_back(*it);
  }
  return out;
}

std::optional<std::uint64_t> ticket_event_feed::subscribe(std::optional<std::string> credential,
                                                          std::function<void()> wake,
                                                          std::size_t max_for_credential,
                                                          const std::string& counted_as) {
  std::lock_guard lock(mutex_);
  std::size_t& n = per_credential_[counted_as];
  if (n >= max_for_credential) {
    if (n == 0) per_credential_.erase(counted_as);
    return std::nullopt;
  }
  ++n;
  const std::uint64_t id = next_follower_++;
  followers_.emplace(id, follower{std::move(credential), std::move(wake), counted_as});
  return id;
}

void ticket_event_feed::unsubscribe(std::uint64_t id) {
  std::lock_guard lock(mutex_);
  const auto it = followers_.find(id);
  if (it == followers_.end()) return;
  if (const auto n = per_credential_.find(it->second.counted_as);
      n != per_credential_.end() && --n->second == 0)
    per_credential_.erase(n);
  followers_.erase(it);
}

void ticket_event_feed::close() {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  wake_all();
}

void ticket_event_feed::set_live(bool live) {
  {
    std::lock_guard lock(mutex_);
    live_ = live;
  }
  if (!live) wake_all();
}

bool ticket_event_feed::live() const {
  std::lock_guard lock(mutex_);
  return live_;
}

void ticket_event_feed::wake_all() {
  std::vector<std::function<void()>> to_wake;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [id, f] : followers_) to_wake.push_back(f.wake);
  }
  for (const auto& wake : to_wake) wake();
}

bool ticket_event_feed::closing() const {
  std::lock_guard lock(mutex_);
  return closing_;
}

void ticket_event_feed::continue_from(std::uint64_t last_seq) {
  std::lock_guard lock(mutex_);
  last_seq_ = std::max(last_seq_, last_seq);
}

std::uint64_t ticket_event_feed::last_seq() const {
  std::lock_guard lock(mutex_);
  return last_seq_;
}

std::size_t ticket_event_feed::size() const {
  std::lock_guard lock(mutex_);
  return events_.size();
}

std::size_t ticket_event_feed::followers() const {
  std::lock_guard lock(mutex_);
  return followers_.size();
}

}  // namespace mm::actors
