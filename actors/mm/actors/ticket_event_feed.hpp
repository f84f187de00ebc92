// The ticket events a server has written, for the clients that follow them
// (GET /api/events: a WebSocket or a long-poll). Plain C++, thread-safe: the
// session service appends what the journal committed; any thread reads.
//
// Every event carries the journal's sequence number (one counter per server,
// kept across restarts), so a client that saw event N asks for what came
// after N and gets each later event of its filter exactly once, in order, as
// long as the feed still holds it. The feed holds the newest events up to
// `max_events` and no older than `retention` (the journal keeps the same in
// the store, and a start loads them back): memory is bounded whatever the
// clients do. A reader that asks for events older than the oldest held is
// told so (`page::missed`).
//
// Followers subscribe with a wake-up (called on the appending thread, outside
// the feed's lock: it must only post work elsewhere) and read at their own
// pace; the feed queues nothing per follower.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "mm/actors/session_messages.hpp"

namespace mm::actors {

// Which events a follower sees: those of one credential's tickets (none: an
// admin's, every ticket), in the given queues (empty: every queue).
struct event_filter {
  std::optional<std::string> credential;
  std::vector<std::string> queues;

  bool matches(const ticket_outcome& e) const;
};

class ticket_event_feed {
 public:
  struct limits {
    std::size_t max_events = 100'000;
    std::chrono::milliseconds retention{600'000};
  };
  using event = std::shared_ptr<const ticket_outcome>;

  explicit ticket_event_feed(limits l) : limits_(l) {}

  // Events in sequence order, each newer than every event held (older ones
  // are ignored). Drops what is past the limits, then wakes the followers of
  // the events' credentials and every follower without one.
  void append(const std::vector<ticket_outcome>& events);

  struct page {
    std::vector<event> events;   // after `after`, matching, oldest first
    std::uint64_t last_seq = 0;  // the newest event held (or appended ever)
    bool missed = false;         // events after `after` are no longer held
    bool more = false;           // more matching events follow the page
  };
  // At most `max` matching events after sequence number `after`.
  page read_after(std::uint64_t after, const event_filter& f, std::size_t max) const;

  // A follower of one credential's events (none: of every event), counted
  // as `counted_as` (the caller's own credential; an admin's too, though it
  // follows every event). Nothing when that count is at `max_for_credential`.
  std::optional<std::uint64_t> subscribe(std::optional<std::string> credential,
                                         std::function<void()> wake, std::size_t max_for_credential,
                                         const std::string& counted_as);
  void unsubscribe(std::uint64_t id);

  // The server stops: every follower is woken, and `closing` is true from
  // now on (a long-poll answers at once).
  void close();
  bool closing() const;
  // Whether a session service writes into this feed now: a node of a
  // cluster runs the session queues only while it holds their lease. Going
  // not live (after the last event of a hand-over is in) wakes every
  // follower, who sees it and goes elsewhere. Live from the start.
  void set_live(bool live);
  bool live() const;

  std::uint64_t last_seq() const;
  // The journal's counter at a start: the sequence goes on from there even
  // when retention deleted every event before it (those are then missed).
  void continue_from(std::uint64_t last_seq);
  std::size_t size() const;
  std::size_t followers() const;

 private:
  void drop_old(std::int64_t now_unix_ms);  // with the lock held
  void wake_all();

  struct follower {
    std::optional<std::string> credential;
    std::function<void()> wake;
    std::string counted_as;
  };

  const limits limits_;
  mutable std::mutex mutex_;
  std::deque<event> events_;  // ascending seq
  std::uint64_t last_seq_ = 0;
  bool closing_ = false;
  bool live_ = true;
  std::uint64_t next_follower_ = 1;
  std::unordered_map<std::uint64_t, follower> followers_;
  std::unordered_map<std::string, std::size_t> per_credential_;
};

}  // namespace mm::actors
