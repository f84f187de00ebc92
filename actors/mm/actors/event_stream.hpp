// A node's event feed read from the store (docs/persistence.md, "One
// sequence for several services"): when the session queues run in
// partitions, possibly on other nodes, their events are one stream in the
// store, numbered in commit order; the feed follows it by number, so it
// holds every partition's events in order, each once, whichever node wrote
// them.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "mm/actors/session_messages.hpp"
#include "mm/actors/ticket_event_feed.hpp"
#include "mm/storage/player_store.hpp"

namespace mm::actors {

// The event a row holds (a new ticket's row has no bytes: waiting in its
// first queue); nothing when its bytes do not decode. The credential is the
// row's, or `credential` when the row has none.
std::optional<ticket_outcome> event_of_row(const journal_event& row,
                                           const std::string& credential = {});

// What the events of multi-queue tickets over partitions tell each
// partition they name (journal_event::services): the new tickets that also
// wait in it (a guest's, by public id), and the outcomes of tickets that
// wait in it, whichever partition wrote them.
struct contested_news {
  std::vector<std::uint64_t> guests;
  std::vector<ticket_outcome> outcomes;
};
// The news of the rows that name services, by service (rows that do not
// decode are skipped).
std::unordered_map<std::string, contested_news> contested_news_of(
    const std::vector<journal_event>& rows);

// Appends to `feed` the stream's events after the feed's last, at most
// `max` of them; the number of rows read (some may not decode: they are
// skipped, and the feed goes on past them). `on_rows`, when set, sees every
// row read, in order. Throws mm::error when the store cannot be read.
using stream_rows_hook = std::function<void(const std::vector<journal_event>&)>;
std::size_t pull_stream_events(player_store& store, const std::string& stream,
                               ticket_event_feed& feed, std::size_t max,
                               const stream_rows_hook& on_rows = {});

// A thread that keeps `feed` up with the stream: it reads what is new every
// `period`, and at once when poked (a partition of this node committed
// events). A read that fails is logged and tried again at the next turn:
// the feed's numbers say where it stopped, so nothing is skipped or doubled.
// The first turn reads the stream from its first held event.
class stream_follower {
 public:
  // `on_rows`: as pull_stream_events', on the follower's thread.
  stream_follower(std::shared_ptr<player_store> store, std::string stream,
                  std::shared_ptr<ticket_event_feed> feed, std::chrono::milliseconds period,
                  stream_rows_hook on_rows = {});
  ~stream_follower();  // stops the thread
  stream_follower(const stream_follower&) = delete;
  stream_follower& operator=(const stream_follower&) = delete;

  // Read now (any thread; never blocks on the store).
  void poke();
  // Turns that read the store, and those whose read failed.
  std::uint64_t turns() const { return turns_.load(); }
  std::uint64_t failures() const { return failures_.load(); }

 private:
  void run();

  std::shared_ptr<player_store> store_;
  const std::string stream_;
  std::shared_ptr<ticket_event_feed> feed_;
  const std::chrono::milliseconds period_;
  const stream_rows_hook on_rows_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool poked_ = false, stopping_ = false;
  std::atomic<std::uint64_t> turns_{0}, failures_{0};
  std::thread thread_;  // last: started once the rest is set
};

}  // namespace mm::actors
