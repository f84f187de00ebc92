#include "mm/actors/event_stream.hpp"

#include "mm/actors/ticket_codec.hpp"
#include "mm/engine/log.hpp"
#include "mm/storage/name_list.hpp"

namespace mm::actors {

std::optional<ticket_outcome> event_of_row(const journal_event& row,
                                           const std::string& credential) {
  auto o = row.event.empty() ? std::optional<ticket_outcome>(ticket_outcome{})
                             : decode_outcome(row.event);
  if (!o) return std::nullopt;
  if (row.event.empty()) {  // a creation: waiting in its (first) queue
    o->queue = row.queue;
    o->ticket = row.ticket;
  }
  o->credential = row.credential.empty() ? credential : row.credential;
  o->seq = row.seq;
  o->at_unix_ms = row.at_unix_ms;
  return o;
}

std::unordered_map<std::string, contested_news> contested_news_of(
    const std::vector<journal_event>& rows) {
  std::unordered_map<std::string, contested_news> out;
  for (const auto& row : rows) {
    if (row.services.empty()) continue;
    const auto o = event_of_row(row);
    if (!o || o->to_game_server) continue;
    const auto services = split_names(row.services);
    for (std::size_t i = 0; i < services.size(); ++i) {
      if (o->state != session::ticket_state::waiting)
        out[services[i]].outcomes.push_back(*o);
      else if (i > 0)  // the home wrote it
        out[services[i]].guests.push_back(o->ticket);
    }
  }
  return out;
}

std::size_t pull_stream_events(player_store& store, const std::string& stream,
                               ticket_event_feed& feed, std::size_t max,
                               const stream_rows_hook& on_rows) {
  const auto rows = store.read_stream_events(stream, feed.last_seq(), max);
  if (on_rows && !rows.empty()) on_rows(rows);
  std::vector<ticket_outcome> events;
  events.reserve(rows.size());
  for (const auto& row : rows)
    if (auto o = event_of_row(row)) events.push_back(std::move(*o));
  feed.append(events);
  // A row that did not decode still moves the feed past its number.
  if (!rows.empty()) feed.continue_from(rows.back().seq);
  return rows.size();
}

stream_follower::stream_follower(std::shared_ptr<player_store> store, std::string stream,
                                 std::shared_ptr<ticket_event_feed> feed,
                                 std::chrono::milliseconds period, stream_rows_hook on_rows)
    : store_(std::move(store)),
      stream_(std::move(stream)),
      feed_(std::move(feed)),
      period_(period),
      on_rows_(std::move(on_rows)),
      thread_([this] { run(); }) {}

stream_follower::~stream_follower() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void stream_follower::poke() {
  {
    std::lock_guard lock(mutex_);
    poked_ = true;
  }
  wake_.notify_one();
}

void stream_follower::run() {
  // Rows a read takes at most: a long backlog is read in turns this size.
  constexpr std::size_t page = 1024;
  bool failing = false;  // logged once per run of failures
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      if (stopping_) return;
      poked_ = false;
    }
    ++turns_;
    try {
      while (pull_stream_events(*store_, stream_, *feed_, page, on_rows_) == page) {
        std::lock_guard lock(mutex_);
        if (stopping_) return;
      }
      if (failing) log(log_level::info, "events", "the event stream is read again");
      failing = false;
    } catch (const std::exception& e) {
      ++failures_;
      if (!failing)
        log(log_level::error, "events",
            std::string("the event stream could not be read (tried again): ") + e.what());
      failing = true;
    }
    std::unique_lock lock(mutex_);
    wake_.wait_for(lock, period_, [this] { return poked_ || stopping_; });
  }
}

}  // namespace mm::actors
